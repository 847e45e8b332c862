r"""Exact population metrics, written once for every kernel (Cabannes et al. 2024, Eq. 2).

:math:`E = \sum_x p(x) \cdot \mathbb{1}\{\operatorname{argmax}_y \mathrm{scores}(x) \ne f^*(x)\}`; a
token counts as correct only when its target score is the strict unique maximum (ties are errors).

Head and tail (one definition for closed-form and trained memories): the *head* is the
:math:`\lceil \mathrm{fraction} \cdot N\rceil` most probable tokens (``fraction = 0.1`` unless a
closed-form config sets ``head_fraction``; ties in p broken by token index, lower first), the tail
the rest. For a law sorted by decreasing probability (Zipf, word frequencies) the head is the first
:math:`\lceil N/10\rceil` tokens. The tail error is :math:`\text{error} - \text{head error}`.

Correctness, the same rule everywhere: :func:`wrong_tokens` (torch, (R, N, M) logits),
:func:`correct` and :func:`correct_columns` (numpy tables, the editing study's), and
:func:`strict_argmax` (the answer itself, −1 on a tie: a composed memory reads it).

The sums over tokens are exact, so they do not depend on the order a matrix product adds in
(which changes with the batch shape, the thread count and the device): see
:class:`PopulationError`.
"""

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

HEAD_FRACTION = 0.1


@dataclass(frozen=True)
class PopulationMetrics:
    """Per-run metrics, each of shape (R,)."""

    error: torch.Tensor
    head_error: torch.Tensor
    tail_error: torch.Tensor
    cross_entropy: torch.Tensor  # against the label law L (one-hot f* without label noise)
    finite: torch.Tensor  # bool: every logit of the run is finite
    p_correct: torch.Tensor | None = None  # Σ_x p(x) softmax(logits_x)[f*(x)]


def head_size(n_inputs: int, fraction: float = HEAD_FRACTION) -> int:
    r"""Number of head tokens, :math:`\lceil \mathrm{fraction} \cdot N\rceil`."""
    return math.ceil(fraction * n_inputs)


def head_mask(probs: torch.Tensor, fraction: float = HEAD_FRACTION) -> torch.Tensor:
    r"""(N,) bool: the :math:`\lceil \mathrm{fraction} \cdot N\rceil` most probable tokens of
    ``probs`` (N,), ties by index."""
    order = torch.sort(probs, descending=True, stable=True).indices
    mask = torch.zeros(probs.shape[-1], dtype=torch.bool, device=probs.device)
    mask[order[: head_size(probs.shape[-1], fraction)]] = True
    return mask


def _limbs(values: torch.Tensor, bits: int) -> torch.Tensor:
    r"""Split values in [0, 1] (N,) into integer limbs (N, k):
    :math:`v \approx \sum_j \mathrm{limb}_j\, 2^{-(j+1) \cdot \mathrm{bits}}`.

    Every limb is an integer in :math:`[0, 2^{\mathrm{bits}})`, held exactly in float64. Enough
    limbs are taken to keep 53 bits of the smallest positive value (the truncation is below its last
    bit).
    """
    positive = values[values > 0]
    smallest = float(positive.min()) if positive.numel() else 1.0
    n_limbs = max(1, math.ceil((53 - math.floor(math.log2(smallest))) / bits))
    limbs, rest = [], values.to(torch.float64)
    for _ in range(n_limbs):
        scaled = rest * 2.0**bits  # exact: a power of two
        limb = scaled.floor()
        limbs.append(limb)
        rest = scaled - limb  # exact: the fractional part
    return torch.stack(limbs, dim=1)


class PopulationError:
    r""":math:`\sum_x p(x) \mathrm{wrong}(x)` and its head part, for any batch of 0/1 ``wrong``
    tables.

    The probabilities are split into integer limbs of :math:`52 - \operatorname{bitlen}(N)` bits, so
    every partial sum of one limb over at most N tokens is an integer below 2⁵³: a float64 matrix
    product adds them exactly, in whatever order it chooses. The limb sums are then combined in one
    fixed order. The result is within an ulp of the exact sum and, above all, the same bits whatever
    the batch shape, the thread count or the device (one BLAS call, about the cost of the plain
    ``wrong @ p``).

    probs: (N,) probabilities; head_fraction: see :func:`head_mask`. The limbs are cut on the
    CPU (a few small ops, each a kernel launch and a sync on a GPU) and copied once to each
    device that asks.
    """

    def __init__(self, probs: torch.Tensor, head_fraction: float = HEAD_FRACTION) -> None:
        n = probs.shape[-1]
        probs = probs.to("cpu", torch.float64)
        head = torch.where(head_mask(probs, head_fraction), probs, torch.zeros_like(probs))
        self.bits = 52 - n.bit_length()
        error_limbs, head_limbs = _limbs(probs, self.bits), _limbs(head, self.bits)
        self.n_limbs = (error_limbs.shape[1], head_limbs.shape[1])
        self.limbs = torch.cat([error_limbs, head_limbs], dim=1)  # (N, k_error + k_head)
        self._on: dict[torch.device, torch.Tensor] = {self.limbs.device: self.limbs}

    def limbs_on(self, device: torch.device) -> torch.Tensor:
        """The limbs (N, k) on ``device``, copied there once."""
        if device not in self._on:
            self._on[device] = self.limbs.to(device)
        return self._on[device]

    def _combine(self, sums: Any) -> Any:
        r""":math:`\sum_j \mathrm{sums}[..., j] 2^{-(j+1)\cdot \mathrm{bits}}`, smallest term first
        (fixed order): the same IEEE float64 operations on a torch tensor or a numpy array."""
        total = sums[..., 0] * 0.0
        for j in reversed(range(sums.shape[-1])):
            total = total + sums[..., j] * 2.0 ** (-(j + 1) * self.bits)
        return total

    def __call__(self, wrong: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """wrong: (..., N) bool or 0/1. Returns the error and its head part, each (...) float64."""
        sums = wrong.to(torch.float64) @ self.limbs_on(wrong.device)  # exact integers
        k_error = self.n_limbs[0]
        # a few numbers: on CPU numpy's calls cost a tenth of torch's
        values = sums.numpy() if sums.device.type == "cpu" else sums
        error, head = self._combine(values[..., :k_error]), self._combine(values[..., k_error:])
        return torch.as_tensor(error), torch.as_tensor(head)


def wrong_tokens(
    logits: torch.Tensor, targets: torch.Tensor, *, overwrite: bool = False
) -> torch.Tensor:
    """(R, N) bool: the target logit is not the strict unique maximum (or is not finite).

    logits (R, N, M), targets (N,); ``overwrite``: hide the targets in ``logits`` itself (their
    entries become −∞) instead of in a copy, for large blocks (ops/top1.py)."""
    index = targets.expand(logits.shape[0], -1)[:, :, None]
    target_logit = logits.gather(2, index)
    others = (
        logits.scatter_(2, index, -math.inf) if overwrite else logits.scatter(2, index, -math.inf)
    )
    correct = target_logit[:, :, 0] > others.amax(2)
    return ~correct


def strict_argmax(scores: torch.Tensor) -> torch.Tensor:
    """The index of the strict maximum of the last axis, −1 where the maximum is tied."""
    best, index = scores.max(dim=-1)
    tied = (scores == best[..., None]).sum(-1) > 1
    return torch.where(tied, -1, index)


def correct(scores: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """(N,) bool: the target's score is the strict maximum of its row (ties are errors).

    scores: (N, M); targets: (N,) int."""
    return correct_columns(np.ascontiguousarray(scores.T), targets)


def correct_columns(
    table: np.ndarray, targets: np.ndarray, flat: np.ndarray | None = None
) -> np.ndarray:
    r""":func:`correct` of the transposed table (M, N), in numpy (fast: reductions over the
    short axis; the editing study changes such tables in place). The rule of
    :func:`wrong_tokens`: correct only when the target's score is the strict maximum.

    ``flat``: the flat positions :math:`\mathrm{targets} \cdot N + x` of the targets' scores, if
    known."""
    if flat is None:
        flat = targets * table.shape[1] + np.arange(table.shape[1])
    mine = table.take(flat)
    rest = table.copy()
    rest.put(flat, -np.inf)
    beaten: np.ndarray = mine > rest.max(axis=0)
    return beaten


def population_metrics(
    logits: torch.Tensor,
    targets: torch.Tensor,
    probs: torch.Tensor,
    law: torch.Tensor | None = None,
    population: PopulationError | None = None,
) -> PopulationMetrics:
    r"""Metrics of logits (R, N, M) for targets (N,) int64 and probabilities (N,).

    population: the :class:`PopulationError` of ``probs``, where the caller keeps one (a
    training group evaluates many times against one law); built here otherwise.

    law: the label law L(y|x), (N, M), for label noise; the cross-entropy is
    :math:`\sum_x p(x) \sum_y L(y|x)(-\log \operatorname{softmax}(\mathrm{logits}_x)_y)` (the
    closed-form readout's definition, at β = 1: a trained memory's scale is learned). Default:
    one-hot f*.
    """
    weights = probs.to(torch.float64)
    population = population or PopulationError(weights)
    error, head_error = population(wrong_tokens(logits, targets))
    log_probs = torch.log_softmax(logits.to(torch.float64), dim=2)
    index = targets.expand(logits.shape[0], -1)[:, :, None]
    target_log_prob = log_probs.gather(2, index)[:, :, 0]  # (R, N)
    nll = -target_log_prob if law is None else -(log_probs * law.to(torch.float64)).sum(2)
    return PopulationMetrics(
        error=error,
        head_error=head_error,
        tail_error=error - head_error,
        cross_entropy=(nll * weights).sum(1),
        finite=torch.isfinite(logits).flatten(1).all(1),
        p_correct=(target_log_prob.exp() * weights).sum(1),
    )


__all__ = [
    "HEAD_FRACTION",
    "PopulationError",
    "PopulationMetrics",
    "correct",
    "correct_columns",
    "head_mask",
    "head_size",
    "population_metrics",
    "strict_argmax",
    "wrong_tokens",
]

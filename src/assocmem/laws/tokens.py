r"""Token distributions, targets, i.i.d. samples and their prefix counts (Cabannes et al. 2024; see
the docs: science/model.md).

Conventions: inputs :math:`x \in \{0, \dots, N-1\}` (``n_inputs`` = N), outputs
:math:`y \in \{0, \dots, M-1\}` (``n_outputs`` = M). A sample of size ``T`` (``n_samples``) is drawn
once at the largest T; smaller T are its prefixes, so "more data" curves share one draw and are
monotone in information.
"""

import math
from collections.abc import Sequence

import torch

from assocmem.config.errors import ConfigError
from assocmem.laws.checks import check_token_alpha

SAMPLE_BLOCK = 4096  # uniforms are drawn in blocks of this size so prefixes never depend on T_max


def zipf_probabilities(
    n_inputs: int, alpha: float, dtype: torch.dtype = torch.float64
) -> torch.Tensor:
    r"""Zipf law :math:`p(x) \propto (x+1)^{-\alpha}` over ``n_inputs`` tokens, shape (N,).

    α = 0 is the uniform law :math:`p(x) = 1/N` (every fact equally frequent: the factual-recall
    regime, docs: beyond/facts.md); α < 0 is refused.
    """
    if n_inputs < 1:
        raise ConfigError("n_inputs", f"must be an integer ≥ 1, got {n_inputs}")
    check_token_alpha(alpha)
    weights = torch.arange(1, n_inputs + 1, dtype=torch.float64).pow(-alpha)
    return (weights / weights.sum()).to(dtype)


def normalize_probabilities(probs: Sequence[float] | torch.Tensor) -> torch.Tensor:
    """Validate a user-given probability vector and normalise it to sum 1, shape (N,)."""
    p = torch.as_tensor(probs, dtype=torch.float64).flatten()
    if p.numel() < 1:
        raise ConfigError("probabilities", "must hold at least one value")
    if not torch.isfinite(p).all() or (p < 0).any():
        raise ConfigError("probabilities", "must be finite and ≥ 0")
    total = float(p.sum())
    if total <= 0:
        raise ConfigError("probabilities", "must have a positive sum")
    return p / total


def mod_targets(n_inputs: int, n_outputs: int) -> torch.Tensor:
    r"""The paper's default target :math:`f^*(x) = x \bmod M`, shape (N,), int64."""
    return torch.arange(n_inputs) % n_outputs


def random_targets(n_inputs: int, n_outputs: int, generator: torch.Generator) -> torch.Tensor:
    r"""A seeded random map :math:`f^*: [N] \to [M]` hitting every output (when N ≥ M), shape
    (N,)."""
    perm = torch.randperm(n_inputs, generator=generator)
    targets = torch.empty(n_inputs, dtype=torch.int64)
    # Balanced classes: a random permutation of x mod M.
    targets[perm] = torch.arange(n_inputs) % n_outputs
    return targets


def sample_tokens(probs: torch.Tensor, n_samples: int, generator: torch.Generator) -> torch.Tensor:
    """``n_samples`` i.i.d. draws from ``probs`` (inverse CDF), shape (T,), int64.

    Uniforms come in fixed blocks of :data:`SAMPLE_BLOCK`, so the first T draws are identical
    whatever the total requested: prefix samples are nested.
    """
    cdf = torch.cumsum(probs.to(torch.float64).cpu(), 0)
    cdf = cdf / cdf[-1]
    n_blocks = math.ceil(n_samples / SAMPLE_BLOCK)
    uniforms = (
        torch.cat(
            [
                torch.rand(SAMPLE_BLOCK, generator=generator, dtype=torch.float64)
                for _ in range(n_blocks)
            ]
        )
        if n_blocks
        else torch.empty(0, dtype=torch.float64)
    )
    tokens = torch.searchsorted(cdf, uniforms[:n_samples], right=True)
    return tokens.clamp_(max=probs.numel() - 1)


def prefix_counts(tokens: torch.Tensor, n_inputs: int, sizes: Sequence[int]) -> torch.Tensor:
    """Counts ``n_T(x)`` of every token in the first T samples, for each T in ``sizes``.

    tokens: (T_max,) int64. sizes: non-decreasing, each ≤ T_max. Returns (len(sizes), N) float64.
    """
    counts = torch.zeros(len(sizes), n_inputs, dtype=torch.float64)
    running = torch.zeros(n_inputs, dtype=torch.float64)
    start = 0
    for row, size in enumerate(sizes):
        chunk = tokens[start:size]
        running.index_add_(0, chunk, torch.ones(chunk.numel(), dtype=torch.float64))
        counts[row] = running
        start = size
    return counts


def noisy_labels(
    clean: torch.Tensor, n_outputs: int, noise: float, generator: torch.Generator
) -> torch.Tensor:
    r"""Labels :math:`y = f^*(x)` with probability :math:`1 - \mathrm{noise}`, else uniform over the
    other outputs.

    clean: (T,) int64 targets :math:`f^*(x_t)`. Two uniforms per sample, drawn in fixed blocks, so
    the labels of the first T samples never depend on T_max (nested prefixes). Returns (T,) int64.
    """
    n = clean.numel()
    n_blocks = math.ceil(n / SAMPLE_BLOCK)
    draws = [
        torch.rand(2, SAMPLE_BLOCK, generator=generator, dtype=torch.float64)
        for _ in range(n_blocks)
    ]
    uniforms = torch.cat(draws, dim=1)[:, :n] if draws else torch.empty(2, 0, dtype=torch.float64)
    flip = uniforms[0] < noise
    shift = 1 + (uniforms[1] * (n_outputs - 1)).long().clamp_(max=max(n_outputs - 2, 0))
    return torch.where(flip, (clean + shift) % n_outputs, clean)


def prefix_label_counts(
    tokens: torch.Tensor, labels: torch.Tensor, n_inputs: int, n_outputs: int, sizes: Sequence[int]
) -> torch.Tensor:
    """Counts ``n_T(x, y)`` in the first T samples for each T in ``sizes``: (len(sizes), M, N)."""
    flat = prefix_counts(labels * n_inputs + tokens, n_inputs * n_outputs, sizes)
    return flat.view(len(sizes), n_outputs, n_inputs)


def label_law(targets: torch.Tensor, n_outputs: int, noise: float) -> torch.Tensor:
    """Population label law ``L(y|x)``: f*(x) w.p. 1 − ε, else uniform over the other outputs.

    targets: (N,) int64. Returns (N, M) float64, rows summing to 1 (one-hot when ε = 0).
    """
    onehot = torch.nn.functional.one_hot(targets, n_outputs).to(torch.float64)
    return (1 - noise) * onehot + noise / max(n_outputs - 1, 1) * (1 - onehot)


def majority_labels(law: torch.Tensor, priority: torch.Tensor | None = None) -> torch.Tensor:
    """The one-hot law of each token's most frequent label: the majority vote of its labels.

    law: (..., M, N) label counts or laws ``n(x, y)`` (a token with none stays all zero).
    priority: (M, N) tie-breakers, uniform on [0, 1): among the labels tied at the maximum, the
    one of highest priority wins, so i.i.d. uniform priorities break ties uniformly at random
    (None: the lowest label index wins). Returns (..., M, N) float64 one-hots (zero if unseen).
    """
    top = law.amax(dim=-2, keepdim=True)
    tied = law == top
    key = tied.to(torch.float64) if priority is None else torch.where(tied, 1 + priority, 0.0)
    if priority is None:  # argmax of a 0/1 key returns the first maximum
        key = key * torch.arange(law.shape[-2], 0, -1, dtype=torch.float64)[:, None]
    winner = key.argmax(dim=-2, keepdim=True)  # (..., 1, N)
    onehot = torch.zeros_like(law, dtype=torch.float64).scatter_(-2, winner, 1.0)
    return onehot * (top > 0)


def noisy_error(error: float, noise: float, n_outputs: int) -> float:
    r"""Error against noisy labels of a predictor wrong (vs f*) on mass ``error``.

    A token answered with f*(x) is wrong w.p. ε; one answered with another output w.p.
    :math:`1 - \varepsilon /(M-1)`; so the error is
    :math:`\varepsilon + (1 - \varepsilon M/(M-1)) E`. The Bayes rule is f* (for ε < (M−1)/M) with
    error ε, and the excess error :math:`(1 - \varepsilon M/(M-1)) E` is ∝ E.
    """
    return noise + (1 - noise * n_outputs / (n_outputs - 1)) * error

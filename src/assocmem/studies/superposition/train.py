r"""Parallel memories trained jointly: H heads, logits summed (docs: beyond/superposition.md).

Head h has fixed input embeddings ``E_h`` (N×d_h) and output embeddings ``U_h`` (M×d_h), both
with i.i.d. :math:`\mathcal{N}(0, 1/d_h)` entries, and a learned matrix ``W_h``
(d_h×d_h, initialised :math:`\mathcal{N}(0, 1/d_h)`); the logits are :math:`\sum_h U_h W_h e^h_x`.
Training follows the paper's conventions (Cabannes et al. (2024), Section 4): cross-entropy on the
summed logits, mean over the batch, one pass over T fresh samples in :math:`T/B` steps, SGD (no
momentum; step ``lr``) or sign-like Adam (:math:`\mathrm{Adam}(\beta = (0, 0))`: step
:math:`\mathrm{lr}/d_h \cdot g/(|g| + \varepsilon)`, each head's learning rate divided by its own
d_h as the paper divides W's by d).

A batch of runs that differ only in seed and lr is trained as one tensor program with a
leading run axis R (on one intra-op thread: a run's numbers never depend on its companions).
Each run draws its embeddings, initial matrices and samples from named streams of its seed
(and head, d_h), so runs that differ in lr, optimiser, H or d share their sample sequence.

Specialisation. With the runner-up
:math:`y^*(x) = \operatorname{argmax}_{y \ne f^*(x)} \sum_h s_h(x, y)` of the summed logits, head
h's margin on x is :math:`m_h(x) = s_h(x, f^*(x)) - s_h(x, y^*(x))`: the margins add up to the
memory's margin :math:`\sum_h m_h(x)`. Their participation ratio

.. math::

    \mathrm{PR}(x) = \Big(\sum_h |m_h(x)|\Big)^2 \Big/ \sum_h m_h(x)^2 \in [1, H]

counts the heads that carry x: 1 when one head does (specialised), H when all carry it
equally (superposed); a head whose margin is negative (it fights the answer) counts as
carrying it too.
"""

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import torch

from assocmem.embeddings import draw_embeddings
from assocmem.laws.tokens import mod_targets, sample_tokens, zipf_probabilities
from assocmem.ops.population import PopulationError, wrong_tokens
from assocmem.ops.scores import memory_scores, one_hot_weights
from assocmem.rng import generator
from assocmem.runtime import intra_op_threads
from assocmem.training.memories import Batch, HeadsMemory
from assocmem.training.optimizers import OPTIMIZERS, AbstractOptimizer
from assocmem.training.stop import Steps
from assocmem.training.trainer import Stream, train

HEADS = HeadsMemory()  # the memory trained: H matrix memories, their scores summed
HEAD_OPTIMIZERS = ("sgd", "adam")  # registry names; adam: the paper's sign-like Adam(β = (0, 0))


@dataclass(frozen=True)
class HeadsTraining:
    r"""What the runs of one batch share (they differ only in seed and lr).

    Attributes
    ----------
    n_inputs, n_outputs : int
        N and M (:math:`f^*(x) = x \bmod M`).
    alpha : float
        The Zipf exponent of the data law.
    heads, head_dim : int
        H and d_h.
    n_samples, batch_size : int
        T fresh samples seen once, in batches of B (``T // B`` steps).
    optimizer : {"sgd", "adam"}
        SGD, or the sign-like :math:`\mathrm{Adam}(\beta = (0, 0))` with each head's lr divided by
        its d_h.
    dtype : torch.dtype, default torch.float32
    """

    n_inputs: int
    n_outputs: int
    alpha: float
    heads: int
    head_dim: int
    n_samples: int
    batch_size: int
    optimizer: str
    dtype: torch.dtype = torch.float32

    @property
    def steps(self) -> int:
        return self.n_samples // self.batch_size

    def probabilities(self) -> torch.Tensor:
        return zipf_probabilities(self.n_inputs, self.alpha)

    def optimizer_entry(self) -> AbstractOptimizer:
        """The registry's optimiser of this name at its defaults (Adam: the sign-like
        β = (0, 0))."""
        return OPTIMIZERS[self.optimizer]()

    def lr_factor(self) -> float:
        """Each head's multiplier of the user's lr: :math:`1/d_h` for an optimiser of the paper's
        lr scaling (Adam), 1 otherwise (SGD)."""
        return 1.0 / self.head_dim if self.optimizer_entry().paper_lr_scaling else 1.0


def draw_heads(setting: HeadsTraining, seed: int) -> dict[str, torch.Tensor]:
    """One run's ``E`` (H, N, d_h), ``U`` (H, M, d_h), initial ``W`` (H, d_h, d_h) and samples
    ``tokens`` (T,), each from a named stream of (seed, head, d_h)."""
    s, d = setting, setting.head_dim
    draws: dict[str, list[torch.Tensor]] = {"E": [], "U": [], "W": []}
    for h in range(s.heads):
        gen_in = generator(seed, "superposition/train-inputs", h, s.n_inputs, d)
        gen_out = generator(seed, "superposition/train-outputs", h, s.n_outputs, d)
        gen_init = generator(seed, "superposition/train-init", h, d)
        draws["E"].append(draw_embeddings("gaussian", s.n_inputs, d, gen_in, dtype=s.dtype))
        draws["U"].append(draw_embeddings("gaussian", s.n_outputs, d, gen_out, dtype=s.dtype))
        draws["W"].append(torch.randn(d, d, generator=gen_init, dtype=s.dtype) / math.sqrt(d))
    data = generator(seed, "superposition/data", s.n_inputs, repr(float(s.alpha)))
    tokens = sample_tokens(s.probabilities(), s.steps * s.batch_size, data)
    return {**{k: torch.stack(v) for k, v in draws.items()}, "tokens": tokens}


def summed_logits(E: torch.Tensor, U: torch.Tensor, W: torch.Tensor) -> torch.Tensor:
    r"""Every head's scores of every token, (R, H, N, M), from E (R, H, N, d), U (R, H, M, d)
    and W (R, H, d, d): :math:`s_h(x, y) = (u^h_y)^\top W_h e^h_x`."""
    return E @ (W.transpose(-1, -2) @ U.transpose(-1, -2))


def gradient(
    E: torch.Tensor, U: torch.Tensor, W: torch.Tensor, tokens: torch.Tensor, labels: torch.Tensor
) -> torch.Tensor:
    r"""The gradient of the mean cross-entropy of the summed logits on one batch, (R, H, d, d):
    :class:`~assocmem.training.memories.HeadsMemory`'s. tokens, labels: (R, B)."""
    return HEADS.gradients({"E": E, "U": U, "W": W}, Batch(labels, tokens))[1]["W"]


@dataclass(frozen=True)
class HeadsResult:
    """One trained run: its exact population error and per-token specialisation.

    Attributes
    ----------
    error, head_error : float
        The population 0-1 error and its part on the ⌈N/10⌉ most frequent tokens.
    finite : bool
        Every logit is finite.
    participation : torch.Tensor, shape (N,)
        PR(x) of the per-head margins (module docstring), float64.
    superposed, routed : torch.Tensor, shape (N,)
        PR(x) of the closed-form references on the same embeddings
        (:func:`reference_weights`): :math:`q = p` in every head, and :math:`q = p` routed.
    W : torch.Tensor, shape (H, d_h, d_h)
        The trained matrices (E and U are :func:`draw_heads` of the run's seed).
    """

    error: float
    head_error: float
    finite: bool
    participation: torch.Tensor
    superposed: torch.Tensor
    routed: torch.Tensor
    W: torch.Tensor = field(compare=False, repr=False)


def participation_ratio(scores: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    r"""PR(x) of the per-head margins against the runner-up of the summed scores.

    Parameters
    ----------
    scores : torch.Tensor, shape (..., H, N, M)
        Each head's scores ``s_h(x, y)``.
    targets : torch.Tensor of int, shape (N,)

    Returns
    -------
    torch.Tensor, shape (..., N), float64
        :math:`(\sum_h |m_h|)^2 / \sum_h m_h^2` in [1, H] (1 where every margin is 0).
    """
    scores = scores.to(torch.float64)
    n, m = scores.shape[-2:]
    total = scores.sum(-3)  # (..., N, M)
    index = targets.expand(*total.shape[:-1])[..., None]  # (..., N, 1)
    runner_up = total.scatter(-1, index, -math.inf).argmax(-1, keepdim=True)
    correct = scores.gather(-1, index[..., None, :, :].expand(*scores.shape[:-1], 1))
    rival = scores.gather(-1, runner_up[..., None, :, :].expand(*scores.shape[:-1], 1))
    margins = (correct - rival)[..., 0]  # (..., H, N)
    square = margins.square().sum(-2)
    ratio = margins.abs().sum(-2).square() / square.clamp(min=1e-300)
    return torch.where(square > 0, ratio, torch.ones_like(ratio))


def stored_scores(E: torch.Tensor, U: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
    r"""Scores (R, H, N, M) of the closed-form heads
    :math:`W_h = \sum_x q_h(x)\, u^h_{f^*(x)} (e^h_x)^\top` on the embeddings E (R, H, N, d), U
    (R, H, M, d), for weights q_h (R, H, N)."""
    n, m = E.shape[-2], U.shape[-2]
    stored = one_hot_weights(weights.to(E.dtype), mod_targets(n, m), m)  # diag(q_h) F
    return memory_scores(E, stored[..., None, :], U)[..., 0, :]  # (E (Eᵀ A)) G


def reference_weights(
    probs: torch.Tensor, heads: int, seeds: Sequence[int]
) -> dict[str, torch.Tensor]:
    """The two closed-form references of the specialisation measure, weights (R, H, N):
    ``superposed`` (q = p in every head: what one large-batch gradient step from W = 0 stores)
    and ``routed`` (q = p, each token in one head of a random balanced routing of the run's
    seed)."""
    n = probs.numel()
    routed = []
    for seed in seeds:
        order = torch.randperm(n, generator=generator(seed, "superposition/train-route", heads))
        share = (order % heads)[None, :] == torch.arange(heads)[:, None]  # (H, N)
        routed.append(probs[None, :] * share)
    superposed = probs.expand(len(seeds), heads, n)
    return {"superposed": superposed, "routed": torch.stack(routed)}


def train_heads(
    setting: HeadsTraining, seeds: Sequence[int], lrs: Sequence[float]
) -> list[HeadsResult]:
    """Train one run per (seed, lr) pair of H heads jointly, as one tensor program.

    Parameters
    ----------
    setting : HeadsTraining
        What the runs share.
    seeds, lrs : sequence of int, sequence of float
        Run r has seed ``seeds[r]`` and learning rate ``lrs[r]`` (before the head factor
        :meth:`HeadsTraining.lr_factor`).

    Returns
    -------
    list of HeadsResult
        One per run, in order.

    Notes
    -----
    The optimisation study of Cabannes et al. (2024), Section 4, with H heads; the docs:
    beyond/superposition.md.
    """
    if len(seeds) != len(lrs):
        raise ValueError("train_heads: one lr per seed")
    with intra_op_threads(1):  # a run's numbers never depend on its companions
        draws = [draw_heads(setting, seed) for seed in seeds]
        E, U, W = (torch.stack([draw[k] for draw in draws]) for k in ("E", "U", "W"))
        tokens = torch.stack([draw["tokens"] for draw in draws])  # (R, T)
        targets = mod_targets(setting.n_inputs, setting.n_outputs)
        lr = torch.tensor(lrs, dtype=setting.dtype) * setting.lr_factor()
        B = setting.batch_size

        def batch(step: int) -> Batch:  # one pass over the T fresh samples
            rows = tokens[:, step * B : (step + 1) * B]
            return Batch(targets[rows], rows)

        result = train(
            HEADS, Stream(targets, batch), fixed={"E": E, "U": U, "W": W},
            optimizer=setting.optimizer_entry(), lr=lr, stop=Steps(setting.steps), every=0,
            flush=False,
        )  # fmt: skip
        W = result.state["W"]
        return _results(setting, E, U, W, seeds)


def _results(
    setting: HeadsTraining,
    E: torch.Tensor,
    U: torch.Tensor,
    W: torch.Tensor,
    seeds: Sequence[int],
) -> list[HeadsResult]:
    probs = setting.probabilities()
    targets = mod_targets(setting.n_inputs, setting.n_outputs)
    scores = summed_logits(E, U, W)  # (R, H, N, M)
    total = scores.sum(1)
    error, head_error = PopulationError(probs)(wrong_tokens(total, targets))
    finite = torch.isfinite(total).flatten(1).all(1)
    participation = participation_ratio(scores, targets)
    references = {
        name: participation_ratio(stored_scores(E, U, weights), targets)
        for name, weights in reference_weights(probs, setting.heads, seeds).items()
    }
    return [
        HeadsResult(
            error=float(error[r]),
            head_error=float(head_error[r]),
            finite=bool(finite[r]),
            participation=participation[r],
            superposed=references["superposed"][r],
            routed=references["routed"][r],
            W=W[r].clone(),
        )
        for r in range(E.shape[0])
    ]


def rank_bins(n_inputs: int) -> list[tuple[int, int]]:
    """Frequency-rank bins :math:`[2^k - 1, 2^{k+1} - 1)` (0-based ranks), the last cut at N."""
    bins, low = [], 0
    while low < n_inputs:
        high = min(2 * low + 1, n_inputs)
        bins.append((low, high))
        low = high
    return bins


def binned(values: torch.Tensor, bins: Sequence[tuple[int, int]]) -> list[float]:
    """The mean of ``values`` (N,) over the tokens of each rank bin (tokens ranked by index,
    which is by frequency under Zipf)."""
    return [float(values[low:high].mean()) for low, high in bins]

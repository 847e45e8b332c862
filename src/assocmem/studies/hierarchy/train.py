r"""Memories in series trained end to end through a bottleneck of K learned concepts.

Beyond Cabannes et al. (2024); see the docs: beyond/hierarchy.md. The hierarchy at d₁ = d₂ = h
(h = ⌊d/√2⌋, equal matrix parameters with a direct memory of d) has fixed random embeddings
:math:`e_x \in \mathbb{R}^h` (inputs) and :math:`u_y \in \mathbb{R}^h` (outputs), and learns W₁, W₂
(h×h) and two tables of concept embeddings, the keys ``c_z`` and the values ``c'_z`` (K×h):

.. math::

    a(x) = (c_z^\top W_1 e_x)_z, \quad \pi = \operatorname{softmax}(a), \quad
    v = \sum_z \pi_z c'_z, \quad \mathrm{logits} = (u_y^\top W_2 v)_y,

trained on the cross-entropy of y = f₂(f₁(x)) alone: the concept z is never supervised. At
evaluation the bottleneck is hard, :math:`v = c'_{\hat{z}}` with
:math:`\hat{z} = \operatorname{argmax}_z a_z` (the soft readout is measured too). The direct memory
(:math:`u_y^\top W e_x` at d, W learned) is trained on the same samples.

Does the bottleneck find f₁? The normalised mutual information between ẑ and f₁, weighted by p
(:mod:`assocmem.studies.hierarchy.nmi`; invariant to relabelling the concepts; ≥ 0.9 counts as
found). With f₂(z) = z mod M, the data say nothing of f₁ beyond its residue mod M: f₁ is
identifiable up to a permutation when K = M, and only up to the fibres of f₂ when K > M. The
reference ``nmi_null`` is the NMI of ẑ with a random map f̃₁ that agrees with f₁ mod M.

Optimisation: Adam (β = (0.9, 0.999), ε = 1e-8) on every learned tensor from N(0, 1/h) entries,
``n_steps`` steps of ``batch_size`` samples drawn in order from epochs (fresh permutations) of
the T samples, gradients written out by hand (checked against autograd in the tests). On the CPU
each run is computed on its own, so its numbers never depend on the runs beside it; on CUDA the
trials of a call train side by side (the same functions over a leading run axis).
"""

import math
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, fields, replace
from typing import Any

import torch

from assocmem import rng
from assocmem.config.checks import int_at_least, positive_number
from assocmem.config.errors import ConfigError
from assocmem.config.problem import document_problem, problem_field
from assocmem.laws.tokens import sample_tokens, zipf_probabilities
from assocmem.ops.population import PopulationError, wrong_tokens
from assocmem.runtime import device_numerics, flush_denormals, intra_op_threads, uses_batched_path
from assocmem.studies.hierarchy.memory import CONCEPT_MAPS, draw_concept_map, hierarchy_dim
from assocmem.studies.hierarchy.nmi import nmi_of_runs, null_concept_map
from assocmem.training.memories import (
    SERIES_TENSORS,
    AbstractMemory,
    Batch,
    MatrixMemory,
    SeriesMemory,
    rows_of,
    series_gradients,
)
from assocmem.training.optimizers.registry import OPTIMIZERS
from assocmem.training.stop import Steps
from assocmem.training.trainer import Stream, train

BETAS, EPS = (0.9, 0.999), 1e-8
_HYPER: dict[str, Any] = {"betas": BETAS, "eps": EPS}
ADAM = OPTIMIZERS["adam"](**_HYPER)  # the registry's Adam, configured
SERIES = SeriesMemory()  # the hierarchy: two memories in series through K concepts
DIRECT = MatrixMemory(hidden_first=True)  # the direct memory u_yᵀ W e_x at d
METRICS = (
    "error_hard",  # the hierarchy with the argmax bottleneck
    "error_soft",  # the hierarchy with the softmax bottleneck (as trained)
    "error_direct",  # the direct memory of d
    "nmi",  # NMI(ẑ, f₁), p-weighted
    "nmi_output",  # NMI(ẑ, y)
    "nmi_null",  # NMI(ẑ, f̃₁): a random map agreeing with f₁ mod M
    "concepts_used",  # distinct ẑ over the N tokens
)


@document_problem()
@dataclass(frozen=True)
class BottleneckConfig:
    r"""One trained comparison: the hierarchy at h = ⌊d/√2⌋ and the direct memory at d.

    The Parameters begin with the problem fields ``n_inputs``, ``n_outputs`` and ``alpha``,
    documented once by :class:`~assocmem.config.problem.Problem`.

    Parameters
    ----------
    n_concepts : int, default 5
        K, the number of concepts (:math:`2 \le M \le K \le N`).
    concept_map : {"balanced", "banded"}, default "balanced"
        f₁ (:func:`assocmem.studies.hierarchy.memory.draw_concept_map`).
    dim : int, default 64
        The direct memory's d.
    n_samples : int, default 10000
        T, the training samples (reused over epochs when
        :math:`n_{\mathrm{steps}}\cdot \mathrm{batch\_size} > T`).
    batch_size : int, default 128
        B (at most T).
    n_steps : int, default 1000
    lr : float, default 0.01
        Adam's step, for both models.
    seed : int, default 0
    device : str, default "cpu"
        "cpu": trials in threads, one program each; "cuda": the trials of a call side by side
        in one program on the GPU (:func:`train_trials`).

    Raises
    ------
    ConfigError
        Naming the first invalid field.
    """

    n_inputs: int = problem_field("n_inputs")
    n_concepts: int = 5
    n_outputs: int = problem_field("n_outputs")
    alpha: float = problem_field("alpha")
    concept_map: str = "balanced"
    dim: int = 64
    n_samples: int = 10000
    batch_size: int = 128
    n_steps: int = 1000
    lr: float = 0.01
    seed: int = 0
    device: str = "cpu"

    def __post_init__(self) -> None:
        for name, low in (("n_inputs", 2), ("n_outputs", 2), ("dim", 2), ("n_samples", 1)):
            int_at_least(name, getattr(self, name), low)
        int_at_least("n_concepts", self.n_concepts, self.n_outputs)
        if self.n_concepts > self.n_inputs:
            raise ConfigError("n_concepts", f"must be ≤ n_inputs = {self.n_inputs}")
        int_at_least("batch_size", self.batch_size, 1)
        if self.batch_size > self.n_samples:
            raise ConfigError("batch_size", f"must be ≤ n_samples = {self.n_samples}")
        int_at_least("n_steps", self.n_steps, 1)
        int_at_least("seed", self.seed, 0)
        if self.device not in ("cpu", "cuda"):
            raise ConfigError("device", f"must be cpu or cuda, got {self.device!r}")
        for name in ("alpha", "lr"):
            positive_number(name, getattr(self, name))
        if self.concept_map not in CONCEPT_MAPS:
            raise ConfigError("concept_map", f"{self.concept_map!r}; allowed: {CONCEPT_MAPS}")

    @property
    def hidden(self) -> int:
        """h = ⌊d/√2⌋: the hierarchy's d₁ = d₂ at equal matrix parameters."""
        return hierarchy_dim(self.dim, "matrix", self.n_inputs, self.n_concepts, self.n_outputs)


@dataclass
class Bottleneck:
    """The learned tensors of the hierarchy: W₁ (h, h), keys c_z (K, h), values c'_z (K, h),
    W₂ (h, h)."""

    first: torch.Tensor
    keys: torch.Tensor
    values: torch.Tensor
    second: torch.Tensor

    def tensors(self) -> list[torch.Tensor]:
        return [self.first, self.keys, self.values, self.second]


def bottleneck_gradients(
    model: Bottleneck, inputs: torch.Tensor, outputs: torch.Tensor, labels: torch.Tensor
) -> tuple[torch.Tensor, list[torch.Tensor]]:
    """The mean cross-entropy of a batch and its gradients, written out by hand
    (:func:`~assocmem.training.memories.series_gradients`).

    inputs (..., B, h): the rows e_x of the batch; outputs (..., M, h): u_y; labels (..., B);
    the model's tensors with the same leading axes (none for one run, (R,) for R runs side by
    side). Returns the loss (...) and the gradients in :meth:`Bottleneck.tensors` order.
    """
    loss, _, grads = series_gradients(model.tensors(), inputs, outputs, labels)
    return loss, grads


def direct_gradient(
    matrix: torch.Tensor, inputs: torch.Tensor, outputs: torch.Tensor, labels: torch.Tensor
) -> torch.Tensor:
    r"""The gradient of the mean cross-entropy of :math:`u_y^\top W e_x` in W (..., d, d): the
    direct memory's (:data:`DIRECT`), for the rows ``inputs`` (..., B, d) of a batch."""
    state = {"E": inputs, "U": outputs, "W": matrix}
    return DIRECT.gradients(state, Batch(labels))[1]["W"]


def _batches(cfg: BottleneckConfig, trial: int) -> Iterable[torch.Tensor]:
    """Sample indices of each step: epochs of fresh permutations of the T samples, in order."""
    gen = rng.generator(cfg.seed, "batches", trial)
    pending = torch.empty(0, dtype=torch.int64)
    for _ in range(cfg.n_steps):
        while len(pending) < cfg.batch_size:
            pending = torch.cat([pending, torch.randperm(cfg.n_samples, generator=gen)])
        yield pending[: cfg.batch_size]
        pending = pending[cfg.batch_size :]


def _gaussian(gen: torch.Generator, *shape: int) -> torch.Tensor:
    return torch.randn(*shape, generator=gen, dtype=torch.float32) / math.sqrt(shape[-1])


@dataclass
class Trials:
    """The draws of trials, stacked on a leading axis (R, …), or of one trial without it."""

    f1: torch.Tensor  # the concept map, (N,)
    null: torch.Tensor  # a random map agreeing with f₁ mod M, (N,)
    ids: torch.Tensor  # the tokens of each step's batch, (S, B)
    inputs: torch.Tensor  # e_x, (N, h)
    outputs: torch.Tensor  # u_y, (M, h)
    model: Bottleneck
    direct_inputs: torch.Tensor  # (N, d)
    direct_outputs: torch.Tensor  # (M, d)
    matrix: torch.Tensor  # the direct memory's W, (d, d)

    def map(self, change: Callable[[torch.Tensor], torch.Tensor]) -> "Trials":
        """The trials with ``change`` applied to every tensor (the model's included)."""
        tensors = {f.name: change(getattr(self, f.name)) for f in fields(self) if f.name != "model"}
        return replace(self, **tensors, model=Bottleneck(*map(change, self.model.tensors())))

    @staticmethod
    def stack(draws: "Sequence[Trials]") -> "Trials":
        """Trials drawn one by one, stacked on a new leading axis."""
        first = draws[0]
        tensors = {
            f.name: torch.stack([getattr(t, f.name) for t in draws])
            for f in fields(first)
            if f.name != "model"
        }
        parts = zip(*(t.model.tensors() for t in draws), strict=True)
        return replace(first, **tensors, model=Bottleneck(*(torch.stack(p) for p in parts)))


def draw_trial(cfg: BottleneckConfig, trial: int) -> Trials:
    """One trial's draws, each from its own named stream."""
    n, k, m, h, d = cfg.n_inputs, cfg.n_concepts, cfg.n_outputs, cfg.hidden, cfg.dim
    f1 = draw_concept_map(cfg.concept_map, n, k, cfg.seed, trial)
    tokens = sample_tokens(
        zipf_probabilities(n, cfg.alpha), cfg.n_samples, rng.generator(cfg.seed, "data", trial)
    )
    gen = rng.generator(cfg.seed, "bottleneck_embeddings", trial)
    inputs, outputs = _gaussian(gen, n, h), _gaussian(gen, m, h)
    gen = rng.generator(cfg.seed, "bottleneck_init", trial)
    model = Bottleneck(
        _gaussian(gen, h, h), _gaussian(gen, k, h), _gaussian(gen, k, h), _gaussian(gen, h, h)
    )
    gen = rng.generator(cfg.seed, "direct_embeddings", trial)
    direct_inputs, direct_outputs = _gaussian(gen, n, d), _gaussian(gen, m, d)
    matrix = _gaussian(rng.generator(cfg.seed, "direct_init", trial), d, d)
    null = null_concept_map(f1 % m, k, rng.generator(cfg.seed, "null_map", trial))
    ids = tokens[torch.stack(list(_batches(cfg, trial)))]
    return Trials(f1, null, ids, inputs, outputs, model, direct_inputs, direct_outputs, matrix)


def fit_trials(cfg: BottleneckConfig, trials: Trials) -> None:
    """Adam on the hierarchy, then on the direct memory, one step per batch (the two never
    meet: each its own training by the one trainer); the trained tensors replace the trials'."""
    targets = trials.f1 % cfg.n_outputs
    lr = torch.full((1,), cfg.lr, dtype=trials.inputs.dtype, device=trials.inputs.device)

    def batch(step: int) -> Batch:
        x = trials.ids[..., step, :]
        return Batch(targets.gather(-1, x), x)

    def fit(memory: AbstractMemory, fixed: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        data = Stream(targets, batch)
        stop = Steps(trials.ids.shape[-2])
        return train(memory, data, fixed=fixed, optimizer=ADAM, lr=lr, stop=stop, every=0).state

    model = dict(zip(SERIES_TENSORS, trials.model.tensors(), strict=True))
    learned = fit(SERIES, {"E": trials.inputs, "U": trials.outputs, **model})
    trials.model = Bottleneck(*(learned[name] for name in SERIES_TENSORS))
    direct = {"E": trials.direct_inputs, "U": trials.direct_outputs, "W": trials.matrix}
    trials.matrix = fit(DIRECT, direct)["W"]


def evaluate_trials(cfg: BottleneckConfig, trials: Trials) -> list[dict[str, float]]:
    """:data:`METRICS` of each trial."""
    n, model = cfg.n_inputs, trials.model
    probs = zipf_probabilities(n, cfg.alpha).to(trials.f1.device)
    targets = trials.f1 % cfg.n_outputs
    scores = (trials.inputs @ model.first.mT) @ model.keys.mT  # (…, N, K)
    picked = scores.argmax(-1)
    readout = model.second.mT @ trials.outputs.mT  # (…, h, M)
    logits = torch.stack(
        [
            rows_of(model.values, picked) @ readout,
            torch.softmax(scores, dim=-1) @ model.values @ readout,
            (trials.direct_inputs @ trials.matrix.mT) @ trials.direct_outputs.mT,
        ],
        dim=-3,
    ).reshape(-1, n, cfg.n_outputs)  # (3R, N, M): hard, soft, direct of each trial
    three = targets.reshape(-1, n).repeat_interleave(3, dim=0)  # (3R, N)
    errors = PopulationError(probs)(wrong_tokens(logits, three))[0].view(-1, 3)
    runs = picked.reshape(-1, n)
    used = torch.zeros(runs.shape[0], cfg.n_concepts, device=runs.device)
    columns = [
        *errors.unbind(1),
        *(
            nmi_of_runs(runs, other.reshape(-1, n), probs)
            for other in (trials.f1, targets, trials.null)
        ),
        used.scatter_(1, runs, 1.0).sum(1).to(torch.float64),
    ]
    return [dict(zip(METRICS, row, strict=True)) for row in torch.stack(columns, 1).tolist()]


def train_one(cfg: BottleneckConfig, trial: int) -> dict[str, float]:
    """Train the hierarchy and the direct memory on one trial's samples: :data:`METRICS`."""
    trials = draw_trial(cfg, trial)
    fit_trials(cfg, trials)
    return evaluate_trials(cfg, trials)[0]


def train_trials(cfg: BottleneckConfig, trial_ids: Sequence[int]) -> list[dict[str, float]]:
    """The batched path: every trial side by side in one program on ``cfg.device``, a fixed
    number of torch ops per step and per evaluation whatever the number of trials."""
    stacked = Trials.stack([draw_trial(cfg, trial) for trial in trial_ids])
    trials = stacked.map(lambda t: t.to(cfg.device))
    with device_numerics(cfg.device):
        fit_trials(cfg, trials)
        return evaluate_trials(cfg, trials)


def train_bottleneck(
    cfg: BottleneckConfig, trials: Sequence[int] | None = None
) -> list[dict[str, float]]:
    """Train the bottlenecked hierarchy and the direct memory for each trial (seed index).

    Parameters
    ----------
    cfg : BottleneckConfig
    trials : sequence of int, optional
        Default ``[0]``. Each trial draws f₁, the samples, the embeddings and the initial
        tensors from its own streams. On the CPU trials run side by side, one thread each, so
        a trial's numbers never depend on the others; on CUDA (and inside
        :func:`~assocmem.runtime.batched_path`) they train together in one program
        (:func:`train_trials`), the same law to float rounding.

    Returns
    -------
    list of dict
        One per trial: :data:`METRICS` (errors are exact p-weighted population errors).

    Notes
    -----
    Memories in series, beyond Cabannes et al. (2024); see the docs: beyond/hierarchy.md.
    """
    trial_ids = list(trials) if trials is not None else [0]
    if uses_batched_path(cfg.device):
        with torch.no_grad(), flush_denormals():
            return train_trials(cfg, trial_ids)
    workers = max(1, min(len(trial_ids), torch.get_num_threads()))
    with intra_op_threads(1), ThreadPoolExecutor(workers) as pool:
        return list(pool.map(lambda t: _in_thread(cfg, t), trial_ids))


def _in_thread(cfg: BottleneckConfig, trial: int) -> dict[str, float]:
    # Denormals flushed (a per-thread setting): once tokens are learned, softmax tails
    # underflow and subnormal arithmetic is many times slower; only values below 1.2e-38 move.
    with torch.no_grad(), flush_denormals():
        return train_one(cfg, trial)

"""The batched training engine: many runs in one tensor program (ARCHITECTURE.md ideas 2–4).

Runs whose configs agree on everything but ``seed`` and ``lr`` form a group; a group is trained
with a leading run axis R on every tensor and a per-run learning-rate tensor. Each run draws its
own embeddings, samples and initialisation from named streams keyed by its identity, so its
numbers never depend on its batch companions.

A step uses the batch only through the counts ``c(x)`` of each token in it: the mean
cross-entropy over the batch is ``Σ_x c(x)/B · CE(x)``; full-batch training uses ``p(x)`` in
place of ``c(x)/B``. Kernels (chosen by :func:`select_kernel`):

- ``TableSGDKernel`` (matrix model, SGD): the logits ``L = E Wᵀ Uᵀ`` (N×M) are the whole state;
  a step changes them by ``−lr · (E Eᵀ) D (U Uᵀ)`` with ``D`` the count-weighted softmax error
  (N×M). O(N²M) per step whatever d and B.
- ``ProjectedMatrixKernel`` (matrix model, sign-like Adam β = (0, 0), sign-SGD, normalised SGD):
  the state is ``V = Wᵀ Uᵀ`` (d×M). The gradient ``Wᵀ``-side is ``P U`` with ``P = Eᵀ D``
  (d×M, rank ≤ M); its elementwise sign is formed a few runs at a time in reused buffers and
  immediately projected back by ``Uᵀ``. O(d²M) per step, independent of B.
- ``AutogradKernel``: every other model / optimiser / layer-norm combination, by autograd on
  the batched parameters and the batched optimisers of :mod:`assocmem.training.optimizers`.
- ``QUpdateKernel``: the Eq. 16 approximation ``q(x) ← q(x) + c(x) γ / (1 + e^{q(x)}/(M−1))``,
  ``γ = lr / B``, read out as the memory ``W_q = Σ_x q(x) u_{f*(x)} e_xᵀ``.
"""

import math
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.nn.functional as F
from tqdm import tqdm

from assocmem.data import label_law, mod_targets, noisy_error, sample_tokens
from assocmem.embeddings import draw_embeddings
from assocmem.rng import generator
from assocmem.training.config import TrainConfig
from assocmem.training.evaluation import population_metrics
from assocmem.training.labels import batch_label_law, draw_labels
from assocmem.training.models import MODEL_REGISTRY
from assocmem.training.optimizers import (
    NORM_FLOOR,
    OPTIMIZER_REGISTRY,
    lr_factor,
    schedule_factor,
)

DTYPE = torch.float32
MEMORY_BUDGET = 2**29  # bytes of per-run state a chunk of runs may hold (512 MiB)
GRADIENT_ELEMENTS = 2**20  # d×d gradient elements formed at once by the projected kernel


@dataclass
class RunResult:
    """One run's record: its config, status and exact population metrics."""

    config: TrainConfig
    status: str  # "ok" | "diverged" (some logits non-finite; those tokens count as errors)
    error: float
    head_error: float
    tail_error: float
    cross_entropy: float
    curve: list[tuple[int, float]] = field(default_factory=list)  # (step, error)
    snapshots: dict[int, list[list[float]]] = field(default_factory=dict)  # step -> N×M softmax
    p_correct: float = math.nan  # Σ_x p(x) softmax(logits_x)[f*(x)]
    noisy_error: float = math.nan  # error against noisy labels, ε + (1 − εM/(M−1))·error
    bayes_error: float = 0.0  # ε: the error of f*, the Bayes rule, against noisy labels
    excess_error: float = math.nan  # noisy_error − bayes_error

    def to_dict(self) -> dict[str, Any]:
        return {
            "config": self.config.to_dict(),
            "status": self.status,
            "error": self.error,
            "head_error": self.head_error,
            "tail_error": self.tail_error,
            "cross_entropy": self.cross_entropy,
            "p_correct": self.p_correct,
            "noisy_error": self.noisy_error,
            "bayes_error": self.bayes_error,
            "excess_error": self.excess_error,
            "curve": [list(point) for point in self.curve],
            "snapshots": {str(step): table for step, table in self.snapshots.items()},
        }


@dataclass
class RunInputs:
    """Everything random about a group of runs, stacked over the run axis R."""

    E: torch.Tensor  # (R, N, d) input embeddings
    U: torch.Tensor  # (R, M, d) output embeddings
    W: torch.Tensor | None  # (R, d, d) initial memory, None for models without W
    tokens: torch.Tensor | None  # (R, T) samples, None for full batch
    lr: torch.Tensor  # (R,) user learning rates
    labels: torch.Tensor | None = None  # (R, T) noisy labels of the samples, None without noise


def draw_run(cfg: TrainConfig) -> dict[str, torch.Tensor | None]:
    """One run's embeddings, initial W and samples, from its own named streams.

    Streams are keyed by the seed and the shapes only, so runs that differ in lr, optimiser or
    batch size share their embeddings and samples (common random numbers), and B only changes
    how the same sample sequence is cut into batches.
    """
    n, m, d = cfg.n_inputs, cfg.n_outputs, cfg.dim
    dev = cfg.device
    embed = generator(cfg.seed, "embeddings", n, d, device=dev)
    output = generator(cfg.seed, "output_embeddings", m, d, device=dev)
    E = draw_embeddings(cfg.embeddings, n, d, embed, device=dev, dtype=DTYPE)
    U = draw_embeddings(cfg.output_embeddings, m, d, output, device=dev, dtype=DTYPE)
    W: torch.Tensor | None = None
    if cfg.model in ("matrix", "learned"):
        if cfg.init == "zero":
            W = torch.zeros(d, d, device=dev, dtype=DTYPE)
        else:
            init = generator(cfg.seed, "init", d, device=dev)
            W = torch.randn(d, d, generator=init, device=dev, dtype=DTYPE) / math.sqrt(d)
    tokens = labels = None
    if not cfg.full_batch:
        law_id = repr(float(cfg.alpha)) if cfg.words is None else f"words:{cfg.words}"
        data = generator(cfg.seed, "data", n, law_id)
        tokens = sample_tokens(cfg.probabilities(), cfg.steps * cfg.batch_size, data).to(dev)
        labels = draw_labels(cfg, mod_targets(n, m).to(dev)[tokens])
    return {"E": E, "U": U, "W": W, "tokens": tokens, "labels": labels}


def stack_runs(configs: Sequence[TrainConfig]) -> RunInputs:
    draws = [draw_run(cfg) for cfg in configs]

    def stacked(key: str) -> torch.Tensor | None:
        values = [draw[key] for draw in draws]
        tensors = [value for value in values if value is not None]
        return torch.stack(tensors) if len(tensors) == len(values) else None

    E, U = stacked("E"), stacked("U")
    assert E is not None and U is not None
    lr = torch.tensor([cfg.lr for cfg in configs], dtype=DTYPE, device=configs[0].device)
    return RunInputs(
        E=E, U=U, W=stacked("W"), tokens=stacked("tokens"), lr=lr, labels=stacked("labels")
    )


def softmax_error(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """``δ = softmax(logits) − onehot(f*)`` for all N tokens, (R, N, M).

    Floating ``targets`` are a label law L(y|x), (N, M) or (R, N, M): ``δ = softmax − L``.
    """
    if targets.is_floating_point():
        return torch.softmax(logits, dim=2).sub_(targets)
    delta = torch.softmax(logits, dim=2)
    index = targets.expand(logits.shape[0], -1)[:, :, None]
    return delta.scatter_add_(2, index, torch.full_like(delta[:, :, :1], -1.0))


class AbstractKernel(ABC):
    """The state of a group of runs and its optimiser step."""

    def __init__(self, cfg: TrainConfig, inputs: RunInputs, targets: torch.Tensor) -> None:
        self.cfg = cfg
        self.targets = targets  # (N,)
        self.onehot = F.one_hot(targets, cfg.n_outputs).to(DTYPE)  # (N, M) the matrix F

    @abstractmethod
    def logits(self) -> torch.Tensor:
        """Logits of every token, (R, N, M)."""

    @abstractmethod
    def step(self, t: int, tokens: torch.Tensor | None, weights: torch.Tensor, lr: torch.Tensor):
        """Optimiser step t (1-based). tokens: (R, B) or None; weights: (R, N) = c(x)/B or p(x);
        lr: (R,) scheduled learning rates."""


class TableSGDKernel(AbstractKernel):
    """Matrix model under SGD (momentum, weight decay): all linear in W, so track ``E Wᵀ Uᵀ``."""

    def __init__(self, cfg: TrainConfig, inputs: RunInputs, targets: torch.Tensor) -> None:
        super().__init__(cfg, inputs, targets)
        E, U = inputs.E, inputs.U
        assert inputs.W is not None
        self.gram_inputs = torch.bmm(E, E.transpose(1, 2))  # (R, N, N)  E Eᵀ
        self.gram_outputs = torch.bmm(U, U.transpose(1, 2))  # (R, M, M)  U Uᵀ
        self.table = torch.bmm(torch.bmm(E, inputs.W.transpose(1, 2)), U.transpose(1, 2))
        self.buffer: torch.Tensor | None = None

    def logits(self) -> torch.Tensor:
        return self.table

    def step(self, t: int, tokens: torch.Tensor | None, weights: torch.Tensor, lr: torch.Tensor):
        scaled = softmax_error(self.table, self.targets).mul_(weights[:, :, None])
        grad = torch.bmm(self.gram_inputs, torch.bmm(scaled, self.gram_outputs))
        if self.cfg.weight_decay:
            grad.add_(self.table, alpha=self.cfg.weight_decay)
        if self.cfg.momentum:
            if self.buffer is None:
                self.buffer = grad
            else:
                self.buffer.mul_(self.cfg.momentum).add_(grad)
            grad = self.buffer
        self.table.sub_(lr[:, None, None] * grad)


class ProjectedMatrixKernel(AbstractKernel):
    """Matrix model under sign-like Adam, sign-SGD or normalised SGD: track ``V = Wᵀ Uᵀ``."""

    def __init__(self, cfg: TrainConfig, inputs: RunInputs, targets: torch.Tensor) -> None:
        super().__init__(cfg, inputs, targets)
        assert inputs.W is not None
        self.E, self.U = inputs.E, inputs.U
        self.U_t = inputs.U.transpose(1, 2).contiguous()  # (R, d, M)
        self.gram_outputs = torch.bmm(self.U, self.U_t)  # (R, M, M)
        self.V = torch.bmm(inputs.W.transpose(1, 2), self.U_t)  # (R, d, M)
        self.lr_factor = lr_factor(cfg, "W")
        dim = cfg.dim
        # Reused buffers for a few runs' d×d gradients at a time: bounded memory, no page faults.
        self.chunk = max(1, min(inputs.E.shape[0], GRADIENT_ELEMENTS // dim**2))
        self.grad = torch.empty(self.chunk, dim, dim, dtype=DTYPE, device=inputs.E.device)
        self.scratch = torch.empty_like(self.grad)
        shape = (self.chunk, dim, cfg.n_outputs)
        self.change = torch.empty(shape, dtype=DTYPE, device=inputs.E.device)

    def logits(self) -> torch.Tensor:
        return torch.bmm(self.E, self.V)

    def step(self, t: int, tokens: torch.Tensor | None, weights: torch.Tensor, lr: torch.Tensor):
        scaled = softmax_error(self.logits(), self.targets).mul_(weights[:, :, None])
        P = torch.bmm(self.E.transpose(1, 2), scaled)  # (R, d, M); the W-gradient is (P U)ᵀ
        rate = lr * self.lr_factor
        if self.cfg.optimizer == "normalized_sgd":
            norm_sq = (torch.bmm(P.transpose(1, 2), P) * self.gram_outputs).sum((1, 2))
            norm = norm_sq.clamp_min(0).sqrt().clamp_min(NORM_FLOOR)
            self.V.sub_((rate / norm)[:, None, None] * torch.bmm(P, self.gram_outputs))
            return
        for start in range(0, P.shape[0], self.chunk):
            runs = slice(start, start + self.chunk)
            n = P[runs].shape[0]
            grad, scratch, change = self.grad[:n], self.scratch[:n], self.change[:n]
            torch.bmm(P[runs], self.U[runs], out=grad)  # Gᵀ, (n, d, d)
            if self.cfg.optimizer == "sign_sgd":
                grad.sign_()
            else:  # Adam with betas (0, 0): m = g, v = g², no bias correction left
                grad.div_(torch.abs(grad, out=scratch).add_(self.cfg.eps))
            torch.bmm(grad, self.U_t[runs], out=change)
            self.V[runs].sub_(rate[runs, None, None] * change)


class AutogradKernel(AbstractKernel):
    """Any model and optimiser: autograd through the batched model, batched optimiser step."""

    def __init__(self, cfg: TrainConfig, inputs: RunInputs, targets: torch.Tensor) -> None:
        super().__init__(cfg, inputs, targets)
        self.model = MODEL_REGISTRY[cfg.model]
        self.optimizer = OPTIMIZER_REGISTRY[cfg.optimizer](cfg)
        self.state = {"E": inputs.E.clone(), "U": inputs.U.clone()}
        if inputs.W is not None:
            self.state["W"] = inputs.W.clone()
        self.lr_factors = {name: lr_factor(cfg, name) for name in self.model.learned}
        runs, n = inputs.E.shape[0], cfg.n_inputs
        self.all_rows = torch.arange(n, device=inputs.E.device).expand(runs, n)

    def logits(self) -> torch.Tensor:
        with torch.no_grad():
            return self.model.logits(self.state, self.all_rows, normalize=self.cfg.layer_norm)

    def loss(self, tokens: torch.Tensor | None, weights: torch.Tensor) -> torch.Tensor:
        """Sum over runs of each run's mean batch cross-entropy (or population loss)."""
        # Few samples: evaluate the batch rows; otherwise every token once, weighted by counts.
        by_rows = tokens is not None and tokens.shape[1] < self.cfg.n_inputs
        rows = tokens if by_rows and tokens is not None else self.all_rows
        logits = self.model.logits(self.state, rows, normalize=self.cfg.layer_norm)
        ce = F.cross_entropy(
            logits.flatten(0, 1), self.targets[rows].flatten(), reduction="none"
        ).view(rows.shape)
        return ce.mean(1).sum() if by_rows else (ce * weights).sum()

    def step(self, t: int, tokens: torch.Tensor | None, weights: torch.Tensor, lr: torch.Tensor):
        names = self.model.learned
        params = [self.state[name].requires_grad_(True) for name in names]
        grads = torch.autograd.grad(self.loss(tokens, weights), params)
        with torch.no_grad():
            for name, grad in zip(names, grads, strict=True):
                param = self.state[name].requires_grad_(False)
                self.optimizer.step(name, param, grad, lr * self.lr_factors[name], t)


class LabelLawAutogradKernel(AutogradKernel):
    """:class:`AutogradKernel` whose ``targets`` is a label law L (N, M) or (R, N, M) (noisy
    labels): the loss is ``Σ_x w(x) Σ_y L(y|x)(−log softmax_y)`` over every token."""

    def loss(self, tokens: torch.Tensor | None, weights: torch.Tensor) -> torch.Tensor:
        logits = self.model.logits(self.state, self.all_rows, normalize=self.cfg.layer_norm)
        ce = -(torch.log_softmax(logits, dim=2) * self.targets).sum(2)  # (R, N)
        return (ce * weights).sum()


class QUpdateKernel(AbstractKernel):
    """Eq. 16: each occurrence of x adds ``γ / (1 + e^{q(x)}/(M−1))`` to q(x), ``γ = lr/B``."""

    def __init__(self, cfg: TrainConfig, inputs: RunInputs, targets: torch.Tensor) -> None:
        super().__init__(cfg, inputs, targets)
        E, U = inputs.E, inputs.U
        self.gram_inputs = torch.bmm(E, E.transpose(1, 2))  # (R, N, N)
        self.gram_outputs = torch.bmm(U, U.transpose(1, 2))  # (R, M, M)
        self.q = torch.zeros(E.shape[0], cfg.n_inputs, dtype=DTYPE, device=E.device)

    def logits(self) -> torch.Tensor:
        stored = self.q[:, :, None] * self.onehot  # (R, N, M): q(x) at column f*(x)
        return torch.bmm(self.gram_inputs, torch.bmm(stored, self.gram_outputs))

    def step(self, t: int, tokens: torch.Tensor | None, weights: torch.Tensor, lr: torch.Tensor):
        # weights = c(x)/B, so c(x)·γ = weights · lr.
        gain = 1.0 / (1.0 + torch.exp(self.q) / (self.cfg.n_outputs - 1))
        self.q.add_(weights * lr[:, None] * gain)


def select_kernel(cfg: TrainConfig, *, fast: bool = True) -> type[AbstractKernel]:
    """The cheapest kernel that computes this config's runs exactly (up to rounding)."""
    if cfg.model == "qupdate":
        return QUpdateKernel
    plain_matrix = cfg.model == "matrix" and not cfg.layer_norm
    if fast and plain_matrix and cfg.optimizer == "sgd":
        return TableSGDKernel
    sign_like = cfg.optimizer in ("sign_sgd", "normalized_sgd") or (
        cfg.optimizer == "adam" and cfg.betas == (0.0, 0.0)
    )
    if fast and plain_matrix and sign_like and not cfg.weight_decay:
        return ProjectedMatrixKernel
    return AutogradKernel


def kernel_class(cfg: TrainConfig, *, fast: bool = True) -> type[AbstractKernel]:
    """:func:`select_kernel`, with the label-law loss for autograd runs with noisy labels."""
    cls = select_kernel(cfg, fast=fast)
    return LabelLawAutogradKernel if cfg.label_noise and cls is AutogradKernel else cls


def step_weights(
    tokens: torch.Tensor | None, probs: torch.Tensor, runs: int, batch_size: int
) -> torch.Tensor:
    """(R, N): ``c(x)/B`` for a batch of tokens (R, B), or ``p(x)`` for full batch."""
    if tokens is None:
        return probs.expand(runs, -1)
    counts = torch.zeros(runs, probs.shape[0], dtype=DTYPE, device=probs.device)
    counts.scatter_add_(1, tokens, torch.ones_like(tokens, dtype=DTYPE))
    return counts / batch_size


def train_group(
    configs: Sequence[TrainConfig], *, fast: bool = True, progress: tqdm | None = None
) -> list[RunResult]:
    """Train runs sharing one :meth:`TrainConfig.batch_key` in one tensor program."""
    return run_group(configs, fast=fast, progress=progress)[0]


def run_group(
    configs: Sequence[TrainConfig], *, fast: bool = True, progress: tqdm | None = None
) -> tuple[list[RunResult], torch.Tensor]:
    """:func:`train_group`, also returning the final logits of every run, (R, N, M)."""
    cfg = configs[0]
    assert all(c.batch_key() == cfg.batch_key() for c in configs), "mixed group"
    runs = len(configs)
    probs = cfg.probabilities().to(cfg.device, DTYPE)
    targets = mod_targets(cfg.n_inputs, cfg.n_outputs).to(cfg.device)
    law = label_law(targets, cfg.n_outputs, cfg.label_noise).to(DTYPE)  # (N, M)
    inputs = stack_runs(configs)
    kernel = kernel_class(cfg, fast=fast)(cfg, inputs, targets)
    if cfg.label_noise and cfg.full_batch:
        kernel.targets = law  # the expected gradient over noisy labels
    curves: list[list[tuple[int, float]]] = [[] for _ in configs]
    snapshots: list[dict[int, list[list[float]]]] = [{} for _ in configs]

    def record(step: int) -> None:
        if cfg.eval_every and step % cfg.eval_every == 0:
            errors = population_metrics(kernel.logits(), targets, probs).error.tolist()
            for curve, value in zip(curves, errors, strict=True):
                curve.append((step, value))
        if step in cfg.snapshot_steps:
            scores = torch.softmax(kernel.logits().double(), dim=2).tolist()
            for snap, table in zip(snapshots, scores, strict=True):
                snap[step] = table

    record(0)
    B = cfg.batch_size
    for t in range(cfg.steps):
        tokens = None if inputs.tokens is None else inputs.tokens[:, t * B : (t + 1) * B]
        weights = step_weights(tokens, probs, runs, B)
        if inputs.labels is not None and tokens is not None:  # noisy samples
            labels = inputs.labels[:, t * B : (t + 1) * B]
            kernel.targets = batch_label_law(tokens, labels, cfg.n_inputs, cfg.n_outputs)
        kernel.step(t + 1, tokens, weights, inputs.lr * schedule_factor(cfg, t))
        record(t + 1)
        if progress is not None:
            progress.update(runs)
    final_logits = kernel.logits()
    final = population_metrics(final_logits, targets, probs, law=law)
    results = []
    for r, run_cfg in enumerate(configs):
        finite = bool(final.finite[r])
        results.append(
            RunResult(
                config=run_cfg,
                status="ok" if finite else "diverged",
                error=float(final.error[r]),
                head_error=float(final.head_error[r]),
                tail_error=float(final.tail_error[r]),
                cross_entropy=float(final.cross_entropy[r]) if finite else math.nan,
                curve=curves[r],
                snapshots=snapshots[r],
                **noisy_fields(float(final.error[r]), cfg),
                p_correct=float(final.p_correct[r]) if final.p_correct is not None else math.nan,
            )
        )
    return results, final_logits


def noisy_fields(error: float, cfg: TrainConfig) -> dict[str, float]:
    """Error against noisy labels, Bayes error ε and excess error (the closed-form definitions)."""
    noisy = noisy_error(error, cfg.label_noise, cfg.n_outputs)
    return {
        "noisy_error": noisy,
        "bayes_error": cfg.label_noise,
        "excess_error": noisy - cfg.label_noise,
    }


def state_bytes(cfg: TrainConfig) -> int:
    """Rough bytes one run of this config holds while training (for chunking)."""
    d, n, m = cfg.dim, cfg.n_inputs, cfg.n_outputs
    per_run = n * n + n * d + m * d + 4 * n * m
    if select_kernel(cfg) is AutogradKernel:
        per_run += 8 * d * d + 4 * max(n, min(cfg.batch_size, n)) * d
    elif select_kernel(cfg) is ProjectedMatrixKernel:
        per_run += 2 * d * d  # the initial W while stacking
    elif cfg.model != "qupdate":
        per_run += d * d
    if not cfg.full_batch:
        per_run += 2 * cfg.n_samples * (2 if cfg.label_noise else 1)  # int64 tokens (and labels)
    return 4 * per_run


def plan(configs: Sequence[TrainConfig], budget: int = MEMORY_BUDGET) -> list[list[int]]:
    """Indices of ``configs`` grouped by batch key, each group cut to fit ``budget`` bytes."""
    groups: dict[tuple[Any, ...], list[int]] = {}
    for index, cfg in enumerate(configs):
        groups.setdefault(cfg.batch_key(), []).append(index)
    chunks = []
    for indices in groups.values():
        size = max(1, budget // state_bytes(configs[indices[0]]))
        chunks += [indices[i : i + size] for i in range(0, len(indices), size)]
    return chunks


def train(
    configs: Sequence[TrainConfig],
    *,
    fast: bool = True,
    progress: bool = False,
    budget: int = MEMORY_BUDGET,
) -> list[RunResult]:
    """Train every config (batched where shapes agree); results in the order of ``configs``."""
    results: list[RunResult | None] = [None] * len(configs)
    total = sum(cfg.steps for cfg in configs)
    with tqdm(total=total, disable=not progress, unit="run-step", leave=False) as bar:
        for chunk in plan(configs, budget):
            for index, result in zip(
                chunk,
                train_group([configs[i] for i in chunk], fast=fast, progress=bar),
                strict=True,
            ):
                results[index] = result
    assert all(r is not None for r in results)
    return [r for r in results if r is not None]

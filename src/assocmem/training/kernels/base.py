"""What every training kernel shares: the run inputs, the softmax error, row helpers, per-run
products, and :class:`AbstractKernel` (state, step, span loop, and its registry contract).

A kernel holds the state of a group of runs (a leading run axis R) and advances it by the
counts :math:`c(x)/B` of each step's batch (or ``p(x)`` for full-batch training). On the CPU a run's
numbers never depend on its batch companions: products formed once per group are formed one
run at a time (:func:`per_run_products`), and the steps taken with torch ops run on one intra-op
thread (torch's batched matmul splits its work by the number of runs R otherwise). On the
batched path (CUDA, or :func:`~assocmem.runtime.batched_path`) every product is one batched
matmul, so a step's number of torch ops does not grow with R; a run's numbers then agree with
its per-run values to float rounding (docs: reproducibility.md).
"""

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import ClassVar

import torch
import torch.nn.functional as F

from assocmem.ops.cross_entropy import softmax_error
from assocmem.runtime import intra_op_threads, uses_batched_path
from assocmem.training import native, native_library
from assocmem.training.config import TrainConfig
from assocmem.training.optimizers import AbstractOptimizer, LinearOptimizer, lr_factor
from assocmem.training.optimizers.base import Step

DTYPE = torch.float32


@dataclass
class RunInputs:
    """Everything random about a group of runs, stacked over the run axis R."""

    E: torch.Tensor  # (R, N, d) input embeddings
    U: torch.Tensor  # (R, M, d) output embeddings
    W: torch.Tensor | None  # (R, d, d) initial memory; None without W or when a product is kept
    W_product: torch.Tensor | None  # ``Wᵀ Uᵀ`` (R, d, M) or ``E Wᵀ`` (R, N, d), see stack_runs
    tokens: torch.Tensor | None  # (R, T) samples, None for full batch
    lr: torch.Tensor  # (R,) user learning rates
    labels: torch.Tensor | None = None  # (R, T) noisy labels of the samples, None without noise
    # each run's own d where the group is zero-padded to a larger d (training/padding.py), else ()
    dims: tuple[int, ...] = ()


def run_lr_factor(cfg: TrainConfig, inputs: RunInputs, param: str) -> float | torch.Tensor:
    """:func:`~assocmem.training.optimizers.lr_factor` of ``param`` for every run: a number where
    the runs share the group's d, else the factors of each run's own d, (R,) float32 (the same
    float32 products with the per-run learning rates as the number gives)."""
    if not inputs.dims:
        return lr_factor(cfg, param)
    factors = [lr_factor(cfg.with_(dim=d), param) for d in inputs.dims]
    return torch.tensor(factors, dtype=DTYPE, device=inputs.lr.device)


def per_run_products(left: torch.Tensor, right: torch.Tensor) -> torch.Tensor:
    """``left[r] @ right[r]`` for every run, (R, a, c) from (R, a, b) and (R, b, c).

    On the CPU one ``mm`` a run on copies in fresh (aligned) memory, so a run's product is the
    same whatever runs share its group (MKL's result depends on the operands' alignment and on
    the batch); on the batched path one ``bmm`` (its op count does not grow with R)."""
    if uses_batched_path(left.device):
        return torch.bmm(left, right)
    return torch.stack([a.clone() @ b.clone() for a, b in zip(left, right, strict=True)])


def gram(X: torch.Tensor) -> torch.Tensor:
    r""":math:`X X^\top` of every run, (R, n, n) from (R, n, d), one run at a time."""
    return per_run_products(X, X.transpose(1, 2))


def weighted_softmax_error(
    logits: torch.Tensor, targets: torch.Tensor, weights: torch.Tensor
) -> torch.Tensor:
    r""":math:`w \delta` of rows (R, b, M) with weights (R, b) and targets (b,) or (R, b): the
    compiled loop where it exists (torch's softmax along a short last axis, M = 5, costs ~70 ns a
    row), else torch ops. Floating targets are a label law (b, M) or (R, b, M) (noisy labels)."""
    if native.supports(logits) and not targets.is_floating_point():
        return native.softmax_error(logits, targets, weights)
    return softmax_error(logits, targets).mul_(weights[:, :, None])


def take_rows(table: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
    """``table[r, rows[r]]`` for every run, (R, b, k), by one index_select."""
    runs, n, width = table.shape
    offsets = torch.arange(runs, device=rows.device)[:, None] * n
    flat = table.reshape(runs * n, width)
    return flat.index_select(0, (rows + offsets).flatten()).view(runs, -1, width)


def scatter_rows(values: torch.Tensor, rows: torch.Tensor, n: int) -> torch.Tensor:
    """(R, n, k) zeros with ``values[r, i]`` added at row ``rows[r, i]`` (repeats add up)."""
    runs, _, width = values.shape
    offsets = torch.arange(runs, device=rows.device)[:, None] * n
    out = torch.zeros(runs * n, width, dtype=values.dtype, device=values.device)
    out.index_add_(0, (rows + offsets).flatten(), values.reshape(-1, width))
    return out.view(runs, n, width)


class AbstractKernel(ABC):
    """The state of a group of runs and its optimiser step.

    Registry contract (see :mod:`assocmem.training.kernels.registry`): :meth:`supports` says
    from the config alone whether the kernel computes it exactly; :meth:`state_elements` and
    :meth:`step_work` size it for planning. Neither compiles anything: whether compiled code
    or torch ops take the steps is decided at construction.
    """

    w_product: ClassVar[str] = ""  # "WU" / "EW": needs only that product of W (see stack_runs)
    # Zero-padding a run's d to a larger one leaves its numbers those of its own d, up to the
    # order of float sums (training/padding.py): nothing reads the padded width.
    pads_exactly: ClassVar[bool] = True
    spans: ClassVar[bool] = False  # advance() takes many steps at once (no per-step targets)

    def __init__(self, cfg: TrainConfig, inputs: RunInputs, targets: torch.Tensor) -> None:
        self.cfg = cfg
        self.optimizer: AbstractOptimizer = cfg.optimizer
        self.targets = targets  # (N,)
        self.onehot = F.one_hot(targets, cfg.n_outputs).to(DTYPE)  # (N, M) the matrix F
        self.slots: dict[str, dict[str, torch.Tensor]] = {}  # optimiser state per parameter
        self.compiled = False  # whether the compiled library takes the steps (set by kernels)

    @classmethod
    @abstractmethod
    def supports(cls, cfg: TrainConfig) -> bool:
        """Whether this kernel computes the config's runs exactly (from the config alone)."""

    @classmethod
    def state_elements(cls, cfg: TrainConfig) -> int:
        """Floats of per-run state beyond the embeddings and tables every kernel holds."""
        return 0

    @classmethod
    def step_work(cls, cfg: TrainConfig) -> int:
        """A rough count of multiply-adds of one run-step (for estimates only)."""
        n, m, d = cfg.n_inputs, cfg.n_outputs, cfg.dim
        return 6 * (min(cfg.batch_size, n) * d * d + n * d * m)

    def describe(self) -> str:
        """The kernel that ran, for provenance: its class, and the compiled library in use
        (:func:`native_library.describe`) when it takes the steps, else "torch ops"."""
        how = native_library.describe() if self.compiled else "torch ops"
        return f"{type(self).__name__} ({how})"

    @abstractmethod
    def logits(self) -> torch.Tensor:
        """Logits of every token, (R, N, M)."""

    @abstractmethod
    def memory_tensors(self) -> dict[str, torch.Tensor]:
        """The tensors that determine the runs' logits, each (R, ...), named as the fields of
        :class:`~assocmem.training.state.TrainedState` (``W``, or the product of W this kernel
        moves; ``E`` and ``U`` where they are learned: the engine adds the fixed ones)."""

    @abstractmethod
    def step(
        self, t: Step, tokens: torch.Tensor | None, weights: torch.Tensor, lr: torch.Tensor
    ) -> None:
        """Optimiser step t (1-based) with torch ops. tokens: (R, B) or None; weights: (R, N) =
        c(x)/B or p(x); lr: (R,) scheduled learning rates."""

    def advance(
        self, t0: int, tokens: torch.Tensor | None, weights: torch.Tensor, lr: torch.Tensor
    ) -> None:
        """Steps t0 + 1 … t0 + S (kernels with ``spans`` take S > 1): tokens (R, S, B) or None;
        weights (R, S, N); lr (R, S). Here, :meth:`step` after step on one thread."""
        with intra_op_threads(1):
            for s in range(lr.shape[1]):
                batch = None if tokens is None else tokens[:, s]
                self.step(t0 + s + 1, batch, weights[:, s], lr[:, s])

    def linear_direction(self, name: str, param: torch.Tensor, grad: torch.Tensor) -> torch.Tensor:
        """The step direction of a linear optimiser (SGD: momentum and weight decay), its state
        kept under ``name``."""
        assert isinstance(self.optimizer, LinearOptimizer)
        return self.optimizer.linear_direction(self.slots.setdefault(name, {}), param, grad)

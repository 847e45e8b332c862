r"""Trained memories of N facts with M = N answers: a linear memory and an MLP key–value
memory, trained full batch by an optimiser of the registry
(:data:`assocmem.training.optimizers.OPTIMIZERS`).

Both read fixed random embeddings E (N×d, inputs) and U (M×d, outputs):

- **linear**: scores :math:`u_y^\top W e_x`, W (d×d) from zero; d² trained parameters;
- **mlp**: scores :math:`u_y^\top W_{\mathrm{out}}\, \sigma(W_{\mathrm{in}} e_x)`, σ = ReLU,
  W_in (h×d) drawn ``N(0, 1/d)``, W_out (d×h) from zero; 2dh trained parameters (h = d/2
  matches the linear memory's d²).

They are the core's memories (:class:`~assocmem.training.memories.MatrixMemory`,
:class:`~assocmem.training.memories.KeyValueMemory`), by this study's names in
:data:`MEMORIES`. The loss is the mean cross-entropy over the N facts (p uniform: every fact
once per step); R independent draws (trials) are one tensor program of batched matmuls, stepped
by the one trainer (:func:`assocmem.training.trainer.train`) with an optimiser of the registry,
so SGD and the paper's sign-like Adam (``betas = (0, 0)``) are the same entries every trainer
uses. The stopping rules are those of :mod:`assocmem.training.memorize` (stop once the best
learning rate's mean accuracy reaches τ; give up when the last window's gain extrapolated to the
budget cannot).
"""

from dataclasses import dataclass

import torch

from assocmem.training.memories import Batch, KeyValueMemory, MatrixMemory
from assocmem.training.memorize import MemorizeResult, stop_rules
from assocmem.training.optimizers import OPTIMIZERS, AbstractOptimizer
from assocmem.training.stop import BestGroupMean, StopRule
from assocmem.training.trainer import FullBatch, train

MEMORIES: dict[str, MatrixMemory | KeyValueMemory] = {
    "linear": MatrixMemory(),
    "mlp": KeyValueMemory(),
}
"""This study's memories by its names: the matrix memory and the MLP key–value memory at
h = d/2 (the core's :data:`~assocmem.training.memories.MEMORIES` holds them as "matrix" and
"mlp")."""
MODELS = tuple(MEMORIES)
Params = dict[str, torch.Tensor]


@dataclass(frozen=True)
class TrainSettings:
    """How a memory is trained: the model, the registry optimiser and its learning rate, the
    step budget and the hopeless rule's window (0: never give up early)."""

    model: str = "linear"  # linear | mlp
    optimizer: str = "adam"  # a name of the optimiser registry; "adam" with betas (0, 0)
    lr: float = 0.05
    max_steps: int = 600
    window: int = 50

    def entry(self) -> AbstractOptimizer:
        """The registry optimiser (Adam as the paper's sign-like Adam, betas (0, 0))."""
        return OPTIMIZERS[self.optimizer]()

    def memory(self) -> MatrixMemory | KeyValueMemory:
        """The memory of ``model``."""
        return MEMORIES[self.model]


def hidden_units(dim: int) -> int:
    """h with ``2 d h = d²``: the MLP's trained parameters match the linear memory's."""
    return KeyValueMemory().hidden_units(dim)


def trained_parameters(model: str, dim: int) -> int:
    """Trained parameters: d² (linear), 2dh (MLP)."""
    return MEMORIES[model].trained_parameters(dim)


def init_params(
    model: str, runs: int, dim: int, generator: torch.Generator, device: torch.device | str = "cpu"
) -> Params:
    """Zero W (linear); W_in ~ N(0, 1/d) and W_out = 0 (MLP). Shapes (R, ·, ·), float32, on
    ``device`` (W_in drawn on the CPU, so every device starts from the same bits)."""
    shape_only = {"E": torch.empty(runs, 0, dim, device=device)}
    return MEMORIES[model].init(shape_only, generator)


def logits_and_grads(
    model: str, params: Params, E: torch.Tensor, U: torch.Tensor, targets: torch.Tensor
) -> tuple[torch.Tensor, Params]:
    """Scores (R, N, M) and the gradients of the mean cross-entropy over the N facts.

    E: (R, N, d); U: (R, M, d); targets: (N,) int64.
    """
    return MEMORIES[model].gradients({"E": E, "U": U, **params}, Batch(targets))


def train_memory(
    E: torch.Tensor,
    U: torch.Tensor,
    targets: torch.Tensor,
    generator: torch.Generator,
    *,
    tau: float,
    settings: TrainSettings,
    lrs: torch.Tensor | None = None,
    groups: int = 1,
    stop: StopRule | None = None,
) -> MemorizeResult:
    """Train R memories (one per draw of E, U) until a group's mean accuracy reaches τ.

    E: (R, N, d); U: (R, M, d); targets: (N,), all on one device (CUDA runs under
    :func:`~assocmem.runtime.device_numerics`: deterministic, TF32 off). ``lrs`` (R,): a
    learning rate per run (default ``settings.lr``); the runs form ``groups`` consecutive equal
    groups (one per learning rate), and training stops once the best group's mean accuracy
    reaches τ, or when none can (the hopeless rule on that best mean); ``stop`` replaces those
    rules (any of :mod:`assocmem.training.stop`, e.g. ``Converged``). Returns each run's
    accuracy (uniform over the N facts; ties count as errors), the steps taken and why it
    stopped.
    """
    rates = torch.full((E.shape[0],), settings.lr, device=E.device) if lrs is None else lrs
    result = train(
        settings.memory(), FullBatch(targets), fixed={"E": E, "U": U},
        optimizer=settings.entry(), lr=rates, generator=generator,
        stop=stop or stop_rules(tau, settings, BestGroupMean(groups)),
    )  # fmt: skip
    return MemorizeResult(result.accuracy, result.steps, result.stopped)

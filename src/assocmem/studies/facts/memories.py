r"""Trained memories of N facts with M = N answers: a linear memory and an MLP key–value
memory, trained full batch by an optimiser of the registry
(:data:`assocmem.training.optimizers.OPTIMIZERS`).

Both read fixed random embeddings E (N×d, inputs) and U (M×d, outputs):

- **linear**: scores :math:`u_y^\top W e_x`, W (d×d) from zero; d² trained parameters;
- **mlp**: scores :math:`u_y^\top W_{\mathrm{out}}\, \sigma(W_{\mathrm{in}} e_x)`, σ = ReLU,
  W_in (h×d) drawn ``N(0, 1/d)``, W_out (d×h) from zero; 2dh trained parameters (h = d/2
  matches the linear memory's d²).

The loss is the mean cross-entropy over the N facts (p uniform: every fact once per step);
R independent draws (trials) are one tensor program of batched matmuls. Gradients are written
out (checked against autograd in the tests); each parameter moves by the registry optimiser's
``step``, so SGD and the paper's sign-like Adam (``betas = (0, 0)``) are the same entries every
trainer uses. The stopping rules are those of :mod:`assocmem.training.memorize` (stop once the
mean accuracy reaches τ; give up when the last window's gain extrapolated to the budget cannot).
"""

from dataclasses import dataclass

import torch

from assocmem.ops.cross_entropy import softmax_error
from assocmem.runtime import device_numerics, flush_denormals
from assocmem.training.memorize import MemorizeResult, accuracy, stop_rule
from assocmem.training.optimizers import OPTIMIZERS, AbstractOptimizer

MODELS = ("linear", "mlp")
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


def hidden_units(dim: int) -> int:
    """h with ``2 d h = d²``: the MLP's trained parameters match the linear memory's."""
    return max(1, dim // 2)


def trained_parameters(model: str, dim: int) -> int:
    """Trained parameters: d² (linear), 2dh (MLP)."""
    return dim * dim if model == "linear" else 2 * dim * hidden_units(dim)


def init_params(
    model: str, runs: int, dim: int, generator: torch.Generator, device: torch.device | str = "cpu"
) -> Params:
    """Zero W (linear); W_in ~ N(0, 1/d) and W_out = 0 (MLP). Shapes (R, ·, ·), float32, on
    ``device`` (W_in drawn on the CPU, so every device starts from the same bits)."""
    if model == "linear":
        return {"W": torch.zeros(runs, dim, dim, device=device)}
    h = hidden_units(dim)
    w_in = torch.randn(runs, h, dim, generator=generator) / dim**0.5
    return {"W_in": w_in.to(device), "W_out": torch.zeros(runs, dim, h, device=device)}


def logits_and_grads(
    model: str, params: Params, E: torch.Tensor, U: torch.Tensor, targets: torch.Tensor
) -> tuple[torch.Tensor, Params]:
    """Scores (R, N, M) and the gradients of the mean cross-entropy over the N facts.

    E: (R, N, d); U: (R, M, d); targets: (N,) int64.
    """
    n = E.shape[1]
    if model == "linear":
        W = params["W"]
        logits = torch.bmm(E, torch.bmm(U, W).transpose(1, 2))  # E (U W)ᵀ
        delta = softmax_error(logits, targets).div_(n)
        grad = torch.bmm(U.transpose(1, 2), torch.bmm(delta.transpose(1, 2), E))  # Uᵀ δᵀ E
        return logits, {"W": grad}
    w_in, w_out = params["W_in"], params["W_out"]
    pre = torch.bmm(E, w_in.transpose(1, 2))  # (R, N, h)
    hidden = pre.clamp(min=0)
    readout = torch.bmm(U, w_out)  # (R, M, h): U W_out
    logits = torch.bmm(hidden, readout.transpose(1, 2))  # (R, N, M)
    delta = softmax_error(logits, targets).div_(n)
    g_out = torch.bmm(delta, U)  # (R, N, d)
    grad_out = torch.bmm(g_out.transpose(1, 2), hidden)  # (R, d, h)
    g_hidden = torch.bmm(delta, readout).mul_(pre > 0)  # (R, N, h)
    grad_in = torch.bmm(g_hidden.transpose(1, 2), E)  # (R, h, d)
    return logits, {"W_in": grad_in, "W_out": grad_out}


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
) -> MemorizeResult:
    """Train R memories (one per draw of E, U) until a group's mean accuracy reaches τ.

    E: (R, N, d); U: (R, M, d); targets: (N,), all on one device (CUDA runs under
    :func:`~assocmem.runtime.device_numerics`: deterministic, TF32 off). ``lrs`` (R,): a
    learning rate per run (default ``settings.lr``); the runs form ``groups`` consecutive equal
    groups (one per learning rate), and training stops once the best group's mean accuracy
    reaches τ, or when none can (the hopeless rule on that best mean). Returns each run's
    accuracy (uniform over the N facts; ties count as errors), the steps taken and why it
    stopped.
    """
    rates = torch.full((E.shape[0],), settings.lr, device=E.device) if lrs is None else lrs
    with flush_denormals(), device_numerics(E.device):
        return _train(E, U, targets, generator, tau, settings, rates, groups)


def _train(
    E: torch.Tensor,
    U: torch.Tensor,
    targets: torch.Tensor,
    generator: torch.Generator,
    tau: float,
    cfg: TrainSettings,
    lr: torch.Tensor,
    groups: int,
) -> MemorizeResult:
    runs, _, dim = E.shape
    params = init_params(cfg.model, runs, dim, generator, E.device)
    optimizer = cfg.entry()
    slots: dict[str, dict[str, torch.Tensor]] = {name: {} for name in params}
    checkpoint = (0, 0.0)
    for step in range(1, cfg.max_steps + 2):
        logits, grads = logits_and_grads(cfg.model, params, E, U, targets)
        acc = accuracy(logits, targets)
        mean = float(acc.view(groups, -1).mean(1).max())
        stop, checkpoint = stop_rule(step, mean, tau, cfg, checkpoint)
        if stop == "reached" or step > cfg.max_steps:
            break
        if stop is not None:
            return MemorizeResult(acc, step - 1, stop)
        for name, param in params.items():
            optimizer.step(slots[name], param, grads[name], lr, step)
    return MemorizeResult(acc, step - 1, "reached" if stop == "reached" else "budget")

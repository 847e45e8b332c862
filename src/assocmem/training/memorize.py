r"""Full-batch memorisation of N uniformly weighted associations by a trained matrix W.

The capacity frontier of trained memories (issue 7) asks how many associations :math:`x \to f^*(x)`
a memory :math:`f_W(x) = \operatorname{argmax}_y u_y^\top W e_x` with fixed random E (N×d) and U
(M×d) can store at top-1 accuracy ≥ τ when W is optimised by full-batch gradient descent on the mean
cross-entropy (p uniform over the N inputs). This module is that optimiser, batched over R
independent draws (trials) that share N, M and d, with two stopping rules that keep a capacity
search cheap:

- **success**: stop as soon as the accuracy averaged over the R draws reaches τ;
- **hopeless**: every ``window`` steps, extrapolate the last window's gain in mean accuracy
  linearly to the step budget; stop when even that cannot reach τ. Accuracy curves of this
  problem are concave after their first rise, so the linear extrapolation overestimates the
  final accuracy and the rule only cuts runs that would fail anyway (up to noise).

Optimiser: the registry's Adam (``OPTIMIZERS["adam"]``, bias-corrected, betas (0.9, 0.999) by
default; :meth:`AdamSettings.optimizer`) on W from :math:`W = 0`. The logits are
formed as :math:`E (U W)^\top`, O(M d² + N M d) per step instead of the O(N d²) of :math:`E W^\top`:
with a small M this is the difference between seconds and minutes.
"""

import math
from dataclasses import dataclass
from typing import Any, Protocol

import torch

from assocmem.ops.cross_entropy import softmax_error
from assocmem.ops.population import wrong_tokens
from assocmem.runtime import flush_denormals
from assocmem.training.optimizers.base import AbstractOptimizer, Slot
from assocmem.training.optimizers.registry import OPTIMIZERS


@dataclass(frozen=True)
class MemorizeResult:
    """Accuracy of each of the R draws (uniform over N inputs) and the steps taken."""

    accuracy: torch.Tensor  # (R,) float64
    steps: int
    stopped: str  # "reached" (mean accuracy ≥ τ) | "hopeless" | "budget"
    memory: torch.Tensor | None = None  # the trained W (R, d, d), where the trainer keeps it


@dataclass(frozen=True)
class AdamSettings:
    """Full-batch Adam on W: learning rate, betas, eps, step budget and the hopeless rule.

    The step is the optimiser registry's Adam with these betas and eps (:meth:`optimizer`).
    """

    lr: float = 1.0
    betas: tuple[float, float] = (0.9, 0.999)
    eps: float = 1e-8
    max_steps: int = 1000
    window: int = 50  # steps between two checks of the hopeless rule (0: never give up early)

    def optimizer(self) -> AbstractOptimizer:
        """The registry's Adam (``OPTIMIZERS["adam"]``) with these betas and eps."""
        hyper: dict[str, Any] = {"betas": tuple(self.betas), "eps": self.eps}
        return OPTIMIZERS["adam"](**hyper)


def accuracy(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Top-1 accuracy uniform over the N inputs (ties count as errors), (R,) float64."""
    return 1.0 - wrong_tokens(logits, targets).to(torch.float64).mean(1)


def memorize(
    E: torch.Tensor,
    U: torch.Tensor,
    targets: torch.Tensor,
    *,
    tau: float,
    settings: AdamSettings | None = None,
) -> MemorizeResult:
    r"""Train W (R, d, d) from zero by full-batch Adam on the mean cross-entropy over N inputs.

    E: (R, N, d) input embeddings; U: (R, M, d) output embeddings; targets: (N,) int64, f*(x).
    Each step is the registry's Adam (:meth:`AdamSettings.optimizer`), one learning rate per
    draw; the result holds the trained W as ``memory``. Logits :math:`u_y^\top W e_x` for all
    (x, y): :math:`E (U W)^\top`, (R, N, M).

    Subnormal floats are flushed to zero while training (then set back to torch's default):
    once memories are stored, most softmax entries underflow, and subnormal arithmetic made
    CPU steps up to 5× slower (measured at d = 128, N = 1800).
    """
    with flush_denormals():
        return _memorize(E, U, targets, tau, settings or AdamSettings())


def _memorize(
    E: torch.Tensor, U: torch.Tensor, targets: torch.Tensor, tau: float, cfg: AdamSettings
) -> MemorizeResult:
    runs, n, dim = E.shape
    W = E.new_zeros(runs, dim, dim)
    slot: Slot
    optimizer, slot = cfg.optimizer(), {}
    lr = torch.full((runs,), cfg.lr, dtype=W.dtype, device=W.device)  # one rate per run
    U_t = U.transpose(1, 2)  # (R, d, M)
    checkpoint = (0, 0.0)  # (step, mean accuracy) at the last hopeless check
    for step in range(1, cfg.max_steps + 1):
        logits = torch.bmm(E, torch.bmm(U, W).transpose(1, 2))  # (R, N, M)
        acc = accuracy(logits, targets)
        stop, checkpoint = stop_rule(step, float(acc.mean()), tau, cfg, checkpoint)
        if stop is not None:
            return MemorizeResult(acc, step - 1, stop, W)
        delta = softmax_error(logits, targets).div_(n)  # (R, N, M): d(mean CE)/d(logits)
        grad = torch.bmm(U_t, torch.bmm(delta.transpose(1, 2), E))  # Uᵀ Dᵀ E, (R, d, d)
        optimizer.step(slot, W, grad, lr, step)
    logits = torch.bmm(E, torch.bmm(U, W).transpose(1, 2))
    acc = accuracy(logits, targets)
    stopped = "reached" if float(acc.mean()) >= tau else "budget"
    return MemorizeResult(acc, cfg.max_steps, stopped, W)


class StopSettings(Protocol):
    """What the stopping rules read of a training's settings."""

    @property
    def max_steps(self) -> int: ...

    @property
    def window(self) -> int: ...


def stop_rule(
    step: int, mean: float, tau: float, cfg: StopSettings, checkpoint: tuple[int, float]
) -> tuple[str | None, tuple[int, float]]:
    """The two stopping rules before step ``step`` (1-based): ``"reached"`` once the mean
    accuracy is ≥ τ; ``"hopeless"`` when, at a check (every ``cfg.window`` steps), the gain
    since the last check extrapolated to the budget cannot reach τ; else None. Returns the
    verdict and the (step, mean) of the last check."""
    if mean >= tau:
        return "reached", checkpoint
    if cfg.window and (step - 1) % cfg.window == 0 and step > 1:
        gain_rate = (mean - checkpoint[1]) / (step - 1 - checkpoint[0])
        if mean + gain_rate * (cfg.max_steps - step + 1) < tau:
            return "hopeless", checkpoint
        checkpoint = (step - 1, mean)
    return None, checkpoint


def check_settings(settings: AdamSettings) -> None:
    """Raise :class:`ConfigError` naming the first invalid Adam setting."""
    from assocmem.config.errors import ConfigError

    if not (math.isfinite(settings.lr) and settings.lr > 0):
        raise ConfigError("lr", f"must be a finite number > 0, got {settings.lr!r}")
    if isinstance(settings.max_steps, bool) or settings.max_steps < 1:
        raise ConfigError("max_steps", f"must be an integer ≥ 1, got {settings.max_steps!r}")
    if settings.window < 0:
        raise ConfigError("window", f"must be an integer ≥ 0, got {settings.window!r}")
    settings.optimizer().validate()

r"""Full-batch memorisation of N uniformly weighted associations by a trained matrix W.

The capacity frontier of trained memories asks how many associations :math:`x \to f^*(x)`
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

from assocmem.training.memories.matrix import MatrixMemory
from assocmem.training.optimizers.base import AbstractOptimizer
from assocmem.training.optimizers.registry import OPTIMIZERS
from assocmem.training.stop import AnyOf, GiveUp, Mean, Statistic, Steps, TargetAccuracy
from assocmem.training.trainer import FullBatch, train


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
    The matrix memory (:class:`~assocmem.training.memories.MatrixMemory`, logits
    :math:`E (U W)^\top`, (R, N, M)) stepped by the one trainer with the registry's Adam
    (:meth:`AdamSettings.optimizer`), one learning rate per draw, until :func:`stop_rules`
    stop it; the result holds the trained W as ``memory``.
    """
    cfg = settings or AdamSettings()
    lr = torch.full((E.shape[0],), cfg.lr, dtype=E.dtype, device=E.device)  # one rate per run
    result = train(
        MatrixMemory(), FullBatch(targets), fixed={"E": E, "U": U}, optimizer=cfg.optimizer(),
        lr=lr, stop=stop_rules(tau, cfg, Mean()),
    )  # fmt: skip
    return MemorizeResult(result.accuracy, result.steps, result.stopped, result.state["W"])


class StopSettings(Protocol):
    """What the stopping rules read of a training's settings."""

    @property
    def max_steps(self) -> int: ...

    @property
    def window(self) -> int: ...


def stop_rules(tau: float, cfg: StopSettings, statistic: Statistic) -> AnyOf:
    """The capacity searches' stop rules on ``statistic`` of the accuracy, in order:
    ``"reached"`` once it is ≥ τ; ``"budget"`` after ``cfg.max_steps`` steps; ``"hopeless"``
    when, every ``cfg.window`` steps, the gain since the last check extrapolated to the budget
    cannot reach τ (:class:`~assocmem.training.stop.GiveUp`)."""
    return AnyOf(
        TargetAccuracy(tau, statistic),
        Steps(cfg.max_steps),
        GiveUp(tau, cfg.window, cfg.max_steps, statistic),
    )


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

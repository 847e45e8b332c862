r"""Adam with L2 weight decay and bias correction, as ``torch.optim.Adam``.

With ``betas = (0, 0)`` (the paper's sign-like "Adam") ``m = g`` and :math:`\sqrt{v} = |g|` exactly,
so the step is :math:`\mathrm{lr} \cdot g / (|g| + \mathrm{eps})` and needs no state.
"""

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import torch

from assocmem.config.errors import ConfigError
from assocmem.config.hyper import hyper_parameter
from assocmem.training.optimizers.base import (
    AbstractOptimizer,
    Slot,
    Step,
    StepClock,
    check_finite,
    per_run,
    reciprocals,
)


@dataclass(frozen=True)
class Adam(AbstractOptimizer):
    r"""Adam with L2 weight decay and bias correction, as ``torch.optim.Adam``.

    With ``betas = (0, 0)`` (the paper's sign-like "Adam") the step is
    :math:`\mathrm{lr} \cdot g / (|g| + \mathrm{eps})` and needs no state.

    Parameters
    ----------
    betas : tuple of (float, float), default (0.0, 0.0)
        The moment decay rates, each in [0, 1).
    eps : float, default 1e-8
        Added to :math:`\sqrt{v}`.
    weight_decay : float, default 0.0
        λ ≥ 0.

    Notes
    -----
    An entry of :data:`OPTIMIZERS`, a frozen sub-config of :class:`TrainConfig`; its step is
    batched over a leading run axis R with a learning rate per run. The optimisation study of
    Cabannes et al. (2024), Section 4; see the docs: science/optimisation.md.
    """

    name: ClassVar[str] = "adam"
    native_mode: ClassVar[int | None] = 0
    paper_lr_scaling: ClassVar[bool] = True

    betas: tuple[float, float] = hyper_parameter("betas")  # (0, 0): the paper's sign-like Adam
    eps: float = hyper_parameter("eps")
    weight_decay: float = hyper_parameter("weight_decay")

    def validate(self) -> None:
        betas = self.betas
        if not isinstance(betas, tuple) or len(betas) != 2 or any(not (0 <= b < 1) for b in betas):
            raise ConfigError("betas", f"must be two numbers in [0, 1), got {betas!r}")
        check_finite("eps", self.eps)
        if self.eps == 0:
            raise ConfigError("eps", "must be a finite number > 0, got 0")
        super().validate()

    @property
    def sign_like(self) -> bool:
        return self.betas == (0.0, 0.0)

    @property
    def stateless(self) -> bool:
        return self.sign_like and not self.weight_decay

    @property
    def depends_on_step(self) -> bool:
        return not self.sign_like  # the bias corrections 1 − β^t

    def step_divisors(self, t: int) -> tuple[float, ...]:
        beta1, beta2 = self.betas
        return (1 - beta1**t, math.sqrt(1 - beta2**t)) if self.depends_on_step else ()

    def direction(self, grad: torch.Tensor) -> torch.Tensor:
        return grad / (grad.abs() + self.eps)

    def step(
        self, slot: Slot, param: torch.Tensor, grad: torch.Tensor, lr: torch.Tensor, t: Step
    ) -> None:
        beta1, beta2 = self.betas
        grad = self.decayed(param, grad)
        if self.sign_like:  # m = g, v = g² (sqrt(g²) = |g| exactly): no state needed
            # (lr · g) / (|g| + eps): the association the studies' trainers were measured with
            param.sub_(per_run(lr, param) * grad / (grad.abs() + self.eps))
            return
        if not slot:
            slot["m"] = torch.zeros_like(param)
            slot["v"] = torch.zeros_like(param)
        m, v = slot["m"], slot["v"]
        m.lerp_(grad, 1 - beta1)
        v.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        if isinstance(t, StepClock) or param.device.type != "cpu":
            # off the CPU: × the float32 reciprocals of the divisors, as Python numbers in an
            # eager step and from the clock in a replayed one: the same products, same bits
            inverse = t.reciprocals if isinstance(t, StepClock) else reciprocals(self, t)
            denom = (v.sqrt() * inverse[1]).add_(self.eps)
            param.sub_(per_run(lr * inverse[0], param) * (m / denom))
            return
        bias1, bias2 = self.step_divisors(t)
        denom = (v.sqrt() / bias2).add_(self.eps)
        param.sub_(per_run(lr / bias1, param) * (m / denom))

    def torch_optimizer(self, groups: list[dict[str, Any]]) -> torch.optim.Optimizer:
        return torch.optim.Adam(
            groups, betas=self.betas, eps=self.eps, weight_decay=self.weight_decay
        )

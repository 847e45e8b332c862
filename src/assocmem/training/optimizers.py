"""Optimisers batched over a leading run axis, with per-run learning rates (PAPER.md §4).

Each optimiser reproduces the update of its ``torch.optim`` counterpart (SGD with momentum and
weight decay; Adam with L2 weight decay and bias correction), applied to tensors whose first
axis indexes runs, with a learning rate per run. Adam with ``betas = (0, 0)`` is the paper's
sign-like "Adam": its step is ``lr · g / (|g| + eps)``.

Learning-rate convention ``paper``: under Adam, W moves by ``lr / d`` and learned embeddings by
``lr / √d``; every other optimiser uses ``lr`` as given. Convention ``none``: ``lr`` everywhere.
"""

import math
from abc import ABC, abstractmethod
from typing import ClassVar

import torch

from assocmem.training.config import TrainConfig

NORM_FLOOR = 1e-30  # normalised SGD: a zero gradient makes no step instead of 0/0


def lr_factor(cfg: TrainConfig, param: str) -> float:
    """Multiplier of the user's lr for one parameter under the config's convention."""
    if cfg.lr_scaling == "paper" and cfg.optimizer == "adam":
        return 1.0 / cfg.dim if param == "W" else 1.0 / math.sqrt(cfg.dim)
    return 1.0


def schedule_factor(cfg: TrainConfig, step: int) -> float:
    """Learning-rate multiplier at optimiser step ``step`` (0-based), like ``MultiStepLR``."""
    if cfg.schedule == "constant":
        return 1.0
    return cfg.decay_factor ** sum(1 for s in cfg.decay_steps if s <= step)


def per_run(lr: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
    """Reshape per-run values (R,) to broadcast against a state tensor (R, ...)."""
    return lr.reshape(-1, *([1] * (like.dim() - 1)))


class AbstractOptimizer(ABC):
    """Updates one parameter tensor in place from its gradient, keeping its own state."""

    name: ClassVar[str]

    def __init__(self, cfg: TrainConfig) -> None:
        self.cfg = cfg
        self.state: dict[str, dict[str, torch.Tensor]] = {}

    def decayed(self, name: str, param: torch.Tensor, grad: torch.Tensor) -> torch.Tensor:
        if self.cfg.weight_decay:
            return grad.add(param, alpha=self.cfg.weight_decay)
        return grad

    @abstractmethod
    def step(
        self, name: str, param: torch.Tensor, grad: torch.Tensor, lr: torch.Tensor, t: int
    ) -> None:
        """Apply step ``t`` (1-based) to ``param`` (R, ...) with per-run ``lr`` (R,)."""


class SGD(AbstractOptimizer):
    name = "sgd"

    def step(
        self, name: str, param: torch.Tensor, grad: torch.Tensor, lr: torch.Tensor, t: int
    ) -> None:
        grad = self.decayed(name, param, grad)
        if self.cfg.momentum:
            slot = self.state.setdefault(name, {})
            if "buf" not in slot:
                slot["buf"] = grad.clone()
            else:
                slot["buf"].mul_(self.cfg.momentum).add_(grad)
            grad = slot["buf"]
        param.addcmul_(grad, per_run(lr, param), value=-1)


class Adam(AbstractOptimizer):
    name = "adam"

    def step(
        self, name: str, param: torch.Tensor, grad: torch.Tensor, lr: torch.Tensor, t: int
    ) -> None:
        beta1, beta2 = self.cfg.betas
        grad = self.decayed(name, param, grad)
        if beta1 == 0 and beta2 == 0:  # m = g, v = g² (sqrt(g²) = |g| exactly): no state needed
            direction = grad.div_(grad.abs().add_(self.cfg.eps))  # grad is ours to overwrite
            param.addcmul_(direction, per_run(lr, param), value=-1)
            return
        slot = self.state.setdefault(name, {})
        if not slot:
            slot["m"] = torch.zeros_like(param)
            slot["v"] = torch.zeros_like(param)
        m, v = slot["m"], slot["v"]
        m.lerp_(grad, 1 - beta1)
        v.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        bias1 = 1 - beta1**t
        bias2 = 1 - beta2**t
        denom = (v.sqrt() / math.sqrt(bias2)).add_(self.cfg.eps)
        param.sub_(per_run(lr / bias1, param) * (m / denom))


class SignSGD(AbstractOptimizer):
    name = "sign_sgd"

    def step(
        self, name: str, param: torch.Tensor, grad: torch.Tensor, lr: torch.Tensor, t: int
    ) -> None:
        grad = self.decayed(name, param, grad)
        param.addcmul_(grad.sign(), per_run(lr, param), value=-1)


class NormalizedSGD(AbstractOptimizer):
    """``p ← p − lr · g / ‖g‖_F``, the norm taken per run and per parameter tensor."""

    name = "normalized_sgd"

    def step(
        self, name: str, param: torch.Tensor, grad: torch.Tensor, lr: torch.Tensor, t: int
    ) -> None:
        grad = self.decayed(name, param, grad)
        norm = grad.flatten(1).norm(dim=1).clamp_min(NORM_FLOOR)
        param.addcmul_(grad, per_run(lr / norm, param), value=-1)


OPTIMIZER_REGISTRY: dict[str, type[AbstractOptimizer]] = {
    cls.name: cls for cls in (SGD, Adam, SignSGD, NormalizedSGD)
}

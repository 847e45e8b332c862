"""Normalised SGD: ``p ← p − lr · g / ‖g‖_F``, the norm taken per run and parameter tensor."""

from dataclasses import dataclass
from typing import ClassVar

import torch

from assocmem.training.optimizers.base import AbstractOptimizer, Slot, per_run

NORM_FLOOR = 1e-30  # a zero gradient makes no step instead of 0/0


@dataclass(frozen=True)
class NormalizedSGD(AbstractOptimizer):
    name: ClassVar[str] = "normalized_sgd"
    weight_decay: float = 0.0

    @property
    def sign_like(self) -> bool:
        return True

    def step(
        self, slot: Slot, param: torch.Tensor, grad: torch.Tensor, lr: torch.Tensor, t: int
    ) -> None:
        grad = self.decayed(param, grad)
        norm = grad.flatten(1).norm(dim=1).clamp_min(NORM_FLOOR)
        param.addcmul_(grad, per_run(lr / norm, param), value=-1)

"""Sign-SGD: ``p ← p − lr · sign(g + λ p)``."""

from dataclasses import dataclass
from typing import ClassVar

import torch

from assocmem.training.optimizers.base import AbstractOptimizer, Slot, per_run


@dataclass(frozen=True)
class SignSGD(AbstractOptimizer):
    name: ClassVar[str] = "sign_sgd"
    weight_decay: float = 0.0

    @property
    def sign_like(self) -> bool:
        return True

    @property
    def stateless(self) -> bool:
        return not self.weight_decay

    def direction(self, grad: torch.Tensor) -> torch.Tensor:
        return grad.sign()

    def step(
        self, slot: Slot, param: torch.Tensor, grad: torch.Tensor, lr: torch.Tensor, t: int
    ) -> None:
        param.addcmul_(self.decayed(param, grad).sign(), per_run(lr, param), value=-1)

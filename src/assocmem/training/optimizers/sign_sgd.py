r"""Sign-SGD: :math:`p \leftarrow p - \mathrm{lr} \cdot \operatorname{sign}(g + \lambda p)`."""

from dataclasses import dataclass
from typing import ClassVar

import torch

from assocmem.config.hyper import hyper_parameter
from assocmem.training.optimizers.base import AbstractOptimizer, Slot, Step, per_run


@dataclass(frozen=True)
class SignSGD(AbstractOptimizer):
    r"""Sign descent: :math:`p \leftarrow p - \mathrm{lr} \cdot \operatorname{sign}(g + \lambda p)`.

    Parameters
    ----------
    weight_decay : float, default 0.0
        λ ≥ 0.

    Notes
    -----
    An entry of :data:`OPTIMIZERS`, a frozen sub-config of :class:`TrainConfig`; its step is
    batched over a leading run axis R with a learning rate per run. The optimisation study of
    Cabannes et al. (2024), Section 4; see the docs: science/optimisation.md.
    """

    name: ClassVar[str] = "sign_sgd"
    native_mode: ClassVar[int | None] = 1
    weight_decay: float = hyper_parameter("weight_decay")

    @property
    def sign_like(self) -> bool:
        return True

    @property
    def stateless(self) -> bool:
        return not self.weight_decay

    def direction(self, grad: torch.Tensor) -> torch.Tensor:
        return grad.sign()

    def step(
        self, slot: Slot, param: torch.Tensor, grad: torch.Tensor, lr: torch.Tensor, t: Step
    ) -> None:
        param.addcmul_(self.decayed(param, grad).sign(), per_run(lr, param), value=-1)

"""SGD with momentum and weight decay, as ``torch.optim.SGD``."""

from dataclasses import dataclass
from typing import Any, ClassVar

import torch

from assocmem.config.hyper import hyper_parameter
from assocmem.training.optimizers.base import LinearOptimizer, Slot, check_finite


@dataclass(frozen=True)
class SGD(LinearOptimizer):
    r"""SGD with momentum and weight decay, as ``torch.optim.SGD``.

    :math:`\mathrm{buf} \leftarrow \mu \mathrm{buf} + (g + \lambda p)`,
    :math:`p \leftarrow p - \mathrm{lr} \cdot \mathrm{buf}` (:math:`\mathrm{buf} = g + \lambda p`
    without momentum).

    Parameters
    ----------
    momentum : float, default 0.0
        μ in [0, 1).
    weight_decay : float, default 0.0
        λ ≥ 0.

    Notes
    -----
    An entry of :data:`OPTIMIZERS`, a frozen sub-config of :class:`TrainConfig`; its step is
    batched over a leading run axis R with a learning rate per run. The optimisation study of
    Cabannes et al. (2024), Section 4; see the docs: science/optimisation.md.
    """

    name: ClassVar[str] = "sgd"
    native_mode: ClassVar[int | None] = 2

    momentum: float = hyper_parameter("momentum")  # μ
    weight_decay: float = hyper_parameter("weight_decay")  # λ

    def validate(self) -> None:
        check_finite("momentum", self.momentum, high=1.0)
        super().validate()

    @property
    def stateless(self) -> bool:
        return not (self.momentum or self.weight_decay)

    def direction(self, grad: torch.Tensor) -> torch.Tensor:
        return grad

    def linear_direction(self, slot: Slot, param: torch.Tensor, grad: torch.Tensor) -> torch.Tensor:
        grad = self.decayed(param, grad)
        return self.momentum_buffer(slot, grad, self.momentum) if self.momentum else grad

    def torch_optimizer(self, groups: list[dict[str, Any]]) -> torch.optim.Optimizer:
        return torch.optim.SGD(groups, momentum=self.momentum, weight_decay=self.weight_decay)

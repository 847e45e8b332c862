"""SGD with Nesterov momentum, as ``torch.optim.SGD(nesterov=True)``."""

from dataclasses import dataclass
from typing import Any, ClassVar

import torch

from assocmem.config.errors import ConfigError
from assocmem.config.hyper import hyper_parameter
from assocmem.training.optimizers.base import LinearOptimizer, Slot, check_finite


@dataclass(frozen=True)
class NesterovSGD(LinearOptimizer):
    r"""SGD with Nesterov momentum, as ``torch.optim.SGD(nesterov=True)``.

    :math:`g \leftarrow g + \lambda p`, :math:`\mathrm{buf} \leftarrow \mu \mathrm{buf} + g`
    (``buf = g`` first), :math:`p \leftarrow p - \mathrm{lr} (g + \mu \mathrm{buf})`.

    Parameters
    ----------
    momentum : float, default 0.9
        μ in (0, 1).
    weight_decay : float, default 0.0
        λ ≥ 0.

    Notes
    -----
    An entry of :data:`OPTIMIZERS`, a frozen sub-config of :class:`TrainConfig`; its step is
    batched over a leading run axis R with a learning rate per run. The optimisation study of
    Cabannes et al. (2024), Section 4; see the docs: science/optimisation.md.
    """

    name: ClassVar[str] = "nesterov"

    momentum: float = hyper_parameter("momentum", 0.9)  # μ > 0
    weight_decay: float = hyper_parameter("weight_decay")  # λ

    def validate(self) -> None:
        check_finite("momentum", self.momentum, high=1.0)
        if self.momentum == 0:
            raise ConfigError("momentum", "Nesterov momentum must be > 0 (use optimizer = sgd)")
        super().validate()

    def linear_direction(self, slot: Slot, param: torch.Tensor, grad: torch.Tensor) -> torch.Tensor:
        grad = self.decayed(param, grad)
        buffer = self.momentum_buffer(slot, grad, self.momentum)
        return grad.add(buffer, alpha=self.momentum)

    def torch_optimizer(self, groups: list[dict[str, Any]]) -> torch.optim.Optimizer:
        return torch.optim.SGD(
            groups, momentum=self.momentum, weight_decay=self.weight_decay, nesterov=True
        )

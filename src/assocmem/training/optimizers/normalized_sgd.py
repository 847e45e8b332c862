r"""Normalised SGD: :math:`p \leftarrow p - \mathrm{lr} \cdot g / \|g\|_F`, the norm taken per run
and parameter tensor."""

from dataclasses import dataclass
from typing import ClassVar

import torch

from assocmem.config.hyper import hyper_parameter
from assocmem.training.optimizers.base import AbstractOptimizer, Slot, Step, per_run

NORM_FLOOR = 1e-30  # a zero gradient makes no step instead of 0/0


@dataclass(frozen=True)
class NormalizedSGD(AbstractOptimizer):
    r"""Normalised gradient descent: :math:`p \leftarrow p - \mathrm{lr} \cdot g / \|g\|` per run
    and parameter.

    A zero gradient makes no step (the norm is floored at ``NORM_FLOOR``).

    Parameters
    ----------
    weight_decay : float, default 0.0
        λ ≥ 0, added to g before normalising.

    Notes
    -----
    An entry of :data:`OPTIMIZERS`, a frozen sub-config of :class:`TrainConfig`; its step is
    batched over a leading run axis R with a learning rate per run. The optimisation study of
    Cabannes et al. (2024), Section 4; see the docs: science/optimisation.md.
    """

    name: ClassVar[str] = "normalized_sgd"
    weight_decay: float = hyper_parameter("weight_decay")

    @property
    def sign_like(self) -> bool:
        return True

    def step(
        self, slot: Slot, param: torch.Tensor, grad: torch.Tensor, lr: torch.Tensor, t: Step
    ) -> None:
        grad = self.decayed(param, grad)
        norm = grad.flatten(1).norm(dim=1).clamp_min(NORM_FLOOR)
        param.addcmul_(grad, per_run(lr / norm, param), value=-1)

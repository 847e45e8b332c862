r"""The optimiser entry: a frozen sub-config of :class:`~assocmem.training.config.TrainConfig`
holding one optimiser's hyper-parameters, and its step batched over a leading run axis R.

Each entry reproduces the update of its ``torch.optim`` counterpart, applied to tensors whose
first axis indexes runs, with a learning rate per run. Weight decay is L2 added to the
gradient, as ``torch.optim`` does. Entries also tell the kernels what they may exploit:
``linear`` (the step is linear in the gradients and the parameter, so a kernel may track a
linear image of W), ``stateless`` (the step is
:math:`-\mathrm{lr} \cdot \operatorname{direction}(g)` elementwise) and ``sign_like`` (the step
ignores the gradient's scale).
"""

from abc import ABC, abstractmethod
from dataclasses import dataclass, fields
from typing import Any, ClassVar

import numpy as np
import torch

from assocmem.config.errors import ConfigError
from assocmem.config.fields import field_names
from assocmem.config.hyper import RECORDED, hyper_parameter, hyper_parameter_fields

# The optimiser keys of every flat config record (TOML, CLI, records, run hashes), at the value
# a record holds for an optimiser without that hyper-parameter (declared by HyperParameters).
FLAT_DEFAULTS: dict[str, Any] = {name: hyper_parameter_fields()[name].default for name in RECORDED}
Slot = dict[str, torch.Tensor]  # an optimiser's state for one parameter tensor (e.g. momentum)


class StepClock:
    """The step count of a step recorded once as a CUDA graph and replayed
    (:mod:`~assocmem.training.graphs`).

    An optimiser whose step reads t (``depends_on_step``) scales by numbers of t (the
    reciprocals of :meth:`AbstractOptimizer.step_divisors`); a recording would freeze them.
    Under a clock its step reads them from ``reciprocals``, a (k,) float32 device tensor that
    :meth:`set` fills before each replay (one launch per number, no host sync). Off the CPU the
    eager step multiplies by the same float32 numbers (:func:`reciprocals`), so a replayed step
    has the eager step's bits by construction.
    """

    def __init__(self, optimizer: "AbstractOptimizer", device: torch.device | str) -> None:
        self.optimizer = optimizer
        count = len(optimizer.step_divisors(1))
        self.reciprocals = torch.zeros(count, dtype=torch.float32, device=device)

    def set(self, t: int) -> None:
        """Fill the reciprocals of step ``t``."""
        for i, value in enumerate(reciprocals(self.optimizer, t)):
            self.reciprocals[i].fill_(value)


def reciprocals(optimizer: "AbstractOptimizer", t: int) -> tuple[float, ...]:
    r""":math:`\operatorname{fl}(1 / \operatorname{fl}(c))` for each divisor c of step t: float32
    numbers, exact as Python floats."""
    one = np.float32(1.0)
    return tuple(float(one / np.float32(c)) for c in optimizer.step_divisors(t))


Step = int | StepClock  # the step count an optimiser's step reads (1-based)


def per_run(values: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
    """Reshape per-run values (R,) to broadcast against a state tensor (R, ...)."""
    return values.reshape(-1, *([1] * (like.dim() - 1)))


def check_finite(name: str, value: Any, *, low: float = 0.0, high: float | None = None) -> None:
    r"""Raise :class:`ConfigError` unless :math:`\mathrm{low} \le \mathrm{value}` (``< high`` when
    given) and finite."""
    number = isinstance(value, int | float) and not isinstance(value, bool)
    ok = number and value == value and abs(value) != float("inf") and value >= low
    if not ok or (high is not None and value >= high):
        bound = f"in [{low:g}, {high:g})" if high is not None else f"a finite number ≥ {low:g}"
        raise ConfigError(name, f"must be {bound}, got {value!r}")


@dataclass(frozen=True)
class AbstractOptimizer(ABC):
    """An optimiser: its hyper-parameters (the dataclass fields) and its batched step.

    Subclass it as a frozen dataclass with a class attribute ``name`` and a ``step``, then
    :func:`register_optimizer` it (``training/optimizers/nesterov.py`` is the worked example).

    Parameters
    ----------
    weight_decay : float, default 0.0
        L2 weight decay λ, added to the gradient as ``torch.optim`` does.

    Attributes
    ----------
    name : str
        The config name (class attribute).
    native_mode : int or None
        The compiled kernels' mode of its stateless step (class attribute), or None.
    paper_lr_scaling : bool
        Under ``lr_scaling = "paper"``, W moves by lr/d and learned embeddings by lr/√d.
    linear : bool
        The step is linear in the gradients and the parameter (kernels may track a linear image
        of W).

    Notes
    -----
    An entry of :data:`OPTIMIZERS`, a frozen sub-config of :class:`TrainConfig`; its step is
    batched over a leading run axis R with a learning rate per run. The optimisation study of
    Cabannes et al. (2024), Section 4; see the docs: science/optimisation.md.
    """

    name: ClassVar[str]
    paper_lr_scaling: ClassVar[bool] = False  # lr "paper": W moves by lr/d, embeddings lr/√d
    # Its step's shape in the compiled kernels (kernels.c: 0 g/(|g|+eps), 1 sign, 2 g), for a
    # stateless step; None: the compiled kernels do not take it.
    native_mode: ClassVar[int | None] = None
    linear: ClassVar[bool] = False

    weight_decay: float = hyper_parameter("weight_decay")

    def validate(self) -> None:
        """Raise :class:`ConfigError` naming the first invalid hyper-parameter."""
        check_finite("weight_decay", self.weight_decay)

    @property
    def sign_like(self) -> bool:
        r"""Whether the step ignores the gradient's scale (sign, :math:`g / (|g| + \mathrm{eps})`,
        :math:`g / \|g\|`): the projected kernel moves :math:`W^\top U^\top` by the shaped
        gradient."""
        return False

    @property
    def stateless(self) -> bool:
        r"""Whether a step is :math:`-\mathrm{lr} \cdot \operatorname{direction}(g)`, elementwise,
        with no state or decay: rows with a zero gradient do not move."""
        return False

    @property
    def depends_on_step(self) -> bool:
        """Whether a step reads its step count t (beyond its state): it does so only through
        :meth:`step_divisors`, which a replayed step takes from a :class:`StepClock`."""
        return False

    def step_divisors(self, t: int) -> tuple[float, ...]:
        """The numbers of t that step ``t`` divides by (Adam's bias corrections); none unless
        ``depends_on_step``."""
        return ()

    def direction(self, grad: torch.Tensor) -> torch.Tensor:
        """The step direction of a stateless optimiser for a gradient (a new tensor)."""
        raise NotImplementedError(f"{self.name} has no stateless direction")

    def torch_optimizer(self, groups: list[dict[str, Any]]) -> torch.optim.Optimizer:
        """The ``torch.optim`` counterpart over parameter groups (the tests' reference)."""
        raise NotImplementedError(f"{self.name} has no torch.optim counterpart")

    def decayed(self, param: torch.Tensor, grad: torch.Tensor) -> torch.Tensor:
        """The gradient with L2 weight decay added (a new tensor when there is decay)."""
        return grad.add(param, alpha=self.weight_decay) if self.weight_decay else grad

    @abstractmethod
    def step(
        self, slot: Slot, param: torch.Tensor, grad: torch.Tensor, lr: torch.Tensor, t: Step
    ) -> None:
        """Apply step ``t`` (1-based) to ``param`` (R, ...) with per-run ``lr`` (R,); ``slot``
        holds this parameter's state between steps."""

    def flat_values(self) -> dict[str, Any]:
        """The flat record keys: :data:`FLAT_DEFAULTS` overridden by this entry's fields; a
        field outside them (a newer optimiser's) only when it is not at its default."""
        values = dict(FLAT_DEFAULTS)
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name in FLAT_DEFAULTS or value != f.default:
                values[f.name] = value
        return values

    @classmethod
    def hyper_parameters(cls) -> tuple[str, ...]:
        return field_names(cls)


class LinearOptimizer(AbstractOptimizer):
    """A step linear in the gradients and the parameter (SGD with momentum, Nesterov): kernels
    may move a linear image of W (its logit table) by the image of the step."""

    linear = True

    @abstractmethod
    def linear_direction(self, slot: Slot, param: torch.Tensor, grad: torch.Tensor) -> torch.Tensor:
        r"""The step direction d (:math:`\mathrm{param} \mathrel{-}= \mathrm{lr} \cdot d`), updating
        the momentum in ``slot``."""

    def step(
        self, slot: Slot, param: torch.Tensor, grad: torch.Tensor, lr: torch.Tensor, t: Step
    ) -> None:
        param.addcmul_(self.linear_direction(slot, param, grad), per_run(lr, param), value=-1)

    @staticmethod
    def momentum_buffer(slot: Slot, grad: torch.Tensor, momentum: float) -> torch.Tensor:
        r""":math:`\mathrm{buf} \leftarrow \mathrm{momentum} \cdot \mathrm{buf} + g` (``buf = g`` on
        the first step), as ``torch.optim.SGD``."""
        if "buf" not in slot:
            slot["buf"] = grad.clone()
        else:
            slot["buf"].mul_(momentum).add_(grad)
        return slot["buf"]

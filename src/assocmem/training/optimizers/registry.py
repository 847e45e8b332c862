"""Every optimiser by its config name (``optimizer = "…"`` in TOML, ``--optimizers`` on the CLI).

Adding an optimiser: one file with its :class:`AbstractOptimizer` subclass, one line here (or,
from user code, :func:`register_optimizer`).
"""

from dataclasses import is_dataclass
from typing import TypeVar

from assocmem.training.optimizers.adam import Adam
from assocmem.training.optimizers.base import AbstractOptimizer
from assocmem.training.optimizers.nesterov import NesterovSGD
from assocmem.training.optimizers.normalized_sgd import NormalizedSGD
from assocmem.training.optimizers.sgd import SGD
from assocmem.training.optimizers.sign_sgd import SignSGD

OptimizerT = TypeVar("OptimizerT", bound=AbstractOptimizer)

OPTIMIZERS: dict[str, type[AbstractOptimizer]] = {
    entry.name: entry for entry in (SGD, Adam, SignSGD, NormalizedSGD, NesterovSGD)
}
"""The optimisers by config name (``"sgd"``, ``"adam"``, ``"sign_sgd"``, ``"normalized_sgd"``,
``"nesterov"``); :func:`register_optimizer` adds one (docs: tutorials/add-optimizer.md)."""


def register_optimizer(cls: type[OptimizerT]) -> type[OptimizerT]:
    """Add an optimiser entry to :data:`OPTIMIZERS` under its ``name``; usable as a decorator.

    Parameters
    ----------
    cls : type of AbstractOptimizer
        A frozen dataclass subclassing :class:`AbstractOptimizer` (or ``LinearOptimizer``): its
        fields are its hyper-parameters, its ``step`` the batched update, and its class
        attribute ``name`` the config name (``TrainConfig(optimizer=NAME)``).

    Returns
    -------
    type of AbstractOptimizer
        ``cls`` itself.

    Raises
    ------
    TypeError
        If ``cls`` is not a dataclass subclassing :class:`AbstractOptimizer`.
    ValueError
        If another class already holds ``cls.name`` (the same class again is a no-op).

    Notes
    -----
    The optimisation study of Cabannes et al. (2024), Section 4; see the docs:
    science/optimisation.md. ``training/optimizers/nesterov.py`` is the worked example.
    """
    if not (isinstance(cls, type) and issubclass(cls, AbstractOptimizer) and is_dataclass(cls)):
        raise TypeError(f"register_optimizer takes an AbstractOptimizer dataclass, got {cls!r}")
    held = OPTIMIZERS.get(cls.name)
    if held is not None and held is not cls:
        raise ValueError(f"optimizer {cls.name!r} is already registered by {held.__name__}")
    OPTIMIZERS[cls.name] = cls
    return cls

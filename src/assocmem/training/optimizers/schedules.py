"""Learning-rate factors: the paper's per-parameter convention and the step schedule."""

import math
from typing import Protocol

from assocmem.training.optimizers.base import AbstractOptimizer


class LearningRateSettings(Protocol):
    """The fields of a training config these factors read."""

    @property
    def optimizer(self) -> AbstractOptimizer: ...
    @property
    def dim(self) -> int: ...
    @property
    def lr_scaling(self) -> str: ...
    @property
    def schedule(self) -> str: ...
    @property
    def decay_steps(self) -> tuple[int, ...]: ...
    @property
    def decay_factor(self) -> float: ...


def lr_factor(cfg: LearningRateSettings, param: str) -> float:
    r"""Multiplier of the user's lr for one parameter under the config's convention: ``paper``
    moves W by :math:`\mathrm{lr} / d` and embeddings by :math:`\mathrm{lr} / \sqrt{d}` under Adam;
    otherwise ``lr``."""
    if cfg.lr_scaling == "paper" and cfg.optimizer.paper_lr_scaling:
        return 1.0 / cfg.dim if param == "W" else 1.0 / math.sqrt(cfg.dim)
    return 1.0


def schedule_factor(cfg: LearningRateSettings, step: int) -> float:
    """Learning-rate multiplier at optimiser step ``step`` (0-based), like ``MultiStepLR``."""
    if cfg.schedule == "constant":
        return 1.0
    return cfg.decay_factor ** sum(1 for s in cfg.decay_steps if s <= step)

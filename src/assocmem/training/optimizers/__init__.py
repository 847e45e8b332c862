"""Optimisers batched over a leading run axis, with per-run learning rates: one file each, a
registry by config name (:data:`OPTIMIZERS`), and the learning-rate factors."""

from assocmem.training.optimizers.base import (
    FLAT_DEFAULTS,
    AbstractOptimizer,
    LinearOptimizer,
    Slot,
    per_run,
)
from assocmem.training.optimizers.normalized_sgd import NORM_FLOOR
from assocmem.training.optimizers.registry import OPTIMIZERS, register_optimizer
from assocmem.training.optimizers.schedules import lr_factor, schedule_factor

__all__ = [
    "FLAT_DEFAULTS",
    "NORM_FLOOR",
    "OPTIMIZERS",
    "AbstractOptimizer",
    "LinearOptimizer",
    "Slot",
    "lr_factor",
    "per_run",
    "register_optimizer",
    "schedule_factor",
]

"""Trained associative memories: the batched training engine (Cabannes et al. 2024, §5)."""

from assocmem.training.config import TrainConfig
from assocmem.training.engine import train, train_group
from assocmem.training.kernels import select_kernel
from assocmem.training.optimizers import OPTIMIZERS
from assocmem.training.planning import group_runs
from assocmem.training.records import RunResult
from assocmem.training.state import TrainedState

__all__ = [
    "OPTIMIZERS",
    "RunResult",
    "TrainConfig",
    "TrainedState",
    "group_runs",
    "select_kernel",
    "train",
    "train_group",
]

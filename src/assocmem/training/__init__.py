"""Trained associative memories (Cabannes et al. 2024, §5): the batched training engine of
:class:`TrainConfig` runs (:func:`train`), and the memories (:data:`MEMORIES`) that the one
trainer, :func:`assocmem.training.trainer.train`, steps."""

from assocmem.training.config import TrainConfig
from assocmem.training.engine import train, train_group
from assocmem.training.kernels import select_kernel
from assocmem.training.memories import MEMORIES, AbstractMemory, register_memory
from assocmem.training.optimizers import OPTIMIZERS
from assocmem.training.planning import group_runs
from assocmem.training.records import RunResult
from assocmem.training.state import TrainedState

__all__ = [
    "MEMORIES",
    "OPTIMIZERS",
    "AbstractMemory",
    "RunResult",
    "TrainConfig",
    "TrainedState",
    "group_runs",
    "register_memory",
    "select_kernel",
    "train",
    "train_group",
]

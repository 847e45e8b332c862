"""Trained associative memories: the batched training engine of PAPER.md §4."""

from assocmem.training.config import TrainConfig
from assocmem.training.engine import RunResult, train, train_group
from assocmem.training.kernels import select_kernel

__all__ = ["RunResult", "TrainConfig", "select_kernel", "train", "train_group"]

"""Trained memories behind one interface (:class:`AbstractMemory`), one file each, by name in
:data:`MEMORIES`; the one trainer (:mod:`assocmem.training.trainer`) trains any of them."""

from assocmem.training.memories.base import (
    AbstractMemory,
    Batch,
    State,
    mean_cross_entropy,
    rows_of,
)
from assocmem.training.memories.embeddings import LearnedEmbeddingsMemory, ReluMemory
from assocmem.training.memories.heads import HeadsMemory
from assocmem.training.memories.key_value import KeyValueMemory
from assocmem.training.memories.matrix import MatrixMemory
from assocmem.training.memories.registry import MEMORIES, register_memory
from assocmem.training.memories.series import SERIES_TENSORS, SeriesMemory, series_gradients

__all__ = [
    "MEMORIES",
    "SERIES_TENSORS",
    "AbstractMemory",
    "Batch",
    "HeadsMemory",
    "KeyValueMemory",
    "LearnedEmbeddingsMemory",
    "MatrixMemory",
    "ReluMemory",
    "SeriesMemory",
    "State",
    "mean_cross_entropy",
    "register_memory",
    "rows_of",
    "series_gradients",
]

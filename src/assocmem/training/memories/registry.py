"""Every trained memory by name.

Adding a memory: one file with its :class:`~assocmem.training.memories.base.AbstractMemory`
subclass, one line here (or, from user code, :func:`register_memory`).
"""

from typing import TypeVar

from assocmem.training.memories.base import AbstractMemory
from assocmem.training.memories.embeddings import LearnedEmbeddingsMemory, ReluMemory
from assocmem.training.memories.heads import HeadsMemory
from assocmem.training.memories.key_value import KeyValueMemory
from assocmem.training.memories.matrix import MatrixMemory
from assocmem.training.memories.mixer import MixerMemory
from assocmem.training.memories.series import SeriesMemory

MemoryT = TypeVar("MemoryT", bound=AbstractMemory)

MEMORIES: dict[str, type[AbstractMemory]] = {
    entry.name: entry
    for entry in (
        MatrixMemory,
        KeyValueMemory,
        ReluMemory,
        LearnedEmbeddingsMemory,
        HeadsMemory,
        SeriesMemory,
        MixerMemory,
    )
}
"""The memories by name (``"matrix"``, ``"mlp"``, ``"relu"``, ``"learned"``,
``"heads"``, ``"series"``, ``"mixer"``); construct one with
its hyper-parameters (``MEMORIES["mlp"](width=8)``)."""


def register_memory(cls: type[MemoryT]) -> type[MemoryT]:
    """Add a memory to :data:`MEMORIES` under its ``name``; usable as a decorator.

    Raises
    ------
    TypeError
        If ``cls`` does not subclass :class:`AbstractMemory`.
    ValueError
        If another class already holds ``cls.name`` (the same class again is a no-op).
    """
    if not (isinstance(cls, type) and issubclass(cls, AbstractMemory)):
        raise TypeError(f"register_memory takes an AbstractMemory subclass, got {cls!r}")
    held = MEMORIES.get(cls.name)
    if held is not None and held is not cls:
        raise ValueError(f"memory {cls.name!r} is already registered by {held.__name__}")
    MEMORIES[cls.name] = cls
    return cls

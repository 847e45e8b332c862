"""The last draws of a process, kept for the groups that need them again.

A run draws its samples, embeddings and initial W from named streams keyed by its identity
(:func:`~assocmem.training.engine.draw_run`), so every group that needs one stream draws the
same tensor: the authors' grid draws each seed's 10⁵ samples for 120 groups (3 models ×
2 optimisers × 4 B × 2 layer norms × 7 d) and each seed's embeddings at one d for 48. Drawing
them is CPU work that a GPU waits for (on the H100, a quarter of the grid's time). The cache
holds the most recently used draws up to :data:`MAX_BYTES`; a value is what a fresh draw gives,
bit for bit. Callers must not modify a returned tensor in place (``draw_run``'s callers stack or
clone them).

Samples are nested (the first T draws of a stream do not depend on how many are asked for:
:func:`~assocmem.laws.tokens.sample_tokens`), so one entry per stream serves every T up to the
longest drawn.
"""

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable

import torch

MAX_BYTES = 256 * 2**20  # per process, CPU and device tensors together


class DrawCache:
    """A least-recently-used map from a stream's key to its drawn tensor, bounded in bytes."""

    def __init__(self, max_bytes: int = MAX_BYTES) -> None:
        self.max_bytes = max_bytes
        self._entries: OrderedDict[Hashable, torch.Tensor] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def get(self, key: Hashable, draw: Callable[[], torch.Tensor]) -> torch.Tensor:
        """The tensor of ``key``, drawn by ``draw()`` the first time (or again once evicted)."""
        with self._lock:
            if key in self._entries:
                self._entries.move_to_end(key)
                return self._entries[key]
        return self._store(key, draw())

    def prefix(
        self, key: Hashable, count: int, draw: Callable[[int], torch.Tensor]
    ) -> torch.Tensor:
        """The first ``count`` rows of a nested stream: ``draw(count)[:count]`` is the same
        whatever ``count``, so the longest draw of ``key`` serves every shorter one."""
        with self._lock:
            held = self._entries.get(key)
            if held is not None and held.shape[0] >= count:
                self._entries.move_to_end(key)
                return held[:count]
        return self._store(key, draw(count))

    def _store(self, key: Hashable, value: torch.Tensor) -> torch.Tensor:
        size = value.numel() * value.element_size()
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self._bytes -= old.numel() * old.element_size()
            if size <= self.max_bytes:
                self._entries[key] = value
                self._bytes += size
            while self._bytes > self.max_bytes:
                _, evicted = self._entries.popitem(last=False)
                self._bytes -= evicted.numel() * evicted.element_size()
        return value


DRAWS = DrawCache()

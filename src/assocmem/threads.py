"""Intra-op thread counts for torch, set for a block of work and restored afterwards.

Tiny tensor programs (a few thousand elements per op) run fastest on one thread: the
hand-off between OpenMP threads costs more than the op, and much more on a loaded machine,
where a spinning thread waits for a core.
"""

from collections.abc import Iterator
from contextlib import contextmanager

import torch


@contextmanager
def intra_op_threads(count: int) -> Iterator[None]:
    """Run the block with ``count`` (≥ 1) torch intra-op threads, then restore the previous
    count."""
    previous = torch.get_num_threads()
    torch.set_num_threads(max(1, count))
    try:
        yield
    finally:
        torch.set_num_threads(previous)

"""Torch runtime settings for a block of work, restored afterwards.

- Intra-op thread counts: tiny tensor programs (a few thousand elements per op) run fastest on
  one thread: the hand-off between OpenMP threads costs more than the op, and much more on a
  loaded machine, where a spinning thread waits for a core.
- Flush-to-zero: denormal floats (|x| < 1.2e-38: gradients of well-learned tokens, underflowing
  softmax tails) cost 40–60× per operation on x86 CPUs, in torch's GEMMs and in compiled
  kernels alike. Training loops run with them flushed to zero: only values below 1.2e-38
  change, which moves no logit or step above that size.
"""

import threading
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


class _FlushState(threading.local):
    """Whether a flush_denormals block is active in this thread (the mode is per thread, so is
    this record: blocks entered by concurrent threads never see or restore each other's)."""

    active = False


_state = _FlushState()


def flushing() -> bool:
    """Whether this thread is flushing denormals (the state its worker threads should copy)."""
    return _state.active


@contextmanager
def flush_denormals(enabled: bool = True) -> Iterator[None]:
    """Run the block with denormal floats flushed to zero (this thread, CPU; a no-op where the
    CPU cannot), then back to the previous state. The setting is per thread: pools that run
    kernels for the block copy it into their threads (see :func:`flushing`)."""
    previous = _state.active
    switched = enabled and not previous and torch.set_flush_denormal(True)
    _state.active = previous or switched
    try:
        yield
    finally:
        _state.active = previous
        if switched:
            torch.set_flush_denormal(False)

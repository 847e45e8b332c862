"""Counting the torch ops a block dispatches: the tests that hold "batched means batched" (the
ops of a step do not grow with the number of runs) count with this one mode."""

from collections import Counter
from collections.abc import Callable

from torch.utils._python_dispatch import TorchDispatchMode


class OpCounter(TorchDispatchMode):
    """Counts every aten op dispatched inside the block, by name."""

    def __init__(self) -> None:
        super().__init__()
        self.ops: Counter[str] = Counter()
        self.views: set[str] = set()  # the names of the counted ops that are views

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
        self.ops[str(func)] += 1
        if func.is_view:
            self.views.add(str(func))
        return func(*args, **(kwargs or {}))


def dispatches(fn: Callable[[], object]) -> int:
    """The number of torch ops ``fn()`` dispatches."""
    with OpCounter() as counter:
        fn()
    return sum(counter.ops.values())

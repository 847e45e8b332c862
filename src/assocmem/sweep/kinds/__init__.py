"""The registry of run kinds: every kind of run a sweep can hold, by its spec ``kind`` name.

A new kind of run (a study, a sampler) is one module with a :class:`RunKind` subclass and one
:func:`register_kind` call — here for the kinds of this layer, or in the module of a higher
layer (an experiment) that defines it, without the sweep importing that module.
"""

from assocmem.config.errors import ConfigError
from assocmem.plugins import deferred_experiments
from assocmem.sweep.kinds.base import Outcome, RunKind
from assocmem.sweep.kinds.closed_form import ClosedFormKind
from assocmem.sweep.kinds.memory import MemoryKind
from assocmem.sweep.kinds.train import TrainKind

RUN_KINDS: dict[str, RunKind] = {}


def register_kind(kind: RunKind) -> RunKind:
    """Add ``kind`` under ``kind.name`` (again for the same class: a no-op); returns it.

    Raises
    ------
    ValueError
        If another class already holds that name.
    """
    held = RUN_KINDS.get(kind.name)
    if held is not None and type(held) is not type(kind):
        raise ValueError(f"run kind {kind.name!r} is already registered by {type(held).__name__}")
    RUN_KINDS.setdefault(kind.name, kind)
    return RUN_KINDS[kind.name]


def all_kinds() -> dict[str, RunKind]:
    """Every registered kind by name, the studies' included (their modules imported first)."""
    deferred_experiments()
    return RUN_KINDS


def get_kind(name: str) -> RunKind:
    """The registered kind of that name; a :class:`ConfigError` naming the kinds otherwise."""
    if name not in RUN_KINDS:
        all_kinds()
    if name not in RUN_KINDS:
        raise ConfigError("kind", f"must be one of {', '.join(RUN_KINDS)}, got {name!r}")
    return RUN_KINDS[name]


register_kind(ClosedFormKind())
register_kind(TrainKind())
register_kind(MemoryKind())

__all__ = ["RUN_KINDS", "Outcome", "RunKind", "all_kinds", "get_kind", "register_kind"]

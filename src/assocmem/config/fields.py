"""Field names of config dataclasses, read once a class (planning builds tens of thousands of
configs, and ``dataclasses.fields`` walks a class's attributes each call)."""

from dataclasses import fields

_NAMES: dict[type, tuple[str, ...]] = {}


def field_names(cls: type) -> tuple[str, ...]:
    """The dataclass field names of ``cls``, in order."""
    names = _NAMES.get(cls)
    if names is None:
        names = _NAMES[cls] = tuple(f.name for f in fields(cls))
    return names

"""A run's identity: its config's fields as canonical JSON, hashed with SHA-256.

The hash is the PRIMARY KEY of the results database, so these functions must never change what
they return for a config stored before: a resumed sweep finds its runs by this hash.
"""

import dataclasses
import hashlib
import json
from typing import Any

SCHEMA = 1  # part of every run's identity: bump if the meaning of a record changes


def _normalise(value: Any) -> Any:
    """JSON-ready, with integral floats as ints so ``alpha = 2`` and ``2.0`` hash alike."""
    kind = type(value)
    if kind is float:
        return int(value) if value.is_integer() else value
    if kind is dict:
        return {str(k): _normalise(v) for k, v in value.items()}
    if kind is list or kind is tuple:
        return [_normalise(v) for v in value]
    if value is None or kind is bool or kind is int or kind is str:
        return value
    if isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return _normalise(float(value))
    raise TypeError(f"cannot hash a {kind.__name__}")


def canonical_json(value: Any) -> str:
    return json.dumps(
        _normalise(value), sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False
    )


def content_hash(identity: dict[str, Any]) -> str:
    return hashlib.sha256(canonical_json(identity).encode()).hexdigest()


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def _field_names(cls: type) -> tuple[str, ...]:
    if cls not in _FIELD_NAMES:
        names = tuple(f.name for f in dataclasses.fields(cls) if f.name != "extra")
        _FIELD_NAMES[cls] = names
    return _FIELD_NAMES[cls]


def config_values(config: Any) -> dict[str, Any]:
    """A config dataclass's fields but ``extra`` (``asdict`` without its deep copies; tuples stay
    tuples); a config that defines ``flat_values()`` (a training config, whose optimiser is a
    sub-config) is stored and hashed in that flat spelling."""
    if hasattr(config, "flat_values"):
        return dict(config.flat_values())
    return {name: getattr(config, name) for name in _field_names(type(config))}

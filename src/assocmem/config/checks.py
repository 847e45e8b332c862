"""Checks of single config values, each a one-line :class:`ConfigError` naming the field.

The one set of field checks: every config (closed-form, training, sweep specs, the studies)
validates its integers and numbers here, so a field is refused with the same words everywhere.
"""

import math
from collections.abc import Sequence
from typing import Any, TypeGuard

from assocmem.config.errors import ConfigError


def is_int(value: Any) -> TypeGuard[int]:
    """Whether ``value`` is an integer (a bool is not)."""
    return isinstance(value, int) and not isinstance(value, bool)


def int_at_least(name: str, value: Any, low: int) -> int:
    """``value`` if it is an integer ≥ ``low`` (not a bool), else a ConfigError naming ``name``."""
    if not is_int(value) or value < low:
        raise ConfigError(name, f"must be an integer ≥ {low}, got {value!r}")
    return value


def ints_at_least(name: str, values: Sequence[Any], low: int) -> list[int]:
    """``values`` if it is a non-empty sequence of integers ≥ ``low``, else a ConfigError."""
    if not values or any(not is_int(v) or v < low for v in values):
        raise ConfigError(name, f"must be integers ≥ {low}, got {list(values)}")
    return list(values)


def positive_number(name: str, value: Any) -> float:
    """``value`` as a float if it is a finite number > 0, else a ConfigError naming ``name``."""
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    if not ok or not math.isfinite(value) or value <= 0:
        raise ConfigError(name, f"must be a finite number > 0, got {value!r}")
    return float(value)


__all__ = ["int_at_least", "ints_at_least", "is_int", "positive_number"]

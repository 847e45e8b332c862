"""Checks of single config values, each a one-line :class:`ConfigError` naming the field."""

import math
from typing import Any

from assocmem.config.errors import ConfigError


def int_at_least(name: str, value: Any, low: int) -> int:
    """``value`` if it is an integer ≥ ``low`` (not a bool), else a ConfigError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ConfigError(name, f"must be an integer ≥ {low}, got {value!r}")
    return value


def positive_number(name: str, value: Any) -> float:
    """``value`` as a float if it is a finite number > 0, else a ConfigError naming ``name``."""
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    if not ok or not math.isfinite(value) or value <= 0:
        raise ConfigError(name, f"must be a finite number > 0, got {value!r}")
    return float(value)

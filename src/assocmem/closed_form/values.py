"""List values of a closed-form config as a TOML file or flags give them: ``log:LOW:HIGH:COUNT``
ranges, sample sizes with ``inf``, integers written as strings (read by
:func:`assocmem.closed_form.config.config_from_mapping`)."""

import contextlib
import math
from collections.abc import Sequence
from typing import Any

from assocmem.config.checks import is_int
from assocmem.config.errors import ConfigError


def parse_sample_size(value: Any) -> int | None:
    """``inf``/``infinite``/None → None (infinite data); otherwise a non-negative integer."""
    if isinstance(value, str):
        text = value.strip().lower()
        value = None if text in ("inf", "infinite") else value
        with contextlib.suppress(ValueError):
            value = float(text)
    if value is None or value == math.inf:
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if not is_int(value) or value < 0:
        raise ConfigError("n_samples", f"must be integers ≥ 0 or 'inf', got {value!r}")
    return value


def expand_log_ranges(field: str, values: Sequence[Any]) -> list[Any]:
    """Expand ``log:LOW:HIGH:COUNT`` items into COUNT log-spaced integers (rounded, deduplicated).

    Other items pass through, so ``["inf", "log:10:10000:4"]`` → ``["inf", 10, 100, 1000, 10000]``.
    """
    out: list[Any] = []
    for value in values:
        if isinstance(value, str) and value.strip().startswith("log:"):
            parts = value.strip().split(":")
            try:
                low, high, count = float(parts[1]), float(parts[2]), int(parts[3])
                if len(parts) != 4 or not (0 < low <= high) or count < 1:
                    raise ValueError
            except (ValueError, IndexError):
                raise ConfigError(
                    field,
                    f"bad range {value!r}; use log:LOW:HIGH:COUNT with 0 < LOW ≤ HIGH, COUNT ≥ 1",
                ) from None
            step = (math.log(high) - math.log(low)) / max(count - 1, 1)
            grid = [round(math.exp(math.log(low) + i * step)) for i in range(count)]
            out.extend(dict.fromkeys(grid))
        else:
            out.append(value)
    return out


def parse_int(field: str, value: Any) -> Any:
    """An integer written as a string, as an int (other values pass through to validation)."""
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            raise ConfigError(field, f"must be integers, got {value!r}") from None
    return value

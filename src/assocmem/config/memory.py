"""Memory budgets: refuse, before any work starts, what would not fit.

The budget is a fixed number of GiB (:data:`DEFAULT_MEMORY_GB` unless the user gives
``--memory-gb``), never a fraction of the host's memory, so the same command is accepted or
refused alike on every machine. It is an operational setting: it never enters a run's identity.
"""

import math

from assocmem.config.errors import ConfigError

__all__ = ["DEFAULT_MEMORY_GB", "check_budget", "check_memory_gb"]

DEFAULT_MEMORY_GB = 4.0


def check_memory_gb(memory_gb: float) -> float:
    """A budget in GiB: a finite number > 0."""
    ok = isinstance(memory_gb, int | float) and not isinstance(memory_gb, bool)
    if not ok or not math.isfinite(memory_gb) or memory_gb <= 0:
        raise ConfigError("memory_gb", f"must be a finite number > 0, got {memory_gb!r}")
    return float(memory_gb)


def check_budget(need_bytes: float, memory_gb: float, what: str, hint: str) -> None:
    """Raise a one-line :class:`ConfigError` when ``need_bytes`` exceeds ``memory_gb`` GiB.

    ``what`` names the work (``"this grid of 10⁸ runs"``), ``hint`` what to lower.
    """
    budget = check_memory_gb(memory_gb) * 2**30
    if need_bytes > budget:
        raise ConfigError(
            "memory_gb",
            f"{what} needs about {_gib(need_bytes)}, over the budget of {memory_gb:g} GiB; "
            f"{hint}, or raise --memory-gb",
        )


def _gib(n_bytes: float) -> str:
    gib = n_bytes / 2**30
    return f"{gib:.3g} GiB" if gib < 1e6 else f"{gib:.1e} GiB"

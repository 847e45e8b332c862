"""Progress bars for long library calls: one helper, off unless asked for.

Library functions take ``progress: bool = False`` (quiet in scripts and notebooks unless the
caller asks); the command line turns it on when standard error is a terminal and ``--quiet`` is
not given (:func:`wanted`). tqdm is imported only when a bar is made.
"""

import sys
from typing import Any, Protocol

__all__ = ["Bar", "progress_bar", "wanted"]


class Bar(Protocol):
    """What callers use of a bar from :func:`progress_bar` (a tqdm bar)."""

    def update(self, n: float | None = 1) -> bool | None: ...


def wanted(quiet: bool = False) -> bool:
    """Whether a command should show progress: not ``quiet`` and standard error a terminal."""
    if quiet:
        return False
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):  # a replaced or closed stream
        return False


def progress_bar(
    total: int | None, desc: str | None, unit: str, enabled: bool, **options: Any
) -> Any:
    """A tqdm bar on standard error (a disabled one, which prints nothing, when not
    ``enabled``); use it as a context manager and call ``update(n)``.

    ``options`` go to tqdm (``leave`` defaults to False: the bar is erased when done)."""
    from tqdm import tqdm

    options.setdefault("leave", False)
    return tqdm(total=total, desc=desc, unit=unit, disable=not enabled, **options)

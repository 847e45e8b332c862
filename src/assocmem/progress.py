"""Progress bars for long library calls: one helper, off unless asked for.

Library functions take ``progress: bool = False`` (quiet in scripts and notebooks unless the
caller asks); the command line turns it on when standard error is a terminal and ``--quiet`` is
not given (:func:`wanted`). tqdm is imported only when a bar is made.
"""

import sys
from typing import Any

__all__ = ["progress_bar", "wanted"]


def wanted(quiet: bool = False) -> bool:
    """Whether a command should show progress: not ``quiet`` and standard error a terminal."""
    if quiet:
        return False
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):  # a replaced or closed stream
        return False


def progress_bar(total: int | None, desc: str, unit: str, enabled: bool) -> Any:
    """A tqdm bar on standard error (a disabled one, which prints nothing, when not
    ``enabled``); use it as a context manager and call ``update(n)``."""
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit=unit, disable=not enabled, leave=False)

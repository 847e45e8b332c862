"""What each closed-form figure needs of its records, checked before drawing.

A figure drawn from records of another experiment is not an error in matplotlib: it is a wrong
plot. :func:`check_figure_frame` refuses such records in one line instead.
"""

import math

import pandas as pd
from pandas.api.types import is_numeric_dtype

from assocmem.config.errors import ConfigError

__all__ = ["REQUIREMENTS", "check_figure_frame"]

REQUIREMENTS = {
    "1": "one scheme, with two or more finite sample sizes T at two or more d",
    "3": "for every scheme, two or more finite sample sizes T at two or more d",
    "4": "infinite data (T = inf) only, at two or more d",
}


def _grid_ok(frame: pd.DataFrame) -> bool:
    finite = frame[frame["n_samples"].map(math.isfinite)]
    return finite["n_samples"].nunique() >= 2 and finite["dim"].nunique() >= 2


def check_figure_frame(figure: str, frame: pd.DataFrame) -> None:
    """Raise a one-line :class:`ConfigError` (field ``from``) when ``frame`` (one row per trial,
    :func:`~assocmem.figures.frame_from_records`) cannot make paper figure ``figure``."""
    if figure not in REQUIREMENTS:
        allowed = ", ".join(REQUIREMENTS)
        raise ConfigError("figure", f"unknown figure {figure!r}; allowed: {allowed}")
    if frame.empty:
        raise ConfigError("from", "the records hold no trials")
    numeric = all(is_numeric_dtype(frame[c]) for c in ("dim", "n_samples", "error"))
    if not numeric:
        raise ConfigError("from", "dim, n_samples and errors must be numbers")
    schemes = frame.groupby("scheme")
    if figure == "1":
        ok = frame["scheme"].nunique() == 1 and _grid_ok(frame)
    elif figure == "3":
        ok = all(_grid_ok(group) for _, group in schemes)
    else:
        ok = bool((frame["n_samples"] == math.inf).all()) and frame["dim"].nunique() >= 2
    if not ok:
        raise ConfigError(
            "from", f"figure {figure} needs {REQUIREMENTS[figure]}; these records do not hold it"
        )

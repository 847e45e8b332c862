"""Measurements shared by the closed-form claims: log-log slopes and per-d mean errors of
record frames (tidy rows: scheme, dim, n_samples, trial, error)."""

import math
from typing import Any

import numpy as np
import pandas as pd


def slope(x: Any, y: Any) -> float:
    """Least-squares slope of log y against log x."""
    return float(np.polyfit(np.log(np.asarray(x, float)), np.log(np.asarray(y, float)), 1)[0])


def means(frame: pd.DataFrame, scheme: str, n_samples: float = math.inf) -> dict[int, float]:
    """Mean error over trials at each d, for one scheme and sample size (inf = infinite data)."""
    rows = frame[(frame["scheme"] == scheme) & (frame["n_samples"] == n_samples)]
    curve = rows.groupby("dim")["error"].mean()
    return {int(d): float(e) for d, e in zip(curve.index, curve.to_numpy(), strict=True)}


def slope_above(curve: dict[int, float], low: int = 50) -> float:
    """The slope in d of a mean-error curve over d ≥ ``low``."""
    big = {d: e for d, e in curve.items() if d >= low}
    return slope(list(big), list(big.values()))

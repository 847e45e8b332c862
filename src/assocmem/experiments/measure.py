"""Measurements shared by the closed-form claims: log-log slopes and per-d mean errors of
record frames (tidy rows: scheme, dim, n_samples, trial, error)."""

import math
from typing import Any

import numpy as np
import pandas as pd

from assocmem.analysis.stats import seed_summary


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


def mean_and_se(values: Any) -> tuple[float, float]:
    """Mean and standard error of per-trial (or per-seed) values, by
    :func:`assocmem.analysis.stats.seed_summary` (the project's one mean ± s.e.)."""
    frame = pd.DataFrame({"group": 0, "value": np.asarray(values, float)})
    row = seed_summary(frame, ["group"], "value").iloc[0]
    return float(row["mean"]), float(row["sem"])


def trial_table(frame: pd.DataFrame, scheme: str, by: str = "dim", **fixed: float) -> pd.DataFrame:
    """Per-trial errors (trials, x values sorted) of one scheme, x the column ``by``, at the
    ``fixed`` values of the other columns (default: infinite data, ``n_samples=inf``)."""
    rows = frame[frame["scheme"] == scheme]
    for column, value in (fixed or {"n_samples": math.inf}).items():
        rows = rows[rows[column] == value]
    return rows.pivot_table(index="trial", columns=by, values="error").sort_index(axis=1)


def slope_influence(table: pd.DataFrame, low: float = 50) -> pd.Series:
    """Each trial's first-order share of the log-log slope of the mean curve over x ≥ ``low``
    (the slope is Σ_x w_x log m_x, so a trial moves it by Σ_x w_x e_x / m_x): the s.e. of the
    slope is the s.e. of these values, and paired slopes differ by their differences."""
    x = table.columns.to_numpy(float)
    kept = table.to_numpy(float)[:, x >= low]  # (trials, x values kept)
    logx = np.log(x[x >= low])
    weights = (logx - logx.mean()) / ((logx - logx.mean()) ** 2).sum()
    return pd.Series((kept / kept.mean(axis=0)) @ weights, index=table.index)


def slope_se(table: pd.DataFrame, low: float = 50) -> float:
    """The standard error of the log-log slope of the mean curve over x ≥ ``low``."""
    return mean_and_se(slope_influence(table, low))[1]


def margin(value: float, low: float, high: float, se: float) -> float:
    """How far ``value`` lies inside [low, high], in standard errors ``se`` (negative outside;
    ±inf for se = 0)."""
    inside = float(min(value - low, high - value))
    if se > 0:
        return inside / float(se)
    return math.inf if inside >= 0 else -math.inf


def within(value: float, target: float, tolerance: float, se: float, z: float = 0.0) -> float:
    r"""The margin of ``value`` inside
    :math:`\mathrm{target} \pm (\mathrm{tolerance} + z\cdot \mathrm{se})`, in s.e."""
    wide = tolerance + z * se
    return margin(value, target - wide, target + wide, se)


def scale_z(tolerance: dict[str, Any], scale: str) -> float:
    """The standard errors a claim's tolerance widens by at ``scale``: its ``quick_z`` at the
    quick scale (a true claim then fails by chance less than once in 10⁴), 0 at full scale."""
    return float(tolerance.get("quick_z", 0.0)) if scale == "quick" else 0.0


def at_quick_scale(passed: bool | None, margin_se: float | None, z: float) -> bool | None:
    """A claim's verdict at the quick scale: it passes where its margin against the tolerance as
    stated is at least :math:`-z` s.e. (the tolerance widened by ``z`` s.e. of each compared
    statistic, ``quick_z`` of its table); a claim without a margin keeps its verdict."""
    if passed is None or margin_se is None or not z:
        return passed
    return bool(passed or margin_se >= -z)


def median_se(values: Any, log: bool = False) -> float:
    """The standard error of a median (of ``log`` values if asked), distribution-free: the width
    of the 95 % order-statistic interval of the median (ranks n/2 ∓ 1.96·√n/2) / 3.92. Values
    must be finite (cap a "not reached" at the search's bound first)."""
    x = np.sort(np.asarray(values, float))
    x = np.log(x) if log else x
    n = len(x)
    half = 1.96 * math.sqrt(n) / 2
    low, high = max(math.floor(n / 2 - half), 1), min(math.ceil(n / 2 + half) + 1, n)
    return float(x[high - 1] - x[low - 1]) / (2 * 1.96)


def widened(tolerance: float | str, z: float) -> str:
    """A tolerance as stated, with the quick scale's ``+ z s.e.`` when z > 0."""
    return f"({tolerance} + {z:g} s.e.)" if z else str(tolerance)


def ci_se(low: float, high: float) -> float:
    """The standard error a 95 % interval implies (normal approximation: width / 3.92)."""
    return (high - low) / (2 * 1.96)


CI_NOTE = "in s.e. read off the 95 % bootstrap interval (its width / 3.92)"


def ci_margin(value: float, fit: Any, widen: float) -> float:
    """The margin of ``value`` inside ``fit``'s 95 % interval (``ci_low``, ``ci_high``) widened
    by ``widen`` on each side, in the s.e. the interval implies."""
    se = ci_se(fit.ci_low, fit.ci_high)
    return margin(value, fit.ci_low - widen, fit.ci_high + widen, se)


def cells_margin(margins: Any, min_fraction: float) -> float | None:
    """The margin of a claim judged on a fraction of cells, each with its own margin (in its
    s.e.): the margin of the cell where ``min_fraction`` binds (the k-th largest, k = ⌈min_fraction
    · cells⌉), ≥ 0 exactly when the claim passes. None without cells."""
    ordered = sorted((float(m) for m in margins), reverse=True)
    if not ordered:
        return None
    return ordered[max(math.ceil(min_fraction * len(ordered) - 1e-9), 1) - 1]


def cell_margins(value: Any, bound: Any, se: Any) -> pd.Series:
    r"""Per cell, the margin of :math:`\mathrm{value} \le \mathrm{bound}` in s.e. ``se`` (±inf where
    se is 0)."""
    value, bound, se = (pd.Series(np.asarray(x, float)) for x in (value, bound, se))
    return pd.Series([margin(v, -math.inf, b, s) for v, b, s in zip(value, bound, se, strict=True)])

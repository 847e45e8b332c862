r"""Mean ± standard error over replicates (seeds, trials), written once.

One rule everywhere: the standard error of the mean of n values is :math:`s / \sqrt{n}`, s the
sample standard deviation (``ddof = 1``); missing values (NaN) are left out of n. **One value has no
standard error: NaN** (not 0, which would claim certainty, nor ∞): a comparison against a NaN
margin is False, so nothing is judged resolved, or within tolerance, on a single replicate, and
a figure draws no band for it. No values: mean and s.e. both NaN.

:func:`mean_se` takes one sample, :func:`column_mean_se` every column of a table of
replicates; :func:`grouped_mean_se` applies the same rule to every group of a pandas groupby
at once (vectorised, for tables of many points).
"""

import math
from typing import Any

import numpy as np
import pandas as pd
from pandas.core.groupby import SeriesGroupBy


def mean_se(values: Any) -> tuple[float, float]:
    r"""Mean and standard error of the mean of a sample.

    Parameters
    ----------
    values : array-like, shape (n,)
        The replicates (NaN: missing, left out).

    Returns
    -------
    tuple of float
        :math:`(\text{mean}, s / \sqrt{n})`; the s.e. is NaN for one value, both NaN for none.
    """
    array = np.asarray(values, dtype=float)
    array = array[~np.isnan(array)]
    if array.size == 0:
        return math.nan, math.nan
    se = float(array.std(ddof=1) / math.sqrt(array.size)) if array.size > 1 else math.nan
    return float(array.mean()), se


def column_mean_se(table: Any) -> tuple[Any, Any]:
    """:func:`mean_se` of every column of a table of replicates (one row each).

    table: (n, k) array or DataFrame. Returns ``(means, ses)``, each (k,): arrays, or Series
    indexed by the columns for a DataFrame."""
    if isinstance(table, pd.DataFrame):
        pairs = [mean_se(table[column]) for column in table.columns]
        index = table.columns
        return pd.Series([m for m, _ in pairs], index), pd.Series([s for _, s in pairs], index)
    array = np.asarray(table, dtype=float)
    pairs = [mean_se(array[:, j]) for j in range(array.shape[1])]
    return np.array([m for m, _ in pairs]), np.array([s for _, s in pairs])


def grouped_mean_se(grouped: "SeriesGroupBy[Any, Any]") -> pd.DataFrame:
    """:func:`mean_se` of every group: columns ``mean``, ``std``, ``sem``, ``count`` (float64
    but count), one row per group (indexed as the groupby). ``std`` and ``sem`` are NaN for a
    group of one value."""
    out = pd.DataFrame({"mean": grouped.mean(), "std": grouped.std(ddof=1)})
    out["count"] = grouped.count()
    out["sem"] = out["std"] / np.sqrt(out["count"])
    return out[["mean", "std", "sem", "count"]]


__all__ = ["column_mean_se", "grouped_mean_se", "mean_se"]

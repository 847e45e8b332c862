"""Seed and trial statistics of result tables: which columns identify a point, and the mean,
standard deviation and standard error of every metric over replicates (the rule, and
:func:`mean_se` of one sample, from :mod:`assocmem.ops.stats`)."""

from collections.abc import Sequence

import pandas as pd

from assocmem.ops.stats import grouped_mean_se, mean_se

REPLICATES = ("seed", "trial")  # what aggregation averages over
METRICS = (
    "error", "head_error", "tail_error", "cross_entropy",
    "p_correct", "noisy_error", "bayes_error", "excess_error",
)  # fmt: skip
BOOKKEEPING = ("hash", "sweep", "status", "message", "wall_seconds", "host", "git", "created")
COUNTS = ("n", "n_diverged", "n_failed")


def group_columns(df: pd.DataFrame, exclude: Sequence[str] = ()) -> list[str]:
    """The columns that identify a point: all but replicates, metrics and bookkeeping."""
    skip = {*REPLICATES, *METRICS, *BOOKKEEPING, *COUNTS, *exclude}
    return [c for c in df.columns if c not in skip and not c.endswith(("_mean", "_std", "_sem"))]


def aggregate(df: pd.DataFrame, over: Sequence[str] = REPLICATES) -> pd.DataFrame:
    """Mean, standard deviation and standard error of every metric over replicates.

    Parameters
    ----------
    df : pandas.DataFrame
        One row per run or trial (:func:`load_results`).
    over : sequence of str, default ("seed", "trial")
        The replicate columns averaged over; every other non-metric column identifies a point.

    Returns
    -------
    pandas.DataFrame
        One row per point: its identifying columns, ``n`` (runs), ``n_diverged``, ``n_failed``,
        and for each metric M present ``M_mean``, ``M_std``, ``M_sem`` (float64). Diverged runs
        keep their error (non-finite tokens count as wrong); failed runs have no numbers.
    """
    if df.empty:
        return df.copy()
    keys = group_columns(df, exclude=over)
    metrics = [m for m in METRICS if m in df.columns]
    frame = df.assign(
        _diverged=(df["status"] == "diverged").astype(int),
        _failed=(df["status"] == "failed").astype(int),
    )
    grouped = frame.groupby(keys, dropna=False, sort=True)
    out = grouped.agg(
        n=("status", "size"), n_diverged=("_diverged", "sum"), n_failed=("_failed", "sum")
    )
    for metric in metrics:
        stats = grouped_mean_se(grouped[metric])
        out[f"{metric}_mean"] = stats["mean"]
        out[f"{metric}_std"] = stats["std"]
        out[f"{metric}_sem"] = stats["sem"]
    return out.reset_index()


def seed_summary(frame: pd.DataFrame, by: Sequence[str], value: str = "error") -> pd.DataFrame:
    """Mean, standard error (NaN for one replicate: :mod:`assocmem.ops.stats`) and count of
    ``value`` per group of ``by``."""
    grouped = frame.groupby(list(by), sort=True)[value]
    return grouped_mean_se(grouped)[["mean", "sem", "count"]].reset_index()


__all__ = ["aggregate", "group_columns", "mean_se", "seed_summary"]

"""The learning rate of lowest mean error at each point, written once.

A *point* is every setting but the lr and the seed (the caller names its columns). The chosen lr
is the one of lowest mean ``metric`` over the point's runs; ties go to the smallest lr (or, for
records, to the lr met first: ``ties="first"``), and an lr whose every run has no value (NaN:
failed) sorts last. Every selection of the package calls
:func:`best_lr_rows` (or :func:`lowest` on a table of means it already holds):
:func:`assocmem.analysis.lr_selection.select_lr` and its methods, the studies' trained memories
(superposition, hierarchy, trained memories beyond the paper) and ``train --best-lr``.
"""

from collections.abc import Sequence
from typing import Any, Literal

import pandas as pd


def lowest(frame: pd.DataFrame, keys: Sequence[str], column: str) -> pd.DataFrame:
    """The row of lowest ``column`` in each group of ``keys`` (ties: the first row; NaN last),
    in table order. No keys: the one lowest row."""
    order = frame.sort_values(column, kind="stable", na_position="last")
    if not keys:
        return order.head(1)
    return order.groupby(list(keys), dropna=False, sort=True).head(1).sort_index()


def best_lr_rows(
    frame: pd.DataFrame,
    keys: Sequence[str],
    metric: str = "error",
    ties: Literal["smallest", "first"] = "smallest",
) -> pd.DataFrame:
    """The rows of ``frame`` at the lr of lowest mean ``metric`` within each point.

    Parameters
    ----------
    frame : pandas.DataFrame
        One row per run: the ``keys`` columns, ``lr`` and ``metric``.
    keys : sequence of str
        The columns that identify a point (empty: the whole frame is one point).
    metric : str, default "error"
        The value whose mean over each (point, lr) is minimised.
    ties : {"smallest", "first"}, default "smallest"
        Equal means: the smallest lr, or the lr of the point met first in the frame.

    Returns
    -------
    pandas.DataFrame
        The rows of the chosen (point, lr) pairs, in the frame's order (a fresh index).
    """
    columns = [*keys, "lr"]
    grouped = frame.groupby(columns, dropna=False, sort=ties == "smallest")
    means = grouped[metric].mean().reset_index()
    chosen = lowest(means, keys, metric)[columns]
    return frame.merge(chosen, on=columns)


def best_lr_records(
    records: Sequence[dict[str, Any]], keys: Sequence[str], metric: str = "error"
) -> list[dict[str, Any]]:
    """:func:`best_lr_rows` of records (dicts with ``lr``, ``keys`` and ``metric``; ties: the lr
    met first); one record per (point, lr) when they are already seed-averaged. Points in order
    of first appearance, records in input order."""
    if not records:
        return []
    frame = pd.DataFrame(
        {**{k: [r.get(k) for r in records] for k in [*keys, "lr"]},
         "value": [r[metric] for r in records]}
    )  # fmt: skip
    frame["_point"] = frame.groupby(list(keys), dropna=False, sort=False).ngroup()
    frame["_row"] = range(len(records))
    kept = best_lr_rows(frame, ["_point"], "value", ties="first")
    kept = kept.sort_values(["_point", "_row"], kind="stable")
    return [records[i] for i in kept["_row"]]


__all__ = ["best_lr_records", "best_lr_rows", "lowest"]

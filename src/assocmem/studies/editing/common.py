"""What the editing study's claims, table and figure share: the settings they are judged at,
row selections, the claims' tolerances and the theory at those settings."""

from typing import Any

import pandas as pd

from assocmem.studies.editing.summary import predicted

THRESHOLD, POPULATION, TRAINED = "threshold:P=d/8", "population", "trained"
Theory = dict[tuple[str, float, int, int], Any]  # (memory, α, N, d) → EditPrediction | None


class NotMeasured(Exception):
    """The records hold no runs at a claim's settings (a study run with other settings)."""


def ok_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows of runs that completed."""
    rows: pd.DataFrame = frame[frame["status"] == "ok"] if "status" in frame else frame
    return rows


def main_settings(frame: pd.DataFrame) -> tuple[int, float]:
    """(N, α) of the claims, table and figure: the most common N of the runs (1000 in the
    shipped specs) and α = 2 where it was run, else the smallest α.

    Raises
    ------
    NotMeasured
        Where no run completed.
    """
    rows = ok_rows(frame)
    if rows.empty or "alpha" not in rows:
        raise NotMeasured("no completed editing runs")
    alphas = sorted(float(a) for a in rows["alpha"].unique())
    alpha = 2.0 if 2.0 in alphas else alphas[0]
    return int(rows["n_inputs"].mode().iloc[0]), alpha


def main_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """The completed runs at :func:`main_settings`."""
    n_inputs, alpha = main_settings(frame)
    rows = ok_rows(frame)
    picked: pd.DataFrame = rows[(rows["n_inputs"] == n_inputs) & (rows["alpha"] == alpha)]
    return picked


def at(frame: pd.DataFrame, k: int, operation: str = "edit", band: str = "all") -> pd.DataFrame:
    """The rows of checkpoint k of one operation and band.

    Raises
    ------
    NotMeasured
        Where there are none.
    """
    rows: pd.DataFrame = frame[
        (frame["k"] == k) & (frame["operation"] == operation) & (frame["band"] == band)
    ]
    if rows.empty:
        raise NotMeasured(f"no {operation} sequence ({band}) measured at k = {k}")
    return rows


def theory(frame: pd.DataFrame) -> Theory:
    """The interference theory of ROME (C = I) edits for every closed-form memory and d at
    :func:`main_settings`, at the runs' checkpoints, margin, rise and searched edits ({} where
    no run completed)."""
    try:
        rows = main_rows(frame)
        n_inputs, alpha = main_settings(frame)
    except NotMeasured:
        return {}
    first = rows.iloc[0]
    ks = tuple(sorted(int(k) for k in rows.loc[rows["band"] == "all", "k"].unique()))
    out: Theory = {}
    for memory in sorted(rows["memory"].unique()):
        for dim in sorted(rows["dim"].unique()):
            out[(str(memory), alpha, n_inputs, int(dim))] = predicted(
                str(memory), alpha, n_inputs, int(dim), int(first["n_outputs"]),
                float(first["margin"]), "rome", ks, float(first["rise"]), int(first["max_edits"]),
            )  # fmt: skip
    return out

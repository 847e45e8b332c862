"""Measurements of the superposition study's stored records (docs: beyond/superposition.md).

Tidy frames in (the rows of the ``superposition`` and ``superposition_train`` run kinds), numbers
out: means and standard errors over trials, paired differences (trials are the independent
units; every cell of a trial shares its embeddings), predictions of
:func:`~assocmem.studies.superposition.theory.predict_superposition` next to the measurements,
fitted exponents, and the trained heads' participation profile at their selected learning rate.
"""

from typing import Any, cast

import numpy as np
import pandas as pd

from assocmem.analysis.fit import PowerLawFit, fit_scaling
from assocmem.ops.lr_selection import best_lr_rows
from assocmem.ops.stats import grouped_mean_se
from assocmem.studies.superposition.theory import predict_superposition


def ok_runs(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows of runs that finished with finite numbers (status ``ok``)."""
    return frame[frame["status"] == "ok"]


def select(frame: pd.DataFrame, **where: Any) -> pd.DataFrame:
    """The rows where every ``column == value`` of ``where``."""
    mask = np.ones(len(frame), dtype=bool)
    for column, value in where.items():
        mask &= (frame[column] == value).to_numpy()
    return frame[mask]


def summary(frame: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Mean, standard error (NaN for one trial) and count of the error over trials, per group
    of ``keys``."""
    grouped = ok_runs(frame).groupby(keys, sort=True)
    stats = grouped_mean_se(grouped["error"])
    out = pd.DataFrame({"mean": stats["mean"], "sem": stats["sem"], "n": grouped["error"].size()})
    if "head_dim" in frame:
        out["head_dim"] = grouped["head_dim"].first()
    return out.reset_index()


def predicted(row: Any, n_inputs: int, n_outputs: int, spread: bool = False) -> float:
    """The theory's error (or its per-trial spread) for a summary row (alpha, scheme,
    arrangement, heads, head_dim)."""
    return predict_superposition(
        n_inputs, n_outputs, float(row.alpha), str(row.scheme), str(row.arrangement),
        int(row.heads), int(row.head_dim), spread=spread,
    )  # fmt: skip


def with_predictions(stats: pd.DataFrame, frame: pd.DataFrame) -> pd.DataFrame:
    """``stats`` with the prediction of each row (``predicted``) and the standard error of a
    mean over its trials that the prediction implies (``predicted_sem``)."""
    n, m = first_int(frame, "n_inputs"), first_int(frame, "n_outputs")
    rows = list(stats.itertuples())
    spread = np.array([predicted(r, n, m, spread=True) for r in rows])
    return stats.assign(
        predicted=[predicted(r, n, m) for r in rows],
        predicted_sem=spread / np.sqrt(np.maximum(stats["n"].to_numpy(float), 1.0)),
    )


def paired(frame: pd.DataFrame, first: dict[str, Any], second: dict[str, Any]) -> pd.Series:
    """Per-trial ``error(first) − error(second)`` (trials present in both)."""
    a = ok_runs(select(frame, **first)).set_index("trial")["error"]
    b = ok_runs(select(frame, **second)).set_index("trial")["error"]
    joined = a.to_frame("a").join(b.to_frame("b"), how="inner")
    return joined["a"] - joined["b"]


def first_int(frame: pd.DataFrame, column: str) -> int:
    """The integer value of ``column`` in the first row (a value shared by the rows)."""
    return int(cast(Any, frame[column].iloc[0]))


def heads_above_one(frame: pd.DataFrame) -> list[int]:
    """The numbers of heads H ≥ 2 of the rows, sorted."""
    return sorted(int(h) for h in set(frame["heads"]) if h > 1)


def errors_by(frame: pd.DataFrame, column: str) -> tuple[np.ndarray, np.ndarray]:
    """(values of ``column``, per-trial errors (trials, values)) of one curve."""
    table = ok_runs(frame).pivot_table(index="trial", columns=column, values="error").dropna()
    return table.columns.to_numpy(float), table.to_numpy(float)


def theory_cells(frame: pd.DataFrame, min_head_dim: int) -> pd.DataFrame:
    """Every cell with d_h ≥ ``min_head_dim``: its measured mean, s.e. and prediction."""
    keys = ["alpha", "scheme", "arrangement", "budget", "heads", "dim"]
    stats = summary(frame, keys)
    return with_predictions(stats[stats["head_dim"] >= min_head_dim], frame)


def exponents(frame: pd.DataFrame, min_dim: int, *, auto: bool = False) -> dict[int, PowerLawFit]:
    """Fitted slopes of the error vs d over d ≥ ``min_dim``, per H (trial bootstrap).

    With ``auto``, the window within d ≥ ``min_dim`` is chosen by
    :func:`~assocmem.analysis.fit.auto_window` (it drops errors not resolved from 0, such as a
    memory that stores every token, and flat ends), and a curve that cannot be fitted is left
    out (for a figure); else every d ≥ ``min_dim`` is fitted and a curve with fewer than two
    raises ConfigError.
    """
    out = {}
    for heads, part in frame.groupby("heads"):
        dims, errors = errors_by(part, "dim")
        keep = dims >= min_dim
        try:
            if auto:
                fit = fit_scaling(dims[keep], errors[:, keep], n_boot=500)
            else:
                fit = fit_scaling(dims, errors, window=(min_dim, dims.max()), n_boot=500)
        except ValueError:
            if not auto:
                raise
            continue
        out[int(cast(Any, heads))] = fit
    return out


def best_lr(frame: pd.DataFrame) -> pd.DataFrame:
    """The runs at the lr of lowest seed-averaged error of each (heads, optimizer); diverged runs
    count with their error (non-finite logits are wrong), failed runs have none."""
    return best_lr_rows(frame[frame["status"] != "failed"], ["heads", "optimizer"])


def rank_profile(frame: pd.DataFrame, by_seed: bool = False) -> pd.DataFrame:
    """Seed means per (heads, optimizer, rank bin) of the trained PR and its references (per
    seed too, a ``seed`` column, with ``by_seed``)."""
    rows = []
    for run in best_lr(frame).itertuples():
        run = cast(Any, run)
        for i, rank in enumerate(run.bin_low):
            rows.append({"heads": run.heads, "optimizer": run.optimizer, "rank": rank,
                         "seed": run.seed, "participation": run.participation[i],
                         "superposed": run.superposed[i], "routed": run.routed[i]})  # fmt: skip
    keys = ["heads", "optimizer", *(["seed"] if by_seed else []), "rank"]
    profile = pd.DataFrame(rows).drop(columns=[] if by_seed else ["seed"])
    return profile.groupby(keys).mean().reset_index()

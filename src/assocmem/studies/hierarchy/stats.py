"""Reductions of stored hierarchy records (the rows of the ``hierarchy`` and ``hierarchy_train``
sweep kinds): each memory at its best scheme, paired comparisons, and the trained summaries.

Scheme selection: for each point, d and memory, the scheme of ``schemes`` with the lowest error
*averaged over trials* (one scheme for all trials, never per trial); the same rule for the direct
memory and the hierarchy. The selection and the estimate use the same trials, a small optimistic
bias shared by both sides. A comparison is paired: the hierarchy and the direct memory of one
trial share f₁ (and the samples), so the uncertainty is that of the per-trial differences.
"""

from collections.abc import Sequence

import numpy as np
import pandas as pd

from assocmem.ops.lr_selection import best_lr_rows
from assocmem.ops.stats import mean_se

POINT = ("n_concepts", "alpha", "concept_map", "n_samples")  # one point of a hierarchy sweep


def best_of_schemes(
    frame: pd.DataFrame, metric: str, keys: Sequence[str] = (*POINT, "parity", "dim")
) -> pd.DataFrame:
    """Per trial, ``metric`` at the scheme whose trial-mean is lowest for each group of
    ``keys``: columns ``keys``, ``trial``, ``scheme`` and ``value``."""
    keys = [k for k in keys if k in frame.columns]
    means = frame.groupby([*keys, "scheme"], dropna=False)[metric].mean().reset_index()
    order = means.sort_values([*keys, metric, "scheme"], kind="stable")
    chosen = order.drop_duplicates(keys, keep="first")[[*keys, "scheme"]]
    picked = frame.merge(chosen, on=[*keys, "scheme"])
    return picked[[*keys, "trial", "scheme", metric]].rename(columns={metric: "value"})


def compare(
    frame: pd.DataFrame, metric: str = "hard", parity: str = "matrix", *, pick_se: bool = False
) -> pd.DataFrame:
    """The hierarchy's ``metric`` (best scheme) against the direct memory (best scheme).

    frame: rows of the ``hierarchy`` kind. Returns one row per (point, d): ``hidden``, the
    chosen schemes, the means and standard errors of both, and the paired difference
    ``diff = metric − direct`` (negative: the hierarchy wins) with its standard error,
    paired at the picked schemes (``diff_sem``) and, with ``pick_se``, with the pick included
    (``diff_sem_pick``, :func:`picked_diff_se`: a bootstrap per row, asked for where used).
    """
    rows = frame[frame["parity"] == parity]
    keys = [k for k in (*POINT, "dim") if k in rows.columns]
    ours = best_of_schemes(rows, metric, keys)
    direct = best_of_schemes(rows, "direct", keys)
    paired = ours.merge(direct, on=[*keys, "trial"], suffixes=("", "_direct"))
    paired["diff"] = paired["value"] - paired["value_direct"]
    hidden = rows.groupby(keys, dropna=False)["hidden"].first().to_dict()
    tables = dict(iter(rows.groupby(keys, dropna=False, sort=True))) if pick_se else {}
    out = []
    for key, group in paired.groupby(keys, dropna=False, sort=True):
        mean, sem = mean_se(group["value"])
        direct_mean, direct_sem = mean_se(group["value_direct"])
        diff, diff_sem = mean_se(group["diff"])
        values = dict(zip(keys, key if isinstance(key, tuple) else (key,), strict=True))
        out.append(
            {
                **values,
                "hidden": int(hidden[key]),
                "scheme": group["scheme"].iloc[0],
                "mean": mean,
                "sem": sem,
                "direct_scheme": group["scheme_direct"].iloc[0],
                "direct_mean": direct_mean,
                "direct_sem": direct_sem,
                "diff": diff,
                "diff_sem": diff_sem,
                "trials": int(group["diff"].count()),
            }
        )
        if pick_se:
            out[-1]["diff_sem_pick"] = _pick_se(tables[key], metric, diff_sem)
    return pd.DataFrame(out)


def picked_diff_se(
    ours: np.ndarray, direct: np.ndarray, resamples: int = 2000, seed: int = 0
) -> float:
    """The standard error of the paired difference at the best schemes, *the pick included*: the
    standard deviation of the difference over bootstrap resamples of the trials, each resample
    picking each side's scheme again (lowest mean, first in column order on a tie).

    ours (n_trials, n_schemes), direct (n_trials, n_schemes'): per-trial errors, the trials
    paired by row. Where a heavy-tailed scheme wins or loses the pick by one trial, the paired
    s.e. at the picked schemes misses that variance (hierarchy-3 at seed 2: −10 s.e.).
    """
    rng = np.random.default_rng(seed)
    rows = rng.integers(0, ours.shape[0], size=(resamples, ours.shape[0]))

    def at_pick(table: np.ndarray) -> np.ndarray:  # (resamples, n_trials) at each one's pick
        sampled = table[rows]  # (resamples, n_trials, n_schemes)
        pick = sampled.mean(axis=1).argmin(axis=1)
        return np.take_along_axis(sampled, pick[:, None, None], axis=2)[:, :, 0]

    diffs = (at_pick(ours) - at_pick(direct)).mean(axis=1)
    return float(diffs.std(ddof=1))


def _pick_se(rows: pd.DataFrame, metric: str, fallback: float) -> float:
    """:func:`picked_diff_se` of one group's rows (trial × scheme tables, schemes in name
    order as :func:`best_of_schemes` breaks ties); ``fallback`` where a cell is missing."""

    def table(column: str) -> np.ndarray:
        wide = rows.pivot_table(index="trial", columns="scheme", values=column, aggfunc="first")
        return wide.reindex(sorted(wide.columns), axis=1).to_numpy(dtype=float)

    ours, direct = table(metric), table("direct")
    if len(ours) < 2 or np.isnan(ours).any() or np.isnan(direct).any():
        return fallback
    return picked_diff_se(ours, direct)


def winner(diff: float, diff_sem: float, standard_errors: float = 2.0) -> str:
    """``hierarchy`` if the paired difference is below 0 by more than ``standard_errors``
    standard errors, ``direct`` if above, else ``tie``."""
    if diff + standard_errors * diff_sem < 0:
        return "hierarchy"
    if diff - standard_errors * diff_sem > 0:
        return "direct"
    return "tie"


def parts(frame: pd.DataFrame, scheme: str, parity: str = "matrix") -> pd.DataFrame:
    """Mean and standard error of every part of the composition at one memory-1 scheme: one
    row per (point, d), columns ``NAME_mean`` and ``NAME_sem`` for the errors and ``bound`` (the
    union bound E₁ + E₂)."""
    rows = frame[(frame["parity"] == parity) & (frame["scheme"] == scheme)]
    rows = rows.assign(bound=rows["first"] + rows["second"])
    keys = [k for k in (*POINT, "dim", "hidden") if k in rows.columns]
    names = ("first", "second", "second_soft", "hard", "soft", "both_wrong", "lucky", "bound")
    grouped = rows.groupby(keys, dropna=False)
    out = grouped[list(names)].mean().add_suffix("_mean")
    sem = grouped[list(names)].sem(ddof=1).fillna(0.0).add_suffix("_sem")
    return out.join(sem).reset_index()


TRAINED = ("n_concepts", "dim", "n_samples")
MODELS = {"hierarchy": "error_hard", "direct": "error_direct"}


def trained_summary(frame: pd.DataFrame) -> pd.DataFrame:
    """Per (K, d, T) and model: the lr of lowest seed-averaged error, and the mean and standard
    error over seeds of its error and (hierarchy) NMIs: one row per (K, d, T, model)."""
    out = []
    for key, group in frame.groupby(list(TRAINED), sort=True):
        for model, metric in MODELS.items():
            runs = best_lr_rows(group, [], metric)  # ties: the smallest lr; all-NaN lrs last
            lr = float(runs["lr"].iloc[0])
            row = dict(zip(TRAINED, key, strict=True)) | {"model": model, "lr": lr}
            names = (metric, "nmi", "nmi_output", "nmi_null", "concepts_used")
            for name in names if model == "hierarchy" else (metric,):
                mean, sem = mean_se(runs[name])
                row[("error" if name == metric else name) + "_mean"] = mean
                row[("error" if name == metric else name) + "_sem"] = sem
            if model == "hierarchy":
                row["gap_mean"], row["gap_sem"] = mean_se(runs["nmi"] - runs["nmi_null"])
            row["seeds"] = int(runs[metric].count())
            out.append(row)
    return pd.DataFrame(out)

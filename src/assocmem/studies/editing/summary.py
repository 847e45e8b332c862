"""Summaries of stored editing runs (:class:`~assocmem.studies.editing.kind.EditingKind` rows):
means with two standard errors over trials, capacities with their spread and fitted exponent,
breaks by frequency rank, and the theory (:mod:`assocmem.analysis.edit_theory`) at the
settings of the runs. Frames in, frames out: the editing study's claims and figure read these."""

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from pandas.core.groupby import SeriesGroupBy

from assocmem.analysis.edit_theory import EditPrediction, predict_scheme_edits
from assocmem.analysis.fit import fit_power_law
from assocmem.ops.stats import grouped_mean_se
from assocmem.studies.editing.runs import TRAINED

MEMORY_KEYS = ["memory", "alpha", "n_inputs", "dim"]


def mean_two_se(grouped: "SeriesGroupBy[Any, Any]") -> pd.DataFrame:
    """Mean, two standard errors (NaN for one value: :mod:`assocmem.ops.stats`) and count of a
    column over trials, per group: columns ``mean``, ``two_se``, ``n``."""
    stats = grouped_mean_se(grouped)
    return pd.DataFrame({"mean": stats["mean"], "two_se": 2.0 * stats["sem"], "n": stats["count"]})


def checkpoint_summary(frame: pd.DataFrame, value: str = "damage") -> pd.DataFrame:
    """``value`` over trials per (memory, α, N, d, method, operation, band, k): columns
    ``mean``, ``two_se``, ``n``."""
    keys = [*MEMORY_KEYS, "method", "operation", "band", "k"]
    grouped = frame.groupby(keys, sort=True)[value]
    return mean_two_se(grouped).reset_index()


def relative_damage(frame: pd.DataFrame) -> pd.Series:
    """``damage / error_before`` of every row: the relative rise of the other tokens' error."""
    result: pd.Series = frame["damage"] / frame["error_before"]
    return result


def capacities(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per (run, method) of the searched edit sequences: ``capacity`` (inf where the
    error did not rise by ``rise`` within ``searched`` edits)."""
    rows = frame[
        (frame["band"] == "all") & (frame["operation"] == "edit") & (frame["searched"] > 0)
    ]
    rows = rows.drop_duplicates(["hash", "method"])[
        [*MEMORY_KEYS, "method", "trial", "capacity", "searched"]
    ]
    rows = rows.copy()
    rows["capacity"] = rows["capacity"].fillna(np.inf)
    return rows.reset_index(drop=True)


def capacity_summary(frame: pd.DataFrame) -> pd.DataFrame:
    """Per (memory, α, N, d, method): the median capacity over trials and its quartiles (inf
    where more than that share of trials did not reach the rise), the share reached, n."""
    rows = capacities(frame)

    def summary(values: pd.Series) -> pd.Series:
        array = values.to_numpy(dtype=np.float64)
        q25, median, q75 = np.quantile(array, [0.25, 0.5, 0.75], method="inverted_cdf")
        reached = float(np.isfinite(array).mean())
        return pd.Series({"median": median, "q25": q25, "q75": q75, "reached": reached,
                          "n": array.size})  # fmt: skip

    keys = [*MEMORY_KEYS, "method"]
    return rows.groupby(keys, sort=True)["capacity"].apply(summary).unstack().reset_index()


def capacity_exponent(
    dims: Sequence[int], capacity: np.ndarray, *, n_boot: int = 1000, seed: int = 0
) -> tuple[float, tuple[float, float]]:
    r"""The exponent γ of :math:`\text{median capacity} \propto d^\gamma` (OLS in log-log,
    :func:`fit_power_law`) and its 95 % bootstrap interval over trials (trials resampled at every
    d).

    capacity: (n_trials, n_dims), inf where not reached (a median that is inf drops its d)."""
    x = np.asarray(dims, dtype=np.float64)

    def slope(table: np.ndarray) -> float:
        medians = np.quantile(table, 0.5, axis=0, method="inverted_cdf")
        ok = np.isfinite(medians) & (medians > 0)
        if ok.sum() < 2:
            return float("nan")
        return fit_power_law(x[ok], medians[ok])[0]

    rng = np.random.default_rng(seed)
    n_trials = capacity.shape[0]
    boots = np.array([slope(capacity[rng.integers(0, n_trials, n_trials)]) for _ in range(n_boot)])
    boots = boots[np.isfinite(boots)]
    low, high = np.quantile(boots, [0.025, 0.975]) if boots.size else (np.nan, np.nan)
    return slope(capacity), (float(low), float(high))


def capacity_table(frame: pd.DataFrame, memory: str, method: str, alpha: float) -> pd.DataFrame:
    """(n_trials, n_dims) capacities of one memory and method at N = the frame's most common N,
    dims sorted (columns), trials as rows."""
    rows = capacities(frame)
    rows = rows[(rows["memory"] == memory) & (rows["method"] == method) & (rows["alpha"] == alpha)]
    return rows.pivot_table(index="trial", columns="dim", values="capacity", aggfunc="first")


def break_fractions(frame: pd.DataFrame, k: int) -> pd.DataFrame:
    """Per (memory, α, N, d, method, operation) at checkpoint k of the ``all`` sequences, and per
    decade of rank: the share of the other tokens answered correctly before that the edits
    broke (``broken_*``), pooled over trials."""
    rows = frame[(frame["band"] == "all") & (frame["k"] == k)]
    decades = [c.removeprefix("breaks_") for c in rows.columns if c.startswith("breaks_")]
    keys = [*MEMORY_KEYS, "method", "operation"]
    sums = rows.groupby(keys, sort=True)[
        [f"{name}_{d}" for d in decades for name in ("breaks", "correct_before")]
    ].sum()
    out = pd.DataFrame(index=sums.index)
    for decade in decades:
        correct = sums[f"correct_before_{decade}"].replace(0, np.nan)
        out[f"broken_{decade}"] = sums[f"breaks_{decade}"] / correct
    return out.reset_index()


def predicted(
    memory: str,
    alpha: float,
    n_inputs: int,
    dim: int,
    n_outputs: int = 5,
    margin: float = 1.0,
    method: str = "rome",
    ks: tuple[int, ...] = (1, 2, 4, 8, 16, 32, 64),
    rise: float = 0.1,
    max_edits: int = 512,
) -> EditPrediction | None:
    """The theory of :func:`~assocmem.analysis.edit_theory.predict_scheme_edits` for a
    closed-form memory of the study (None for the trained memory, which has no weights q)."""
    if memory == TRAINED:
        return None
    return predict_scheme_edits(
        memory, alpha, n_inputs, dim, n_outputs, margin=margin, method=method, ks=ks, rise=rise,
        max_edits=max_edits,
    )  # fmt: skip

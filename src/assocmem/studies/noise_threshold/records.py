"""The records of a ``min_count`` sweep under label noise, measured and predicted, cell by cell
(docs: beyond/noise-threshold.md).

A *cell* is one (α, ε, label rule, cap, T, d): its error curve over the thresholds k. From the
tidy closed-form rows (``scheme``, ``dim``, ``n_samples``, ``trial``, ``error`` and the config
columns) :func:`analyse_records` builds

- ``curves``: one row per (cell, k): the mean error over trials, its standard error and the
  prediction of :func:`~assocmem.studies.noise_threshold.theory.predict_min_count`;
- ``cells``: one row per cell: the measured k* (the largest k at the smallest mean error: the
  thresholds below k_c store the same tokens, so their errors tie exactly) and its error, the
  predicted k* and the measured error there (``regret``, with the standard error of the paired
  per-trial difference: every k of a trial shares its embeddings and sample), and the same at
  one given k (the authors' k = 30).
"""

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from assocmem.analysis.predict import EmbeddingLaw
from assocmem.config.errors import ConfigError
from assocmem.laws.tokens import zipf_probabilities
from assocmem.ops.stats import column_mean_se, mean_se
from assocmem.schemes import parse_scheme
from assocmem.studies.noise_threshold.theory import noisy_data_floor, predict_min_count

__all__ = ["CELL", "NoiseThresholdRecords", "analyse_records", "balance_dims"]

CELL = ["alpha", "label_noise", "label_rule", "cap", "n_samples", "dim"]
SERIES = CELL[:-1]  # a prediction covers every d of one (α, ε, rule, cap, T)
TIE = 1e-12  # relative: errors this close are the same stored set


@dataclass(frozen=True)
class NoiseThresholdRecords:
    """Measured and predicted errors of every (cell, k), and the per-cell summaries.

    Attributes
    ----------
    curves : pandas.DataFrame
        One row per (cell, k): the columns of :data:`CELL`, ``k``, ``mean``, ``sem``,
        ``trials`` and ``predicted``.
    cells : pandas.DataFrame
        One row per cell: ``k_star`` and ``error_star`` (measured), ``sem_star``, ``k_pred`` and
        ``error_pred`` (predicted), ``regret`` and ``regret_se`` (the measured error at
        ``k_pred`` above ``error_star``, paired), ``error_at_k``, ``regret_at_k`` and
        ``regret_at_k_se`` (at the given k; NaN where k is not in the grid), ``floor`` (the noisy
        data floor of :func:`noisy_data_floor`).
    errors : dict
        Per cell (a tuple of the :data:`CELL` values): the trial × k errors, (n_trials, n_k),
        columns in the order of ``ks``.
    ks : tuple of int
        The thresholds k of the grid, increasing.
    """

    curves: pd.DataFrame
    cells: pd.DataFrame
    errors: dict[tuple[object, ...], np.ndarray]
    ks: tuple[int, ...]


def _scheme_columns(frame: pd.DataFrame) -> pd.DataFrame:
    """The cap (``"d/8"``, ``"1000"``) and the threshold k of every ``min_count`` row."""
    parsed = {s: parse_scheme(s) for s in frame["scheme"].unique()}
    if any(p.name != "min_count" for p in parsed.values()):
        raise ConfigError("schemes", "the noise-threshold records hold min_count schemes only")
    cap = frame["scheme"].map({s: p.values["P"] for s, p in parsed.items()})
    k = frame["scheme"].map({s: int(p.values["k"]) for s, p in parsed.items()})
    return frame.assign(cap=cap, k=k)


def _law(frame: pd.DataFrame) -> EmbeddingLaw:
    """The embedding law of the records (one configuration's embeddings and nested rule)."""
    first = frame.iloc[0]
    d_max = int(frame["dim"].max()) if first.get("nested", "truncate") == "truncate" else None
    return EmbeddingLaw(
        str(first.get("embedding", "gaussian")),
        str(first.get("output_embedding", "spherical")),
        output_d_max=d_max,
    )


def _predictions(frame: pd.DataFrame, ks: Sequence[int]) -> dict[tuple[object, ...], np.ndarray]:
    """Per series (α, ε, rule, cap, T): the predicted errors (n_k, n_d) at the sorted dims."""
    law, dims = _law(frame), sorted(int(d) for d in frame["dim"].unique())
    n_inputs, n_outputs = int(frame["n_inputs"].iloc[0]), int(frame["n_outputs"].iloc[0])
    out: dict[tuple[object, ...], np.ndarray] = {}
    done: dict[tuple[object, ...], np.ndarray] = {}  # ε = 0: both rules store the same
    for key in frame[SERIES].drop_duplicates().itertuples(index=False, name=None):
        alpha, noise, rule, cap, size = key
        same = (alpha, noise, "any" if noise == 0 else rule, cap, size)
        if same not in done:
            probs = zipf_probabilities(n_inputs, float(alpha)).numpy()
            done[same] = predict_min_count(
                probs, int(size), dims, ks, noise=float(noise), n_outputs=n_outputs,
                size_rule=str(cap), label_rule=str(rule), law=law,
            ).error  # fmt: skip
        out[key] = done[same]
    return out


def _best(means: np.ndarray) -> int:
    """The index of the largest k at the smallest mean (exact ties: the same stored set)."""
    low = means.min()
    return int(np.flatnonzero(means <= low + TIE * abs(low))[-1])


def _paired(errors: np.ndarray, i: int, j: int) -> tuple[float, float]:
    """Mean and standard error of the per-trial difference of columns i and j."""
    return mean_se(errors[:, i] - errors[:, j])


def analyse_records(frame: pd.DataFrame, at_k: int = 30) -> NoiseThresholdRecords:
    """Join the measured ``min_count`` records with their predictions, cell by cell.

    Parameters
    ----------
    frame : pandas.DataFrame
        Tidy closed-form rows (:meth:`ClosedFormKind.rows`) of ``min_count`` schemes, with the
        config columns ``alpha``, ``label_noise``, ``label_rule``, ``n_inputs``, ``n_outputs``.
    at_k : int, default 30
        The threshold whose regret is reported (the authors' k ≈ 30).

    Returns
    -------
    NoiseThresholdRecords
    """
    rows = _scheme_columns(frame[frame["status"] == "ok"])
    if rows.empty:
        raise ConfigError("study", "no completed min_count runs in these records")
    ks = tuple(sorted(int(k) for k in rows["k"].unique()))
    dims = sorted(int(d) for d in rows["dim"].unique())
    wide = rows.pivot_table(index=[*CELL, "trial"], columns="k", values="error").sort_index()
    predicted = _predictions(rows, ks)
    floors: dict[tuple[object, ...], float] = {}
    n_outputs = int(rows["n_outputs"].iloc[0])
    curves, cells, errors = [], [], {}
    for key, block in wide.groupby(level=list(range(len(CELL))), sort=True):
        cell: tuple[Any, ...] = tuple(key)  # a CELL tuple
        values = block[list(ks)].to_numpy()  # (n_trials, n_k)
        errors[cell] = values
        means, sems = column_mean_se(values)
        pred = predicted[cell[:-1]][:, dims.index(int(cell[-1]))]
        for i, k in enumerate(ks):
            curves.append([*cell, k, means[i], sems[i], len(values), pred[i]])
        star, guess = _best(means), _best(pred)
        regret, regret_se = _paired(values, guess, star)
        alpha, noise, _, _, size, _ = cell
        floor_key = (alpha, noise, size)
        if floor_key not in floors:
            probs = zipf_probabilities(int(rows["n_inputs"].iloc[0]), float(alpha)).numpy()
            floors[floor_key] = noisy_data_floor(probs, int(size), float(noise), n_outputs)
        at = ks.index(at_k) if at_k in ks else None
        at_regret = _paired(values, at, star) if at is not None else (math.nan, math.nan)
        cells.append(
            [*cell, ks[star], means[star], sems[star], ks[guess], pred[guess], regret, regret_se,
             means[at] if at is not None else math.nan, *at_regret, floors[floor_key]]
        )  # fmt: skip
    curve_columns = [*CELL, "k", "mean", "sem", "trials", "predicted"]
    cell_columns = [
        *CELL, "k_star", "error_star", "sem_star", "k_pred", "error_pred", "regret",
        "regret_se", "error_at_k", "regret_at_k", "regret_at_k_se", "floor",
    ]  # fmt: skip
    return NoiseThresholdRecords(
        pd.DataFrame(curves, columns=curve_columns),
        pd.DataFrame(cells, columns=cell_columns),
        errors,
        ks,
    )


def balance_dims(cells: pd.DataFrame, factor: float = 2.0) -> pd.DataFrame:
    """The balance dimension of each (α, ε, rule, cap, T): where the best error over k falls to
    ``factor`` × the noisy data floor (capacity error = data error at ``factor`` = 2).

    Log-log interpolation between the grid d's around the first crossing; NaN where the best
    error is already below (or never reaches) the target on the grid. Returns one row per
    series with ``d_balance``, ``d_balance_over`` = d_balance / T^{1/α} and
    ``log_d_balance_se``, the s.e. of log d_balance from the s.e. of the best errors at the two
    d around the crossing (delta method; NaN where no crossing is interpolated).
    """
    out = []
    for key, block in cells.groupby(SERIES, sort=True):
        block = block.sort_values("dim")
        d = block["dim"].to_numpy(float)
        e = block["error_star"].to_numpy(float)
        se = block["sem_star"].fillna(0).to_numpy(float)
        target = factor * float(block["floor"].iloc[0])
        below = np.flatnonzero(e <= target)
        d_bal, log_se = math.nan, math.nan
        if below.size and below[0] > 0 and e[below[0]] <= 0:
            d_bal = float(d[below[0]])
        elif below.size and below[0] > 0:
            i = below[0]
            slope = (math.log(target) - math.log(e[i - 1])) / (math.log(e[i]) - math.log(e[i - 1]))
            d_bal = math.exp(math.log(d[i - 1]) + slope * (math.log(d[i]) - math.log(d[i - 1])))
            # δ log d = −δ log e / b (b the log-log slope between the two d): the relative s.e.
            # of the error, interpolated at the crossing, over |b|
            rel = (1 - slope) * se[i - 1] / e[i - 1] + slope * se[i] / e[i]
            b = (math.log(e[i]) - math.log(e[i - 1])) / (math.log(d[i]) - math.log(d[i - 1]))
            log_se = rel / abs(b) if b else math.inf
        series: tuple[Any, ...] = tuple(key)  # a SERIES tuple
        alpha, size = float(series[0]), float(series[4])
        out.append([*series, target, d_bal, d_bal / size ** (1 / alpha), log_se])
    columns = [*SERIES, "target", "d_balance", "d_balance_over", "log_d_balance_se"]
    return pd.DataFrame(out, columns=columns)

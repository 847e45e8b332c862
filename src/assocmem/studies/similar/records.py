"""Measurements of the similar-tokens study on its stored records (tidy rows of the ``similar``
run kind: one row per trial, scheme, d and T), shared by its claims, table and figure
(docs: beyond/similar.md).

The records hold, per trial: the population error, the part of it (and the probability mass)
of tokens never seen in the sample, and the Gaussian theory's predictions of both.
"""

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from assocmem.ops.stats import column_mean_se, mean_se
from assocmem.studies.similar.effective_tokens import EffectiveTokens, fit_effective_tokens

DATA_SCHEME = "seen_once"  # the memory of the error-vs-T rows (every seen token, weight 1)
DIM_SCHEME = "threshold:P=d/8"  # the memory of the error-vs-d rows (infinite data)
MIN_MASS = 0.01  # never-seen errors are compared where the never-seen mass is at least this


def select(frame: pd.DataFrame, **equal: Any) -> pd.DataFrame:
    """The rows whose columns equal the given values (a value None: any)."""
    mask = np.ones(len(frame), dtype=bool)
    for column, value in equal.items():
        if value is not None:
            mask &= (frame[column] == value).to_numpy()
    return frame[mask]


def data_rows(frame: pd.DataFrame, **equal: Any) -> pd.DataFrame:
    """The error-vs-T rows (seen-once memory at the largest d), with ``never_seen`` and
    ``theory_never_seen``: the error on never-seen tokens given that the token is never seen
    (the part of the error over the mass, per trial)."""
    rows = select(frame[frame["scheme"] == DATA_SCHEME], **equal)
    rows = rows[rows["n_samples"] < math.inf]
    mass = rows["unseen_mass"].where(rows["unseen_mass"] > 0)
    return rows.assign(
        never_seen=rows["unseen_error"] / mass, theory_never_seen=rows["theory_unseen_error"] / mass
    )


def dim_rows(frame: pd.DataFrame, **equal: Any) -> pd.DataFrame:
    """The error-vs-d rows (threshold d/8 memory at infinite data)."""
    return select(frame[frame["scheme"] == DIM_SCHEME], **equal)


def by_trial(rows: pd.DataFrame, x: str, value: str) -> pd.DataFrame:
    """Trials × x table of one value (each trial one row)."""
    return rows.pivot_table(index="trial", columns=x, values=value)


def paired(first: pd.Series, second: pd.Series) -> tuple[float, float]:
    """Mean ± s.e. of ``first − second`` over the trials both have (same draws: paired)."""
    both = pd.concat([first, second], axis=1, join="inner").dropna()
    return mean_se(both.iloc[:, 0] - both.iloc[:, 1])


def window_cap(dim: float, alpha: float) -> float:
    r"""The largest T of the N_eff fit at d: :math:`(d/8)^\alpha`, where a disjoint seen-once memory
    of this d is still data-limited (the balance d ≍ T^{1/α} of Cabannes et al. 2024, Prop. 4)."""
    return float((dim / 8.0) ** alpha)


def effective_tokens(
    rows: pd.DataFrame, value: str = "error", n_boot: int = 200
) -> EffectiveTokens:
    """N_eff of one curve (the data rows of one point): least squares on log error against the
    disjoint curves, over T ≤ :func:`window_cap`
    (:mod:`assocmem.studies.similar.effective_tokens`)."""
    first = rows.iloc[0]
    alpha, dim = float(first["alpha"]), float(rows["dim"].max())
    kept = rows[rows["n_samples"] <= window_cap(dim, alpha)]
    table = by_trial(kept, "n_samples", value).dropna()
    return fit_effective_tokens(
        table.to_numpy(),
        table.columns.to_numpy(float),
        alpha,
        int(first["n_outputs"]),
        n_boot=n_boot,
    )


POINT = ("alpha", "grouping", "n_groups", "target", "similarity")


def effective_table(frame: pd.DataFrame, n_boot: int = 200) -> pd.DataFrame:
    """N_eff of every point of the error-vs-T rows: one row per (α, grouping, G, target, ρ) with
    ``n_eff``, ``low``, ``high``, ``rms``, ``at_edge`` and ``n_eff_never_seen`` (the same fit
    on the never-seen tokens' part of the error, whose disjoint expectation is the same E_0)."""
    out = []
    for key, rows in data_rows(frame).groupby(list(POINT)):
        fit = effective_tokens(rows, "error", n_boot)
        unseen = effective_tokens(rows, "unseen_error", 0)
        out.append(
            {
                **dict(zip(POINT, key, strict=True)),
                "n_inputs": int(rows["n_inputs"].iloc[0]),
                "n_eff": fit.n_eff,
                "low": fit.interval[0],
                "high": fit.interval[1],
                "rms": fit.rms,
                "at_edge": fit.at_edge,
                "n_eff_never_seen": unseen.n_eff,
            }
        )
    columns = [*POINT, "n_inputs", "n_eff", "low", "high", "rms", "at_edge", "n_eff_never_seen"]
    return pd.DataFrame(out, columns=columns)


def curve_summary(rows: pd.DataFrame, x: str, values: Mapping[str, str]) -> pd.DataFrame:
    """Mean and s.e. over trials of each value against x: columns ``NAME`` and ``NAME_se``."""
    out = {}
    for name, column in values.items():
        out[name], out[f"{name}_se"] = column_mean_se(by_trial(rows, x, column))
    return pd.DataFrame(out)

"""The judged capacity claims of the factual-recall study, facts-1 to facts-4 (tolerances: the
``[claims.ID]`` tables of the shipped spec ``facts``): the trained linear memory against the sharp
threshold, the trained memories' advantage over the outer product as a trend with d, bits per
trained parameter, and the local slope of the capacity (docs: beyond/facts.md)."""

import math
from typing import Any

import numpy as np
import pandas as pd

from assocmem.experiments.measure import margin
from assocmem.experiments.tolerances import tolerances
from assocmem.report import Claim
from assocmem.studies.facts import theory
from assocmem.studies.facts.summary import (
    OUTER,
    SIGN_ADAM_LINEAR,
    capacity_rows,
    capacity_table,
)


def capacity_records(frames: Any) -> pd.DataFrame:
    """The capacity rows of the trained and the outer-product sweeps, one frame."""
    return capacity_rows(frames.facts, frames.facts_closed)


def _search_precision(value: float, n_star: float, rel_tol: float) -> float:
    """The s.d. that the search's resolution leaves on ``value`` ∝ (N* ln N*)^±1.

    A search resolves N* to a factor 1 + rel_tol: a uniform error of s.d. rel_tol/√12 on
    N*/N*, the same for every seed (not averaged away), of which N* ln N* moves (1 + 1/ln N*)."""
    return abs(value) * float(rel_tol) / math.sqrt(12) * (1 + 1 / math.log(n_star))


def claim_threshold(frames: Any, scale: str) -> Claim:
    """The trained linear memory (sign-Adam) at its largest d against the sharp threshold:
    d²/(2 N* ln N*) in [low, high]; the outer product's at that d shown beside it."""
    tol = tolerances("facts-1")
    statement = (
        "At its largest d, a trained linear memory (sign-Adam, M = N, uniform facts) stores N* "
        f"with d²/(2 N* ln N*) in [{tol['low']}, {tol['high']}]: at top-1 accuracy ≥ 0.99 at "
        "least as many facts as the sharp threshold of full recall, d² = 2 N ln N (Giorlandino, "
        "Goldt and Maillard 2026), and not many more; the outer-product memory, at ratios of 2 "
        "and above up to d = 1024, fails it"
    )
    rows = capacity_records(frames)
    part = rows[rows["kind"] == SIGN_ADAM_LINEAR]
    dim = part["dim"].max()
    part = part[part["dim"] == dim]
    ratios = threshold_ratio(part["dim"], part["n_star"])
    value, spread = float(ratios.median()), float(ratios.std(ddof=1) or 0.0)
    precision = _search_precision(value, float(part["n_star"].median()), part["rel_tol"].max())
    se = math.hypot(spread / math.sqrt(len(ratios)), precision)
    measured = {"dim": float(dim), "ratio": value, "ratio_se": se}
    outer = rows[(rows["kind"] == OUTER) & (rows["dim"] == dim)]
    if len(outer):
        measured["outer_ratio"] = float(threshold_ratio(outer["dim"], outer["n_star"]).median())
    return Claim(
        "facts-1",
        statement,
        measured,
        bool(tol["low"] <= value <= tol["high"]),
        tolerance=f"median over seeds in [{tol['low']}, {tol['high']}]",
        margin_se=margin(value, tol["low"], tol["high"], se),
        margin_note="in s.e.: over seeds and the search's own precision (rel_tol) together",
    )


def threshold_ratio(dims: pd.Series, n_star: pd.Series) -> pd.Series:
    """d²/(2 N* ln N*): 1 on the sharp threshold, below 1 where more facts are stored."""
    return dims.astype(float) ** 2 / (2 * n_star * np.log(n_star.astype(float)))


def claim_advantage_trend(frames: Any, scale: str) -> Claim:
    """For each trained kind, the slope of ln(N*/N*_outer) on ln d over the common d ≥ min_dim
    in [min_slope, max_slope], with an s.e. holding the fit's misfit and the searches' precision."""
    tol = tolerances("facts-2")
    statement = (
        "At M = N, the advantage of training over the outer-product memory shrinks as d grows: "
        "for every trained memory (linear and MLP, SGD and sign-Adam), the ratio of its N* to "
        f"the outer product's falls like d^s, s in [{tol['min_slope']}, {tol['max_slope']}] "
        f"(least squares over the d ≥ {tol['min_dim']} both were measured at), as both "
        "approach d² ≈ 2 N ln N"
    )
    rows = capacity_records(frames)
    table = capacity_table(rows)
    outer = table[table["kind"] == OUTER].set_index("dim")["n_star"]
    trained = table[(table["kind"] != OUTER) & table["dim"].isin(outer.index)]
    trained = trained[trained["dim"] >= tol["min_dim"]]
    counts = trained.groupby("kind")["dim"].nunique()
    if trained.empty or counts.min() < 3:
        note = f"fewer than three common d ≥ {tol['min_dim']}: no trend to judge"
        return Claim("facts-2", statement, {}, None, tolerance="", note=note)
    rel_tol = math.hypot(
        float(rows.loc[rows["kind"] != OUTER, "rel_tol"].max()),
        float(rows.loc[rows["kind"] == OUTER, "rel_tol"].max()),
    )
    measured: dict[str, float] = {}
    margins: list[float] = []
    passed = True
    for kind, part in trained.groupby("kind"):
        ratio = part["n_star"].to_numpy() / outer.reindex(part["dim"]).to_numpy()
        slope, se = trend_slope(part["dim"].to_numpy(float), ratio, rel_tol)
        name = _key(str(kind))
        measured |= {f"slope_{name}": slope, f"slope_{name}_se": se}
        measured[f"ratio_{name}_at_largest_d"] = float(ratio[-1])
        passed &= tol["min_slope"] <= slope <= tol["max_slope"]
        margins.append(margin(slope, tol["min_slope"], tol["max_slope"], se))
    measured["common_dims"] = float(counts.min())
    return Claim(
        "facts-2",
        statement,
        measured,
        bool(passed),
        tolerance=f"every trained kind's slope in [{tol['min_slope']}, {tol['max_slope']}]",
        margin_se=min(margins),
        margin_note="the worst kind, in s.e.: the fit's residuals (misfit) and the searches' "
        "precision together",
    )


def trend_slope(dims: np.ndarray, values: np.ndarray, rel_tol: float) -> tuple[float, float]:
    """The least-squares slope of ln ``values`` on ln ``dims`` (≥ 3 points) and its s.e.: the
    residuals' (n − 2 degrees of freedom: the misfit of a power law enters it) and that of a
    uniform error of s.d. rel_tol/√12 on each value, in quadrature."""
    x, y = np.log(dims), np.log(values)
    sxx = float(((x - x.mean()) ** 2).sum())
    slope, intercept = np.polyfit(x, y, 1)
    residual = float(((y - (slope * x + intercept)) ** 2).sum()) / (len(x) - 2)
    precision = rel_tol / math.sqrt(12)
    return float(slope), math.sqrt((residual + precision**2) / sxx)


def _key(kind: str) -> str:
    return kind.replace(", ", "_").replace("-", "_").replace(" ", "_")


def claim_bits(frames: Any, scale: str) -> Claim:
    """Bits per trained parameter of every trained memory at its largest d within [low, high]."""
    tol = tolerances("facts-3")
    statement = (
        f"At capacity, each trained memory stores between {tol['low']} and "
        f"{tol['high']} bits per trained parameter at its largest d (trained language "
        "models: ≈ 2, Allen-Zhu and Li 2024)"
    )
    rows = capacity_records(frames)
    table = capacity_table(rows)
    trained = table[table["kind"] != OUTER]
    largest = trained[trained["dim"] == trained.groupby("kind")["dim"].transform("max")]
    rel_tol = float(rows.loc[rows["kind"] != OUTER, "rel_tol"].max())
    margins = [
        margin(
            b,
            tol["low"],
            tol["high"],
            math.hypot(s if s > 0 else 0.0, _search_precision(b, n, rel_tol)),
        )
        for b, s, n in zip(
            largest["bits_per_parameter"],
            largest["bits_per_parameter_se"],
            largest["n_star"],
            strict=True,
        )
    ]
    measured = {
        f"bits_{_key(k)}": float(b)
        for k, b in zip(largest["kind"], largest["bits_per_parameter"], strict=True)
    }
    passed = bool(
        (
            (largest["bits_per_parameter"] >= tol["low"])
            & (largest["bits_per_parameter"] <= tol["high"])
        ).all()
    )
    return Claim(
        "facts-3",
        statement,
        measured,
        passed,
        tolerance=f"every trained kind's mean in [{tol['low']}, {tol['high']}]",
        margin_se=min(margins) if margins else None,
        margin_note="the worst kind, in s.e.: over seeds and the search's precision together",
    )


def claim_slope(frames: Any, scale: str) -> Claim:
    """The local slope Δ ln N*/Δ ln d of the trained linear memory (sign-Adam) between its two
    largest d in [low, high] (medians over seeds); the sharp threshold's and the outer
    product's at their largest pair shown beside it."""
    tol = tolerances("facts-4")
    statement = (
        "The trained linear memory's capacity (sign-Adam) grows more slowly than its d² "
        f"parameters: the local slope Δ ln N*/Δ ln d between its two largest d lies in "
        f"[{tol['low']}, {tol['high']}], so a slope of 2 fails it (the sharp threshold "
        "d² = 2 N ln N has 2/(1 + 1/ln N): 1.79 at N = 5500)"
    )
    rows = capacity_records(frames)
    part = rows[rows["kind"] == SIGN_ADAM_LINEAR]
    dims = sorted(part["dim"].unique())
    if len(dims) < 2:
        return Claim("facts-4", statement, {}, None, tolerance="", note="fewer than 2 d")
    low_dim, high_dim = dims[-2:]
    wide = part.pivot_table(index="seed", columns="dim", values="n_star")[[low_dim, high_dim]]
    medians = wide.median()
    value = float(theory.local_slopes([low_dim, high_dim], medians.to_numpy())[0])
    per_seed = np.log(wide[high_dim] / wide[low_dim]).dropna() / math.log(high_dim / low_dim)
    spread = float(per_seed.std(ddof=1)) / math.sqrt(len(per_seed)) if len(per_seed) > 1 else 0.0
    step = math.log(high_dim / low_dim)
    precision = math.sqrt(2) * float(part["rel_tol"].max()) / math.sqrt(12) / step
    se = math.hypot(spread, precision)
    measured = {
        "from_dim": float(low_dim),
        "to_dim": float(high_dim),
        "slope": value,
        "slope_se": se,
        "sharp_threshold_slope": theory.sharp_threshold_slope(float(medians[high_dim])),
    }
    if rows.loc[rows["kind"] == OUTER, "dim"].nunique() >= 2:
        outer = capacity_table(rows[rows["kind"] == OUTER])
        measured["outer_slope"] = float(outer["local_slope"].iloc[-1])
    return Claim(
        "facts-4",
        statement,
        measured,
        bool(tol["low"] <= value <= tol["high"]),
        tolerance=f"the local slope of the medians in [{tol['low']}, {tol['high']}]",
        margin_se=margin(value, tol["low"], tol["high"], se),
        margin_note="in s.e.: over seeds and the two searches' precision together",
    )

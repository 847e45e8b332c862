"""Figure 4: infinite data, three weightings (q = 1, q = p, q = 1{x ≤ d/8}), and claims 1–4.

Its settings are those of the shipped spec ``specs/figure4.toml`` (``assocmem sweep run
figure4``); the quick scale takes fewer trials.
"""

import math
from typing import Any

from matplotlib.figure import Figure

from assocmem.closed_form.values import expand_log_ranges
from assocmem.experiments.experiment import (
    TRIALS,
    Context,
    Experiment,
    RawSpec,
    closed_form_sweep,
    shipped_sweep,
)
from assocmem.experiments.measure import (
    margin,
    mean_and_se,
    means,
    scale_z,
    slope_above,
    slope_se,
    trial_table,
    widened,
    within,
)
from assocmem.experiments.tolerances import tolerances
from assocmem.figures import figure4
from assocmem.report import Claim

SPEC = shipped_sweep("figure4")
FIG4_DIMS = tuple(expand_log_ranges("dims", SPEC["base"]["dims"]))
THRESHOLD, POPULATION, UNIFORM = "threshold:P=d/8", "population", "uniform"


def sweeps(scale: str) -> dict[str, RawSpec]:
    return {"figure4": closed_form_sweep(SPEC["base"], scale, {**TRIALS, "full": SPEC["trials"]})}


def _slope_and_value(claim_id: str, statement: str, frame: Any, scheme: str, scale: str) -> Claim:
    """Slope in d over d ≥ 50 and the error at d = 1000, each within its tolerance (widened by
    ``quick_z`` s.e. at the quick scale)."""
    tol, table = tolerances(claim_id), trial_table(frame, scheme)
    z, curve = scale_z(tol, scale), means(frame, scheme)
    s, e1000 = slope_above(curve), curve[1000]
    margins = [
        within(s, tol["slope"], tol["slope_tolerance"], slope_se(table)),
        within(e1000, tol["error_d1000"], tol["error_tolerance"], mean_and_se(table[1000])[1]),
    ]
    return Claim(
        claim_id,
        statement,
        {"slope": s, "error_d1000": e1000},
        min(margins) >= -z,
        tolerance=f"slope {tol['slope']:g} ± {widened(tol['slope_tolerance'], z)}; error_d1000 "
        f"{tol['error_d1000']:g} ± {widened(tol['error_tolerance'], z)}",
        margin_se=min(margins),
        paper={"slope": tol["slope"], "error_d1000": tol["error_d1000"]},
    )


def claim1(data: Any, scale: str = "full") -> Claim:
    statement = "threshold 1{x ≤ d/8}: slope in d (d ≥ 50) ≈ −1 (theory −1); error at d = 1000 "
    statement += "≈ 0.0034"
    return _slope_and_value("1", statement, data.figure4, THRESHOLD, scale)


def claim2(data: Any, scale: str = "full") -> Claim:
    statement = "q = p: slope in d (d ≥ 50) ≈ −0.27 (theory −1/4); error at d = 1000 ≈ 0.061"
    return _slope_and_value("2", statement, data.figure4, POPULATION, scale)


def claim3(data: Any, scale: str = "full") -> Claim:
    tol, table = tolerances("3"), trial_table(data.figure4, UNIFORM)
    z, curve = scale_z(tol, scale), means(data.figure4, UNIFORM)
    low_dims = [d for d in curve if d <= tol["max_dim"]]
    ses = {d: mean_and_se(table[d])[1] for d in curve}
    high = [margin(curve[d], tol["min_error"], math.inf, ses[d]) for d in low_dims]
    at_1000 = within(curve[1000], tol["error_d1000"], tol["error_tolerance"], ses[1000])
    return Claim(
        "3",
        f"q = 1: error stays high for d ≤ {tol['max_dim']} and ≈ 0.17 at d = 1000",
        {"min_error_d_le_200": min(curve[d] for d in low_dims), "error_d1000": curve[1000]},
        min(*high, at_1000) >= -z,
        tolerance=f"every error at d ≤ {tol['max_dim']} ≥ {tol['min_error']:g}"
        + (f" − {z:g} s.e." if z else "")
        + f"; error_d1000 {tol['error_d1000']:g} ± {widened(tol['error_tolerance'], z)}",
        margin_se=min(*high, at_1000),
        paper={"error_d1000": tol["error_d1000"]},
    )


def claim4(data: Any, scale: str = "full") -> Claim:
    tol = tolerances("4")
    z = scale_z(tol, scale)
    thr, pop, uni = (trial_table(data.figure4, s) for s in (THRESHOLD, POPULATION, UNIFORM))
    dims = [d for d in thr.columns if d >= tol["min_dim"]]
    gaps = [mean_and_se(b[d] - a[d]) for d in dims for a, b in ((thr, pop), (pop, uni))]
    holds = [thr[d].mean() < pop[d].mean() < uni[d].mean() for d in dims]
    margins = [margin(gap, 0.0, math.inf, se) for gap, se in gaps]
    return Claim(
        "4",
        f"for d ≥ {tol['min_dim']}: threshold < q = p < q = 1",
        {"dims_checked": len(dims), "dims_holding": int(sum(holds))},
        bool(dims) and all(m > -z for m in margins),
        tolerance="dims_holding = dims_checked > 0"
        + (f" (a gap may be reversed by < {z:g} s.e.)" if z else ""),
        margin_se=min(margins) if margins else None,
    )


def draw(ctx: Context) -> Figure:
    return figure4(ctx.frames.figure4)


FIGURE_4 = Experiment(
    name="figure-4",
    title="Figure 4: infinite data, three weightings",
    caption=r"Error vs d for q = 1, q = p and $q = \mathbf{1}\{x \leq d/8\}$ with infinite "
    r"data; N = 1000, M = 5, α = 2. Black: the paper's references $0.35\,d^{-1/4}$ (dashed) and "
    r"$3.5\,d^{-1}$ (dotted).",
    item="4",
    sweeps=sweeps,
    claims={"1": claim1, "2": claim2, "3": claim3, "4": claim4},
    draw=draw,
)

"""Figure 4: infinite data, three weightings (q = 1, q = p, q = 1{x ≤ d/8}), and claims 1–4.

Its settings are those of the shipped spec ``specs/figure4.toml`` (``assocmem sweep run
figure4``); the quick scale takes fewer trials.
"""

from typing import Any

from matplotlib.figure import Figure

from assocmem.closed_form.config import expand_log_ranges
from assocmem.experiments.experiment import (
    TRIALS,
    Context,
    Experiment,
    RawSpec,
    closed_form_sweep,
    shipped_sweep,
)
from assocmem.experiments.measure import means, slope_above
from assocmem.experiments.tolerances import tolerances
from assocmem.figures import figure4
from assocmem.report import Claim

SPEC = shipped_sweep("figure4")
FIG4_DIMS = tuple(expand_log_ranges("dims", SPEC["base"]["dims"]))
THRESHOLD, POPULATION, UNIFORM = "threshold:P=d/8", "population", "uniform"


def sweeps(scale: str) -> dict[str, RawSpec]:
    return {"figure4": closed_form_sweep(SPEC["base"], scale, {**TRIALS, "full": SPEC["trials"]})}


def _slope_and_value(claim_id: str, statement: str, frame: Any, scheme: str) -> Claim:
    """Slope in d over d ≥ 50 and the error at d = 1000, each within its tolerance."""
    tol = tolerances(claim_id)
    curve = means(frame, scheme)
    s, e1000 = slope_above(curve), curve[1000]
    passed = (
        abs(s - tol["slope"]) <= tol["slope_tolerance"]
        and abs(e1000 - tol["error_d1000"]) <= tol["error_tolerance"]
    )
    return Claim(
        claim_id,
        statement,
        {"slope": s, "error_d1000": e1000},
        passed,
        tolerance=f"slope {tol['slope']:g} ± {tol['slope_tolerance']:g}; error_d1000 "
        f"{tol['error_d1000']:g} ± {tol['error_tolerance']:g}",
    )


def claim1(data: Any, scale: str = "full") -> Claim:
    statement = "threshold 1{x ≤ d/8}: slope in d (d ≥ 50) ≈ −1 (theory −1); error at d = 1000 "
    statement += "≈ 0.0034"
    return _slope_and_value("1", statement, data.figure4, THRESHOLD)


def claim2(data: Any, scale: str = "full") -> Claim:
    statement = "q = p: slope in d (d ≥ 50) ≈ −0.27 (theory −1/4); error at d = 1000 ≈ 0.061"
    return _slope_and_value("2", statement, data.figure4, POPULATION)


def claim3(data: Any, scale: str = "full") -> Claim:
    tol = tolerances("3")
    curve = means(data.figure4, UNIFORM)
    low = min(e for d, e in curve.items() if d <= tol["max_dim"])
    return Claim(
        "3",
        f"q = 1: error stays high for d ≤ {tol['max_dim']} and ≈ 0.17 at d = 1000",
        {"min_error_d_le_200": low, "error_d1000": curve[1000]},
        low >= tol["min_error"] and abs(curve[1000] - tol["error_d1000"]) <= tol["error_tolerance"],
        tolerance=f"min_error_d_le_200 ≥ {tol['min_error']:g}; error_d1000 "
        f"{tol['error_d1000']:g} ± {tol['error_tolerance']:g}",
    )


def claim4(data: Any, scale: str = "full") -> Claim:
    tol = tolerances("4")
    thr, pop, uni = (means(data.figure4, s) for s in (THRESHOLD, POPULATION, UNIFORM))
    dims = [d for d in thr if d >= tol["min_dim"]]
    holds = [thr[d] < pop[d] < uni[d] for d in dims]
    return Claim(
        "4",
        f"for d ≥ {tol['min_dim']}: threshold < q = p < q = 1",
        {"dims_checked": len(dims), "dims_holding": int(sum(holds))},
        bool(dims) and all(holds),
        tolerance="dims_holding = dims_checked > 0",
    )


def draw(ctx: Context) -> Figure:
    return figure4(ctx.frames.figure4)


FIGURE_4 = Experiment(
    name="figure-4",
    title="Figure 4: infinite data, three weightings",
    caption="Error vs d for q = 1, q = p and q = 1{x ≤ d/8} with infinite data; N = 1000, M = 5, "
    "α = 2. Dashed: 0.35·d^-1/4 and 3.5·d^-1.",
    item="4",
    sweeps=sweeps,
    claims={"1": claim1, "2": claim2, "3": claim3, "4": claim4},
    draw=draw,
)

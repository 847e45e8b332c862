"""Figure 1: the joint law of empirical thresholding, error over (d, T), and claim 7.

Its settings are those of the shipped spec ``specs/figure1.toml`` (``assocmem sweep run
figure1``); the quick scale takes fewer trials.
"""

from typing import Any

from matplotlib.figure import Figure

from assocmem.experiments.experiment import (
    TRIALS,
    Context,
    Experiment,
    RawSpec,
    closed_form_sweep,
    shipped_sweep,
)
from assocmem.experiments.measure import means, slope, slope_above
from assocmem.experiments.tolerances import tolerances
from assocmem.figures import figure1
from assocmem.report import Claim

SPEC = shipped_sweep("figure1")
SCHEME = "empirical_threshold:P=d/12"
FIG1_DIMS = tuple(SPEC["base"]["dims"])
FIG1_SAMPLES = tuple(SPEC["base"]["n_samples"])


def sweeps(scale: str) -> dict[str, RawSpec]:
    return {"figure1": closed_form_sweep(SPEC["base"], scale, {**TRIALS, "full": SPEC["trials"]})}


def claim7(data: Any, scale: str = "full") -> Claim:
    tol = tolerances("7")
    s_d = slope_above(means(data.figure1, SCHEME, 10_000))
    at_1000 = [means(data.figure1, SCHEME, t)[1000] for t in FIG1_SAMPLES]
    s_t = slope(FIG1_SAMPLES, at_1000)
    at_10 = [e for d, e in means(data.figure1, SCHEME, 10).items() if d >= 50]
    return Claim(
        "7",
        "joint law (P = d/12): slope in d at T = 10⁴ (d ≥ 50) ≈ −1; slope in T at d = 1000 "
        "≈ −0.5; error ≈ 0.175 at T = 10 for every d ≥ 50",
        {"slope_d": s_d, "slope_T": s_t, "min_error_T10": min(at_10), "max_error_T10": max(at_10)},
        abs(s_d - tol["slope_d"]) <= tol["slope_d_tolerance"]
        and abs(s_t - tol["slope_T"]) <= tol["slope_T_tolerance"]
        and all(abs(e - tol["error_T10"]) <= tol["error_T10_tolerance"] for e in at_10),
        tolerance=f"|slope_d − ({tol['slope_d']:g})| ≤ {tol['slope_d_tolerance']:g}, "
        f"|slope_T − ({tol['slope_T']:g})| ≤ {tol['slope_T_tolerance']:g}, errors at T = 10 in "
        f"{tol['error_T10']:g} ± {tol['error_T10_tolerance']:g}",
    )


def draw(ctx: Context) -> Figure:
    return figure1(ctx.frames.figure1)


FIGURE_1 = Experiment(
    name="figure-1",
    title="Figure 1: the joint law of empirical thresholding",
    caption="Error of the empirical threshold scheme (the P = d/12 most frequent seen tokens) vs d "
    "for each T (left), vs T for each d (middle), and over (d, T) (right); N = 1000, M = 5, α = 2. "
    "Dashed: 5·d^-1 and 0.5·T^-1/2. Bands: 95 % intervals of the mean over trials.",
    item="1",
    sweeps=sweeps,
    claims={"7": claim7},
    draw=draw,
)

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
from assocmem.experiments.measure import (
    mean_and_se,
    means,
    scale_z,
    slope,
    slope_above,
    slope_se,
    trial_table,
    widened,
    within,
)
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
    z, frame = scale_z(tol, scale), data.figure1
    in_d = trial_table(frame, SCHEME, n_samples=10_000)
    in_t = trial_table(frame, SCHEME, by="n_samples", dim=1000)
    at_10 = trial_table(frame, SCHEME, n_samples=10)
    s_d = slope_above(means(frame, SCHEME, 10_000))
    s_t = slope(FIG1_SAMPLES, [means(frame, SCHEME, t)[1000] for t in FIG1_SAMPLES])
    errors = [mean_and_se(at_10[d]) for d in at_10.columns.to_numpy(int) if d >= 50]
    margins = [
        within(s_d, tol["slope_d"], tol["slope_d_tolerance"], slope_se(in_d)),
        within(s_t, tol["slope_T"], tol["slope_T_tolerance"], slope_se(in_t, low=0)),
        *(within(e, tol["error_T10"], tol["error_T10_tolerance"], se) for e, se in errors),
    ]
    means_10 = [e for d, e in means(frame, SCHEME, 10).items() if d >= 50]
    return Claim(
        "7",
        "joint law (P = d/12): slope in d at T = 10⁴ (d ≥ 50) ≈ −1; slope in T at d = 1000 "
        "≈ −0.5; error ≈ 0.175 at T = 10 for every d ≥ 50",
        {
            "slope_d": s_d,
            "slope_T": s_t,
            "min_error_T10": min(means_10),
            "max_error_T10": max(means_10),
        },
        min(margins) >= -z,
        tolerance=f"|slope_d − ({tol['slope_d']:g})| ≤ {widened(tol['slope_d_tolerance'], z)}, "
        f"|slope_T − ({tol['slope_T']:g})| ≤ {widened(tol['slope_T_tolerance'], z)}, errors at "
        f"T = 10 in {tol['error_T10']:g} ± {widened(tol['error_T10_tolerance'], z)}",
        margin_se=min(margins),
        paper={"slope_d": tol["slope_d"], "slope_T": tol["slope_T"]},
    )


def draw(ctx: Context) -> Figure:
    return figure1(ctx.frames.figure1)


FIGURE_1 = Experiment(
    name="figure-1",
    title="Figure 1: the joint law of empirical thresholding",
    caption="Error of the empirical threshold scheme (the P = d/12 most frequent seen tokens) "
    "vs d for each T (left), vs T for each d (middle), and over (d, T) (right); N = 1000, M = "
    r"5, α = 2. Dashed: $5\,d^{-1}$ and $0.5\,T^{-1/2}$. Bands: 95 % intervals of the mean over "
    "trials.",
    item="1",
    sweeps=sweeps,
    claims={"7": claim7},
    draw=draw,
)

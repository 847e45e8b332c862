"""Figure 3: (d, T) contours of the schemes without threshold (seen once, n(x)).

Its settings are those of the shipped spec ``specs/figure3.toml``; the quick scale thins the
30 × 30 (d, T) grid to 12 × 12 and takes 10 trials.
"""

from matplotlib.figure import Figure

from assocmem.experiments.experiment import (
    Context,
    Experiment,
    RawSpec,
    closed_form_sweep,
    shipped_sweep,
)
from assocmem.figures import figure3

SPEC = shipped_sweep("figure3")
QUICK_GRID = {"dims": ["log:10:1000:12"], "n_samples": ["log:10:10000:12"]}


def sweeps(scale: str) -> dict[str, RawSpec]:
    base = SPEC["base"] | (QUICK_GRID if scale == "quick" else {})
    return {"figure3": closed_form_sweep(base, scale, {"quick": 10, "full": SPEC["trials"]})}


def draw(ctx: Context) -> Figure:
    return figure3(ctx.frames.figure3)


FIGURE_3 = Experiment(
    name="figure-3",
    title="Figure 3: (d, T) contours without threshold",
    caption="Error over (d, T) for the seen-once scheme and the frequency-weighted scheme n(x); "
    "N = 100, M = 5, α = 0.5.",
    item="3",
    sweeps=sweeps,
    draw=draw,
)

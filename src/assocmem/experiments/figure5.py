"""Figure 5: SGD against the Eq. 16 approximation along training (finding §4.1)."""

from matplotlib.figure import Figure

from assocmem.experiments.experiment import Context, Experiment, RawSpec, training_sweep
from assocmem.experiments.findings import finding1
from assocmem.figures.training import figure5

# B = 1000, 100 steps of fresh data, W₀ = 0: the matrix memory by SGD and the q-update.
UPDATE = {
    "base": {
        "optimizer": "sgd",
        "batch_size": 1000,
        "n_samples": 100_000,
        "lr": 1.0,
        "init": "zero",
        "eval_every": 1,
    },
    "axes": {"dim": [10, 1000], "model": ["matrix", "qupdate"]},
    "seeds": {"quick": 20, "full": 100},
}


def sweeps(scale: str) -> dict[str, RawSpec]:
    return {"update": training_sweep(UPDATE, scale)}


def draw(ctx: Context) -> Figure:
    return figure5(ctx.frames.curves("update"))


FIGURE_5 = Experiment(
    name="figure-5",
    title="Figure 5: SGD against the Eq. 16 approximation",
    caption="Error along training of the matrix memory trained by SGD and of the q-update of "
    "Eq. 16 on the same embeddings and data (N = 100, M = 5, α = 2, B = 1000, a fresh batch each "
    "step, lr = 1, W₀ = 0). Left: d = 10 < N, where the approximation degrades; right: "
    "d = 1000 ≥ N, where it tracks SGD. Bands: 95 % intervals over seeds.",
    item="5",
    sweeps=sweeps,
    claims={"§4.1": finding1},
    draw=draw,
)

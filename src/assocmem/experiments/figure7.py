"""Figure 7: step size, batch size and schedules (findings §4.2, §4.3 and §4.7)."""

from typing import Any

from matplotlib.figure import Figure

from assocmem.experiments.experiment import Context, Experiment, RawSpec, training_sweep
from assocmem.experiments.findings import LRS, finding2, finding3, finding7
from assocmem.figures.training import figure7

# Slices of the authors' training grid (N = 100, M = 5, α = 2), and the schedules run.
SLICES: dict[str, dict[str, Any]] = {
    "step_size": {
        "base": {"optimizer": "sgd", "batch_size": 64, "n_samples": 10240},
        "axes": {"lr": LRS},
    },
    "batch_size": {
        "base": {"optimizer": "adam", "n_samples": 1024},
        "axes": {"batch_size": [16, 1024], "lr": LRS},
    },
    # Schedules: batch 1, N = 10, d = 5, α = 1.5, 1000 steps.
    "schedules": {
        "base": {
            "n_inputs": 10,
            "alpha": 1.5,
            "optimizer": "sgd",
            "batch_size": 1,
            "n_samples": 1000,
            "eval_every": 10,
            "decay_steps": [100],
            "decay_factor": 0.03,
        },
        "axes": {"dim": [5]},
        "zip": {"schedule": ["constant", "constant", "step"], "lr": [10.0, 0.1, 10.0]},
        "seeds": {"quick": 20, "full": 100},
    },
}


def sweeps(scale: str) -> dict[str, RawSpec]:
    return {name: training_sweep(part, scale) for name, part in SLICES.items()}


def draw(ctx: Context) -> Figure:
    frames = ctx.frames
    return figure7(frames.step_size, frames.batch_size, frames.curves("schedules"))


FIGURE_7 = Experiment(
    name="figure-7",
    title="Figure 7: step size, batch size and schedules",
    caption="Trained matrix memories (N = 100, M = 5, α = 2), error vs d. Left: SGD, B = 64, "
    "T = 10240, one curve per step size. Middle: sign-like Adam, T = 1024, B = 16 vs 1024 at "
    "the tuned lr (best seed-averaged error). Right: SGD with batch 1 on N = 10, M = 5, "
    "d = 5, α = 1.5, error along training for lr = 10, lr = 0.1, and lr = 10 decayed ×0.03 "
    "at step 100. Bands: 95 % intervals over seeds.",
    item="7",
    sweeps=sweeps,
    claims={"§4.2": finding2, "§4.3": finding3, "§4.7": finding7},
    draw=draw,
)

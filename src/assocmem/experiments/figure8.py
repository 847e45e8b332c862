"""Figure 8: Adam vs SGD, layer norm, learned embeddings, full batch and d = 2 (findings §4.4,
§4.4b, §4.5, §4.6 and §4.6b)."""

from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.figure import Figure

from assocmem.experiments.experiment import Context, Experiment, RawSpec, training_sweep
from assocmem.experiments.findings import (
    LRS,
    finding4,
    finding4b,
    finding5,
    finding6,
    finding6b,
)
from assocmem.figures.training import figure8
from assocmem.laws.tokens import mod_targets
from assocmem.sweep.spec import build_train
from assocmem.training import train

# d = 2, E, W and U learned by full-batch Adam(0.9, 0.999).
SMALL_DIM = {
    "model": "learned",
    "full_batch": True,
    "n_steps": 3000,
    "optimizer": "adam",
    "betas": [0.9, 0.999],
    "lr_scaling": "none",
    "lr": 0.1,
}
# Slices of the authors' training grid (N = 100, M = 5, α = 2) and the full-batch runs.
SLICES: dict[str, dict[str, Any]] = {
    "optimizers": {
        "base": {"batch_size": 256, "n_samples": 10240},
        "axes": {"optimizer": ["sgd", "adam"], "lr": LRS},
    },
    "layer_norm": {
        "base": {"optimizer": "adam", "batch_size": 1024, "n_samples": 10240, "lr": 1.0},
        "axes": {"layer_norm": [False, True]},
    },
    "learned": {
        "base": {"optimizer": "sgd", "batch_size": 16, "n_samples": 10240, "lr": 1.0},
        "axes": {"model": ["matrix", "learned"]},
    },
    # Full-batch GD, sign-GD and normalised GD on N = d = 10 from W₀ = 0.
    "full_batch": {
        "base": {
            "n_inputs": 10,
            "full_batch": True,
            "n_steps": 1000,
            "init": "zero",
            "eval_every": 1,
        },
        "axes": {
            "dim": [10],
            "optimizer": ["sgd", "sign_sgd", "normalized_sgd"],
            "lr": [0.01, 0.1, 1.0, 10.0],
        },
        "seeds": {"quick": 10, "full": 10},
    },
    "small_dim": {
        "base": SMALL_DIM,
        "axes": {"dim": [2], "n_outputs": [5, 10, 20, 30, 40]},
        "seeds": {"quick": 3, "full": 10},
    },
}


def sweeps(scale: str) -> dict[str, RawSpec]:
    return {name: training_sweep(part, scale) for name, part in SLICES.items()}


def small_dim_geometry(cache: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One d = 2 memory of the Figure 8 panel (M = 5, seed 0), trained for its final state:
    the hidden ``W e_x`` of every input (N, 2), the output embeddings (M, 2) and the targets
    (N,) (a picture of one memory; the error-vs-M panel next to it is read from stored runs).
    Kept in ``cache`` (an .npz) so that a re-run only redraws.

    Trained by the autograd kernel (``fast=False``), as the picture always was.
    """
    cfg = build_train({**SMALL_DIM, "dim": 2, "n_outputs": 5})
    if cache.exists():
        with np.load(cache) as stored:
            if str(stored["config"]) == repr(cfg.to_dict()):
                return stored["hidden"], stored["outputs"], stored["targets"]
    (result,) = train([cfg], fast=False, return_state=True)
    state = result.state
    assert state is not None
    hidden = state.hidden().numpy()  # E Wᵀ
    outputs, labels = state.U.numpy(), mod_targets(cfg.n_inputs, cfg.n_outputs).numpy()
    partial = cache.with_suffix(".partial.npz")
    np.savez(partial, config=repr(cfg.to_dict()), hidden=hidden, outputs=outputs, targets=labels)
    partial.replace(cache)
    return hidden, outputs, labels


def draw(ctx: Context) -> Figure:
    frames = ctx.frames
    return figure8(
        frames.optimizers,
        frames.layer_norm,
        frames.learned,
        frames.curves("full_batch"),
        frames.small_dim,
        small_dim_geometry(ctx.out / "figure-8-geometry.npz"),
    )


FIGURE_8 = Experiment(
    name="figure-8",
    title="Figure 8: Adam vs SGD, layer norm, learned embeddings, full batch, d = 2",
    caption="Top: SGD vs sign-like Adam, B = 256, T = 10240, tuned lr; sign-like Adam with and "
    "without layer norm at lr = 1, B = 1024, T = 10240; SGD at lr = 1, B = 16, T = 10240, "
    "learning W only vs learning W, E and U. Bottom: full-batch GD, sign-GD and normalised "
    "GD on N = d = 10 from W₀ = 0, each at its tuned lr of {0.01, 0.1, 1, 10}; d = 2 with E, "
    "W and U learned by full-batch Adam(0.9, 0.999), lr = 0.1, 3000 steps: error vs the "
    "number of classes M (N = 100); and the geometry of one such memory (M = 5, trained "
    "directly for the picture): inputs cluster by class along the output directions.",
    item="8",
    sweeps=sweeps,
    claims={
        "§4.4": finding4,
        "§4.4b": finding4b,
        "§4.5": finding5,
        "§4.6": finding6,
        "§4.6b": finding6b,
    },
    draw=draw,
)

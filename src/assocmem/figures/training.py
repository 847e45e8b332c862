"""Figures of trained memories (PAPER.md §5, Figures 7 and 8): error vs d from stored runs.

Each panel reads tidy training rows (one per run: config columns, seed, error, status) and plots
the seed-averaged error with a 95 % band. "Tuned lr" is honest selection: per (setting, d) the lr
of lowest *seed-averaged* error, never each seed's own best (the authors' optimistic oracle).
"""

from collections.abc import Sequence

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from assocmem.figures.style import colors, curve, new_figure, summarise


def seed_means(frame: pd.DataFrame, keys: Sequence[str]) -> pd.DataFrame:
    """Mean and standard error of the error over seeds, per ``keys`` (+ dim)."""
    return summarise(frame, [*keys, "dim"])


def tuned(frame: pd.DataFrame, keys: Sequence[str]) -> pd.DataFrame:
    """Per (keys, d): the lr with the lowest seed-averaged error, and its mean and sem."""
    stats = seed_means(frame, [*keys, "lr"])
    best = stats.loc[stats.groupby([*keys, "dim"])["mean"].idxmin()]
    return best.reset_index(drop=True)


def _panel(ax: Axes, stats: pd.DataFrame, key: str, labels: dict, title: str) -> None:
    values = list(dict.fromkeys(stats[key]))
    for value, color in zip(values, colors(len(values)), strict=True):
        s = stats[stats[key] == value].sort_values("dim")
        label = labels.get(value, f"{key} = {value}")
        curve(
            ax,
            s["dim"].to_numpy(),
            np.maximum(s["mean"].to_numpy(), 1e-5),
            s["sem"].to_numpy(),
            label,
            color,
        )
    ax.set(xlabel="memory dimension d", ylabel="population error", title=title)
    ax.legend(fontsize=7)


def figure7(step: pd.DataFrame, batch: pd.DataFrame) -> Figure:
    """Step size (SGD, B = 64, T = 10240, one curve per lr) and batch size (sign-Adam,
    T = 1024, tuned lr, B = 16 vs 1024)."""
    fig, (left, right) = new_figure(2)
    lr_labels = {lr: f"lr = {lr:g}" for lr in step["lr"].unique()}
    _panel(left, seed_means(step, ["lr"]), "lr", lr_labels, "SGD, B = 64, T = 10240: step size")
    batch_labels = {b: f"B = {int(b)}" for b in batch["batch_size"].unique()}
    _panel(
        right,
        tuned(batch, ["batch_size"]),
        "batch_size",
        batch_labels,
        "sign-Adam, T = 1024, tuned lr",
    )
    return fig


def figure8(optimizers: pd.DataFrame, layer_norm: pd.DataFrame, learned: pd.DataFrame) -> Figure:
    """Adam vs SGD (tuned lr, B = 256, T = 10240); layer norm (sign-Adam, lr = 1, B = 1024);
    learned embeddings (SGD, lr = 1, B = 16, T = 10240)."""
    fig, axes = new_figure(3)
    _panel(
        axes[0],
        tuned(optimizers, ["optimizer"]),
        "optimizer",
        {"sgd": "SGD", "adam": "Adam(β = 0)"},
        "B = 256, T = 10240, tuned lr",
    )
    _panel(
        axes[1],
        seed_means(layer_norm, ["layer_norm"]),
        "layer_norm",
        {False: "no layer norm", True: "layer norm"},
        "sign-Adam, lr = 1, B = 1024",
    )
    _panel(
        axes[2],
        seed_means(learned, ["model"]),
        "model",
        {"matrix": "W only", "learned": "W, E, U learned"},
        "SGD, lr = 1, B = 16, T = 10240",
    )
    return fig

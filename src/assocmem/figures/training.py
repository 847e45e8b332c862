"""Figures of trained memories (Cabannes et al. 2024, Figures 5, 7 and 8; see the docs:
science/figures.md) from stored runs.

Panels against d read tidy training rows (one per run: config columns, seed, error, status);
panels against training steps read curve rows (one per run and evaluated step, as given by
:func:`assocmem.sweep.results.load_curves`). Both plot the seed-averaged error with a 95 %
band. "Tuned lr" is honest selection: per (setting, d) the lr of lowest *seed-averaged* error,
never each seed's own best (the authors' optimistic oracle).
"""

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from assocmem.analysis.lr_selection import tuned
from assocmem.figures.style import BAND_Z, colors, curve, new_figure, summarise


def seed_means(frame: pd.DataFrame, keys: Sequence[str]) -> pd.DataFrame:
    """Mean and standard error of the error over seeds, per ``keys`` (+ dim)."""
    return summarise(frame, [*keys, "dim"])


def _panel(ax: Axes, stats: pd.DataFrame, key: str, labels: dict[Any, str], title: str) -> None:
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


def _steps_panel(
    ax: Axes,
    curves: pd.DataFrame,
    keys: Sequence[str],
    label: Callable[[tuple[Any, ...]], str],
    title: str,
) -> None:
    """Seed-averaged error vs training step (log x, linear y: errors may reach 0), one curve
    per value of ``keys``; step 0 (the initial memory) is left out of the log axis."""
    stats = summarise(curves[curves["step"] > 0], [*keys, "step"])
    values = list(dict.fromkeys(stats[list(keys)].itertuples(index=False, name=None)))
    for value, color in zip(values, colors(len(values)), strict=True):
        s = stats[(stats[list(keys)] == pd.Series(value, index=list(keys))).all(axis=1)]
        s = s.sort_values("step")
        mean, band = s["mean"].to_numpy(), BAND_Z * s["sem"].to_numpy()
        ax.plot(s["step"], mean, lw=1.5, label=label(value), color=color)
        ax.fill_between(s["step"], mean - band, mean + band, color=color, alpha=0.2, lw=0)
    ax.set_xscale("log")
    ax.set(xlabel="training step", ylabel="population error", title=title)
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=7)


def figure5(curves: pd.DataFrame) -> Figure:
    """Real SGD against the Eq. (16) q-update approximation along training (Figure 5).

    Parameters
    ----------
    curves : pandas.DataFrame
        Curve rows (:func:`load_curves`) with ``model`` (``"matrix"`` and ``"qupdate"``),
        ``dim``, ``n_inputs``, ``step``, ``seed`` and ``error``.

    Returns
    -------
    matplotlib.figure.Figure
        One panel per d: the seed-averaged error against the step, one curve per model, with
        95 % bands.

    Notes
    -----
    Cabannes et al. (2024), Figure 5 and Eq. (16); see the docs: science/figures.md.
    """
    dims = sorted(curves["dim"].unique())
    fig, axes = new_figure(len(dims))
    names = {"matrix": "SGD", "qupdate": "Eq. 16 approximation"}
    for ax, d in zip(axes, dims, strict=True):
        n = int(curves["n_inputs"].iloc[0])
        where = "d ≥ N" if d >= n else "d < N"
        _steps_panel(
            ax, curves[curves["dim"] == d], ["model"], lambda v: names[v[0]], f"d = {d} ({where})"
        )
    return fig


def schedule_label(value: tuple[Any, ...]) -> str:
    schedule, lr, decay_steps, factor = value
    if schedule == "constant":
        return f"lr = {lr:g}"
    steps = ", ".join(str(s) for s in decay_steps)
    return f"lr = {lr:g}, ×{factor:g} at step {steps}"


def figure7(step: pd.DataFrame, batch: pd.DataFrame, schedules: pd.DataFrame) -> Figure:
    """Step size, batch size and schedules (Figure 7).

    Parameters
    ----------
    step : pandas.DataFrame
        Training rows (SGD, B = 64, T = 10240) with ``lr``, ``dim``, ``seed``, ``error``: one
        curve per lr.
    batch : pandas.DataFrame
        Training rows (sign-Adam, T = 1024) with ``batch_size`` and ``lr``: one curve per B at
        its tuned lr (lowest seed-averaged error).
    schedules : pandas.DataFrame
        Curve rows (batch 1, N = 10, d = 5) with ``schedule``, ``lr``, ``decay_steps``,
        ``decay_factor``, ``step`` and ``error``.

    Returns
    -------
    matplotlib.figure.Figure
        Three panels.

    Notes
    -----
    Cabannes et al. (2024), Figure 7; see the docs: science/figures.md and
    science/optimisation.md.
    """
    fig, (left, right, sched) = new_figure(3)
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
    _steps_panel(
        sched,
        schedules,
        ["schedule", "lr", "decay_steps", "decay_factor"],
        schedule_label,
        "SGD, B = 1, N = 10, d = 5: schedules",
    )
    return fig


def figure8(
    optimizers: pd.DataFrame,
    layer_norm: pd.DataFrame,
    learned: pd.DataFrame,
    full_batch: pd.DataFrame,
    small_dim: pd.DataFrame,
    geometry: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
) -> Figure:
    """Optimisers, layer norm, learned embeddings, full batch and d = 2 (Figure 8).

    Parameters
    ----------
    optimizers : pandas.DataFrame
        Training rows (B = 256, T = 10240) with ``optimizer`` and ``lr``: Adam against SGD at
        their tuned lr.
    layer_norm : pandas.DataFrame
        Rows (sign-Adam, lr = 1, B = 1024) with ``layer_norm``.
    learned : pandas.DataFrame
        Rows (SGD, lr = 1, B = 16) with ``model`` ``"matrix"`` and ``"learned"``.
    full_batch : pandas.DataFrame
        Curve rows of full-batch GD, sign-GD and normalised GD with ``optimizer``, ``lr``,
        ``step``; each at the lr reaching zero error soonest.
    small_dim : pandas.DataFrame
        Rows of d = 2 learned embeddings with ``n_outputs``.
    geometry : tuple of numpy.ndarray, optional
        ``(W e_x of shape (N, 2), U of shape (M, 2), targets of shape (N,))`` of one such memory.

    Returns
    -------
    matplotlib.figure.Figure
        Two rows of three panels (the last empty without ``geometry``).

    Notes
    -----
    Cabannes et al. (2024), Figure 8; see the docs: science/figures.md and
    science/optimisation.md.
    """
    # Six panels, each a few plain plotting calls: kept in one place, in reading order.
    fig, axes = new_figure(3, rows=2)
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
    best = fastest_to_zero(full_batch, ["optimizer"])
    chosen = full_batch.merge(best[["optimizer", "lr"]], on=["optimizer", "lr"])
    names = {"sgd": "GD", "sign_sgd": "sign-GD", "normalized_sgd": "normalised GD"}
    _steps_panel(
        axes[3],
        chosen,
        ["optimizer", "lr"],
        lambda v: f"{names.get(v[0], v[0])} (lr {v[1]:g})",
        f"full batch, N = d = {int(full_batch['dim'].iloc[0])}, fastest lr",
    )
    stats = summarise(small_dim, ["n_outputs"]).sort_values("n_outputs")
    ax = axes[4]
    mean, band = stats["mean"].to_numpy(), BAND_Z * stats["sem"].to_numpy()
    color = colors(1)[0]
    ax.plot(stats["n_outputs"], mean, marker="o", lw=1.5, color=color, label="E, W, U learned")
    ax.fill_between(stats["n_outputs"], mean - band, mean + band, color=color, alpha=0.2, lw=0)
    n = int(small_dim["n_inputs"].iloc[0])
    ax.set(
        xlabel="number of classes M",
        ylabel="population error",
        title=f"d = {int(small_dim['dim'].iloc[0])}, N = {n}, full-batch Adam",
    )
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=7)
    if geometry is None:
        axes[5].set_axis_off()
    else:
        embedding_geometry(axes[5], *geometry, "d = 2, M = 5: $W e_x$ by class; arrows: $u_y$")
    return fig


def steps_to_zero(curves: pd.DataFrame, keys: Sequence[str]) -> pd.DataFrame:
    """Per (keys, lr): the first evaluated step from which the seed-averaged error stays 0
    (``inf`` if it never does) and the final seed-averaged error."""
    stats = summarise(curves, [*keys, "lr", "step"]).sort_values("step")
    rows = []
    for point, s in stats.groupby([*keys, "lr"], sort=True):
        steps, mean = s["step"].to_numpy(), s["mean"].to_numpy()
        wrong = np.flatnonzero(mean > 0)
        if not wrong.size:
            first = float(steps[0])
        elif wrong[-1] + 1 < len(steps):
            first = float(steps[wrong[-1] + 1])
        else:
            first = np.inf
        rows.append((*point, first, float(mean[-1])))
    return pd.DataFrame(rows, columns=[*keys, "lr", "steps_to_zero", "final"])


def fastest_to_zero(curves: pd.DataFrame, keys: Sequence[str]) -> pd.DataFrame:
    """Per value of ``keys``: the lr reaching zero error in fewest steps (else lowest final
    error), with its steps to zero and final error."""
    table = steps_to_zero(curves, keys).sort_values(["steps_to_zero", "final"], kind="stable")
    return table.groupby(list(keys), sort=True).head(1).reset_index(drop=True)


def embedding_geometry(
    ax: Axes, inputs: np.ndarray, outputs: np.ndarray, targets: np.ndarray, title: str
) -> None:
    """2-D input representations coloured by class; output embeddings as arrows (directions,
    rescaled to the spread of the inputs)."""
    palette = colors(outputs.shape[0])
    scale = 0.8 * np.linalg.norm(inputs, axis=1).max() / np.linalg.norm(outputs, axis=1).max()
    for y, color in enumerate(palette):
        rows = inputs[targets == y]
        ax.scatter(rows[:, 0], rows[:, 1], s=10, color=color, label=f"class {y}")
        ax.annotate(
            "",
            xy=tuple(scale * outputs[y]),
            xytext=(0, 0),
            arrowprops={"color": color, "lw": 1.2, "arrowstyle": "->"},
        )
    ax.set_aspect("equal", adjustable="datalim")
    ax.set(xlabel="coordinate 1", ylabel="coordinate 2", title=title)
    ax.legend(fontsize=6, markerscale=0.8)

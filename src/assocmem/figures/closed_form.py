"""Figures of closed-form memories: Figure 1 (joint law), Figure 3 (contours), Figure 4 (schemes
with infinite data) and the memory-matrix pictures (PAPER.md §5)."""

import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from assocmem.figures.style import colors, curve, new_figure, summarise, theory_line


def frame_from_records(records: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """Tidy rows from closed-form records (``--format json`` output): one row per trial."""
    rows = []
    for r in records:
        n_samples = math.inf if r["n_samples"] is None else r["n_samples"]
        for trial, error in enumerate(r["errors"]):
            rows.append(
                {
                    "scheme": r["scheme"],
                    "dim": r["dim"],
                    "n_samples": n_samples,
                    "trial": trial,
                    "error": error,
                }
            )
    return pd.DataFrame(rows)


def _label_samples(t: float) -> str:
    return "T = ∞" if math.isinf(t) else f"T = {int(t):,}"


SCHEME_LABELS = {"uniform": "q = 1", "population": "q = p", "threshold:P=d/8": "q = 1{x ≤ d/8}"}


def figure4(frame: pd.DataFrame) -> Figure:
    """Error vs d, infinite data: q = 1, q = p, thresholding; dashed 0.35 d^-1/4 and 3.5 d^-1."""
    fig, (ax,) = new_figure(1, width=5.0, height=3.8)
    stats = summarise(frame, ["scheme", "dim"])
    schemes = list(dict.fromkeys(frame["scheme"]))
    for scheme, color in zip(schemes, colors(len(schemes)), strict=True):
        s = stats[stats["scheme"] == scheme]
        curve(
            ax,
            s["dim"].to_numpy(),
            s["mean"].to_numpy(),
            s["sem"].to_numpy(),
            SCHEME_LABELS.get(scheme, scheme),
            color,
        )
    dims = np.sort(stats["dim"].unique())
    theory_line(ax, dims, 0.35, -0.25, "0.35 d^-1/4")
    theory_line(ax, dims, 3.5, -1.0, "3.5 d^-1")
    ax.set(
        xlabel="memory dimension d", ylabel="population error", title="Infinite data: error vs d"
    )
    ax.legend(fontsize=8)
    return fig


def figure1(frame: pd.DataFrame) -> Figure:
    """Joint law: error vs d (one curve per T), vs T (one per d), and the (d, T) contour."""
    fig, axes = new_figure(3)
    stats = summarise(frame, ["n_samples", "dim"])
    samples = np.sort(stats["n_samples"].unique())
    dims = np.sort(stats["dim"].unique())
    for t, color in zip(samples, colors(len(samples)), strict=True):
        s = stats[stats["n_samples"] == t]
        curve(
            axes[0],
            s["dim"].to_numpy(),
            s["mean"].to_numpy(),
            s["sem"].to_numpy(),
            _label_samples(t),
            color,
        )
    theory_line(axes[0], dims, 5.0, -1.0, "5 d^-1")
    axes[0].set(xlabel="memory dimension d", ylabel="population error", title="Error vs d")
    finite = [t for t in samples if math.isfinite(t)]
    for d, color in zip(dims, colors(len(dims)), strict=True):
        s = stats[(stats["dim"] == d) & np.isfinite(stats["n_samples"])]
        curve(
            axes[1],
            s["n_samples"].to_numpy(),
            s["mean"].to_numpy(),
            s["sem"].to_numpy(),
            f"d = {d}",
            color,
        )
    theory_line(axes[1], np.asarray(finite), 0.5, -0.5, "0.5 T^-1/2")
    axes[1].set(xlabel="number of samples T", ylabel="population error", title="Error vs T")
    _contour(axes[2], stats[np.isfinite(stats["n_samples"])], "Error over (d, T)")
    for ax in axes[:2]:
        ax.legend(fontsize=7)
    return fig


def _contour(ax: Any, stats: pd.DataFrame, title: str) -> None:
    grid = stats.pivot(index="n_samples", columns="dim", values="mean")
    d, t = np.meshgrid(grid.columns.to_numpy(float), grid.index.to_numpy(float))
    levels = np.logspace(
        np.log10(max(grid.min().min(), 1e-4)), np.log10(max(grid.max().max(), 1e-3)), 12
    )
    filled = ax.contourf(
        d, t, np.clip(grid.to_numpy(), levels[0], None), levels=levels, norm="log", cmap="viridis"
    )
    ax.figure.colorbar(filled, ax=ax, label="population error", format="%.2g")
    ax.set(
        xscale="log",
        yscale="log",
        xlabel="memory dimension d",
        ylabel="number of samples T",
        title=title,
    )


def figure3(frame: pd.DataFrame) -> Figure:
    """(d, T) contours for the schemes without threshold (one panel per scheme)."""
    schemes = list(dict.fromkeys(frame["scheme"]))
    fig, axes = new_figure(len(schemes))
    stats = summarise(frame[np.isfinite(frame["n_samples"])], ["scheme", "n_samples", "dim"])
    for ax, scheme in zip(axes, schemes, strict=True):
        _contour(ax, stats[stats["scheme"] == scheme], scheme)
    return fig


def memory_matrices(scores: Mapping[str, np.ndarray], targets: np.ndarray) -> Figure:
    """Softmax of the N×M scores of each memory (rows: inputs by frequency; o marks f*(x))."""
    fig, axes = new_figure(len(scores), width=3.0, height=3.6)
    for ax, (label, s) in zip(axes, scores.items(), strict=True):
        z = np.exp(s - s.max(axis=1, keepdims=True))
        image = ax.imshow(
            z / z.sum(axis=1, keepdims=True), cmap="Blues", vmin=0, vmax=1, aspect="auto"
        )
        ax.scatter(
            targets, np.arange(len(targets)), marker="o", facecolors="none", edgecolors="red", s=30
        )
        ax.set(xlabel="output y", ylabel="input x", title=label)
    fig.colorbar(image, ax=axes, label="softmax of scores")
    return fig


FIGURES: dict[str, Callable[[pd.DataFrame], Figure]] = {"1": figure1, "3": figure3, "4": figure4}


def save(fig: Figure, path_stem: str | Path, formats: Sequence[str] = ("png", "svg")) -> list[Path]:
    """Write the figure as ``stem.png`` and ``stem.svg`` (or other formats); returns the paths."""
    paths = []
    for fmt in formats:
        path = Path(f"{path_stem}.{fmt}")
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path, dpi=150, bbox_inches="tight")
        paths.append(path)
    return paths

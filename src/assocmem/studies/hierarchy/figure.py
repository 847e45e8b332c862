"""The figure of the hierarchy study (docs: beyond/hierarchy.md): memories in series against
one direct memory. Records in (the rows of the ``hierarchy`` and ``hierarchy_train`` sweep
kinds), a :class:`matplotlib.figure.Figure` out."""

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import NullFormatter

from assocmem.figures.style import BAND_Z, colors, new_figure
from assocmem.studies.hierarchy.stats import compare, trained_summary

LINES: dict[tuple[str, str], tuple[str, str]] = {  # (metric, parity) → label, colour
    ("direct", ""): ("direct memory (d)", "black"),
    ("hard", "matrix"): ("hard, equal matrices", "#1f77b4"),
    ("hard", "embeddings"): ("hard, equal with embeddings", "#2ca02c"),
    ("soft", "matrix"): ("soft, equal matrices", "#d62728"),
}
PARTS = {  # measured column → label, colour; the predicted column of the same name
    "first": ("E₁ (memory 1)", "#9467bd"),
    "second": ("E₂ (memory 2, p∘f₁⁻¹)", "#8c564b"),
    "bound": ("E₁ + E₂ (union bound)", "#7f7f7f"),
    "hard": ("hard composition", "#1f77b4"),
    "soft": ("soft composition", "#d62728"),
}
PREDICTED = {"bound": "union_bound"}


def _positive(x: Any, y: Any, *more: Any) -> tuple[np.ndarray, ...]:
    """Points with y > 0 (an error of 0 has no place on log axes)."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    keep = y > 0
    return (x[keep], y[keep], *(np.asarray(m, float)[keep] for m in more))


def _band(ax: Axes, x: Any, mean: Any, sem: Any, label: str, color: str, **kw: Any) -> None:
    x, mean, sem = _positive(x, mean, sem)
    ax.plot(x, mean, marker="o", markersize=3, lw=1.5, label=label, color=color, **kw)
    low = np.clip(mean - BAND_Z * sem, mean * 1e-2, None)
    ax.fill_between(x, low, mean + BAND_Z * sem, color=color, alpha=0.15, lw=0)


def _ticks(ax: Axes, values: Any) -> None:
    """Label the measured values on a log x axis (no crowded minor labels)."""
    values = sorted({float(v) for v in values})
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xticks(values, [f"{v:g}" if v < 1e4 else f"1e{math.log10(v):g}" for v in values])


def _comparison(ax: Axes, frame: pd.DataFrame, x: str) -> None:
    """Direct memory and hierarchies (best schemes) against ``x`` (``dim`` or ``n_samples``)."""
    drawn_direct = False
    for (metric, parity), (label, color) in LINES.items():
        if metric == "direct":
            continue
        rows = compare(frame, metric, parity).sort_values(x)
        if rows.empty:
            continue
        _band(ax, rows[x], rows["mean"], rows["sem"], label, color)
        if not drawn_direct:
            name, black = LINES[("direct", "")]
            _band(ax, rows[x], rows["direct_mean"], rows["direct_sem"], name, black)
            drawn_direct = True
    ax.set_xscale("log")
    ax.set_yscale("log")
    _ticks(ax, frame[x])


FLOOR = 1e-4  # panel (c)'s lowest error: predictions fall on to ~0 where every token is retrieved


def _parts_panel(ax: Axes, measured: pd.DataFrame, predicted: pd.DataFrame) -> None:
    """Each part measured (± 2 s.e., the lower bar stopped at the floor) and predicted
    (dashed, stopped below the floor); a measured error below the floor (0 where every token is
    retrieved) is a triangle on the floor."""
    for name, (label, color) in PARTS.items():
        x = measured["dim"].to_numpy(float)
        mean = measured[f"{name}_mean"].to_numpy(float)
        sem = measured[f"{name}_sem"].to_numpy(float)
        seen = mean >= FLOOR
        low = np.minimum(2 * sem[seen], mean[seen] - FLOOR)
        ax.errorbar(x[seen], mean[seen], [low, 2 * sem[seen]], fmt="o", ms=3,
                    color=color, label=label, capsize=2)  # fmt: skip
        ax.plot(x[~seen], np.full((~seen).sum(), FLOOR), ls="none", marker="v", ms=5, color=color)
        xp, yp = predicted["dim"].to_numpy(float), predicted[PREDICTED.get(name, name)]
        ax.plot(xp, np.where(yp.to_numpy(float) >= FLOOR, yp, np.nan), color=color, lw=1.2,
                ls="--")  # fmt: skip
    ax.plot([], [], ls="none", marker="v", ms=5, color="grey", label="measured < $10^{-4}$")
    ax.plot([], [], ls="--", lw=1.2, color="grey", label="theory")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_ylim(bottom=FLOOR)
    _ticks(ax, measured["dim"])


def _map_panel(ax: Axes, frame: pd.DataFrame, map_dim: int) -> None:
    rows = compare(frame, "hard", "matrix")
    rows = rows[(rows["dim"] == map_dim) & (rows["concept_map"] == "balanced")]
    rows = rows[rows["n_samples"] == math.inf]
    if rows.empty:
        ax.set_axis_off()
        return
    ks, alphas = sorted(set(rows["n_concepts"])), sorted(set(rows["alpha"]))
    grid = np.full((len(alphas), len(ks)), np.nan)
    for row in rows.to_dict("records"):
        ratio = max(row["mean"], 1e-6) / max(row["direct_mean"], 1e-6)
        grid[alphas.index(row["alpha"]), ks.index(row["n_concepts"])] = math.log10(ratio)
        sign = "+" if row["diff"] - 2 * row["diff_sem"] > 0 else "−"
        sign = sign if abs(row["diff"]) > 2 * row["diff_sem"] else "="
        cell = (ks.index(row["n_concepts"]), alphas.index(row["alpha"]))
        ax.text(*cell, sign, ha="center", va="center", fontsize=11)
    image = ax.imshow(grid, cmap="RdBu_r", vmin=-1.0, vmax=1.0, origin="lower", aspect="auto")
    ax.figure.colorbar(image, ax=ax, label=r"$\log_{10}(E_{hierarchy}\,/\,E_{direct})$")
    ax.set_xticks(range(len(ks)), [str(k) for k in ks])
    ax.set_yticks(range(len(alphas)), [f"{a:g}" for a in alphas])
    ax.set(xlabel="concepts K", ylabel="Zipf α",
           title=f"(d) who wins at d = {map_dim} (−: hierarchy, +: direct)")  # fmt: skip


def _trained_panels(nmi_ax: Axes, error_ax: Axes, frame: pd.DataFrame) -> None:
    summary = trained_summary(frame)
    if summary.empty:
        nmi_ax.set_axis_off()
        error_ax.set_axis_off()
        return
    hier = summary[summary["model"] == "hierarchy"]
    dims = sorted(set(hier["dim"]))
    palette = dict(zip(dims, colors(len(dims)), strict=True))
    for (k, dim), rows in hier.groupby(["n_concepts", "dim"]):
        rows = rows.sort_values("n_samples")
        style = "-" if k == min(hier["n_concepts"]) else "--"
        label = f"K = {k}, d = {dim}"
        nmi_ax.errorbar(rows["n_samples"], rows["nmi_mean"], 2 * rows["nmi_sem"], ls=style,
                        marker="o", ms=3, color=palette[dim], label=label)  # fmt: skip
        if k != min(hier["n_concepts"]) and dim == max(dims):
            nmi_ax.plot(rows["n_samples"], rows["nmi_null_mean"], ls="-.", color="grey",
                        label=f"K = {k}: random map, same residues")  # fmt: skip
    nmi_ax.axhline(0.9, color="black", lw=0.8, ls=":", label="f₁ found (NMI ≥ 0.9)")
    nmi_ax.set_xscale("log")
    _ticks(nmi_ax, hier["n_samples"])
    nmi_ax.set(xlabel="samples T", ylabel="NMI(ẑ, f₁)", title="(e) trained: is f₁ found?")
    nmi_ax.set_ylim(0.0, 1.3)  # NMI ≤ 1: the legend sits above the data
    nmi_ax.set_yticks(np.linspace(0.0, 1.0, 6))
    nmi_ax.legend(fontsize=6, ncols=2, loc="upper center")
    top = summary[summary["dim"] == max(dims)]
    for (k, model), rows in top.groupby(["n_concepts", "model"]):
        rows = rows.sort_values("n_samples")
        first = k == min(hier["n_concepts"])
        color = "black" if model == "direct" else ("#1f77b4" if first else "#ff7f0e")
        style = "-" if first else "--"
        label = "direct" if model == "direct" else f"hierarchy (hard), K = {k}"
        if model == "direct" and not first:
            continue  # the direct memory does not depend on K (y is balanced either way)
        _band(error_ax, rows["n_samples"], rows["error_mean"], rows["error_sem"], label, color,
              ls=style)  # fmt: skip
    error_ax.set_xscale("log")
    error_ax.set_yscale("log")
    _ticks(error_ax, top["n_samples"])
    error_ax.set(xlabel="samples T", ylabel="population error",
                 title=f"(f) trained, d = {max(dims)}")  # fmt: skip
    error_ax.legend(fontsize=6)


def hierarchy_figure(
    closed: pd.DataFrame,
    data: pd.DataFrame,
    trained: pd.DataFrame,
    *,
    parts_frames: tuple[pd.DataFrame, pd.DataFrame] | None,
    focus: Mapping[str, Any],
    scheme: str,
    map_dim: int,
) -> Figure:
    """Six panels: error vs d and vs T, the parts of the composition against theory, the map
    of who wins over (K, α), and the trained bottleneck's NMI and error vs T.

    Parameters
    ----------
    closed, data : pandas.DataFrame
        Rows of the ``hierarchy`` kind: the (K, α) sweep at T = ∞, and the finite-T sweep.
    trained : pandas.DataFrame
        Rows of the ``hierarchy_train`` kind.
    parts_frames : (measured, predicted) or None
        :func:`assocmem.studies.hierarchy.stats.parts` at the focus point and one scheme, and
        the predictions of :func:`assocmem.studies.hierarchy.theory.predict_hierarchy`.
    focus : mapping
        ``n_concepts`` and ``alpha`` of panels (a) and (c).
    scheme : str
        Memory 1's scheme in panel (c).
    map_dim : int
        The d of panel (d).
    """
    fig, axes = new_figure(3, width=4.6, height=3.6, rows=2)
    at = (closed["n_concepts"] == focus["n_concepts"]) & (closed["alpha"] == focus["alpha"])
    at &= closed["concept_map"] == "balanced"
    _comparison(axes[0], closed[at], "dim")
    axes[0].set(xlabel="direct memory dimension d", ylabel="population error",
                title=f"(a) K = {focus['n_concepts']}, α = {focus['alpha']:g}, T = ∞")  # fmt: skip
    axes[0].legend(fontsize=6)
    if not data.empty:
        top = data[data["dim"] == data["dim"].max()]
        _comparison(axes[1], top, "n_samples")
        title = f"(b) d = {int(top['dim'].max())}, K = {int(top['n_concepts'].iloc[0])}"
        axes[1].set(xlabel="samples T", ylabel="population error", title=title)
        axes[1].legend(fontsize=6)
    if parts_frames is not None:
        _parts_panel(axes[2], *parts_frames)
        title = f"(c) parts, memory 1 at {scheme.partition(':')[2]}"
        axes[2].set(xlabel="direct memory dimension d (memories at ⌊d/√2⌋)",
                    ylabel="population error", title=title)  # fmt: skip
        axes[2].legend(fontsize=6)
    _map_panel(axes[3], closed, map_dim)
    _trained_panels(axes[4], axes[5], trained)
    return fig

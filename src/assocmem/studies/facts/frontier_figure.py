"""The capacity frontiers' figure (the experiment ``beyond-capacity``): reads stored
records, never computes a memory.

:func:`frontier_frame` turns the JSON of ``assocmem capacity --format json`` (one payload per
memory × M) into rows ``memory, outputs, dim, repeat, n_star``; :func:`capacity_figure` reads
them.
"""

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import NullFormatter

from assocmem.figures.style import colors, legend_below, new_figure
from assocmem.studies.facts.frontier_search import REFERENCE_CONSTANTS

MEMORY_LABELS = {"hebbian": "outer product (Hebbian)", "trained": "trained W (full-batch Adam)"}


def frontier_frame(payloads: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """Rows ``memory, outputs, dim, repeat, n_star`` from ``assocmem capacity`` JSON payloads.

    ``outputs`` is ``"N"`` (each input its own output) or M; a payload without ``memory`` or
    ``settings`` (older output) counts as hebbian with M = N.
    """
    rows = []
    for payload in payloads:
        memory = payload.get("memory", "hebbian")
        n_outputs = payload.get("settings", {}).get("n_outputs")
        outputs = "N" if n_outputs is None else str(n_outputs)
        for point in payload["points"]:
            for repeat, n_star in enumerate(point["n_star"]):
                rows.append({"memory": memory, "outputs": outputs, "dim": point["dim"],
                             "repeat": repeat, "n_star": n_star})  # fmt: skip
    return pd.DataFrame(rows)


def _repeats(part: pd.DataFrame) -> tuple[np.ndarray, list[np.ndarray]]:
    """The dims and, per d, the N* of every repeat."""
    groups = part.groupby("dim")["n_star"]
    return np.array([d for d, _ in groups], float), [g.to_numpy(float) for _, g in groups]


def _spread(values: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Medians and the (below, above) distances to the min and max of each array."""
    med = np.array([np.median(v) for v in values])
    return med, np.array([med - [v.min() for v in values], [v.max() for v in values] - med])


def _n_log_n_panel(ax: Axes, frame: pd.DataFrame) -> None:
    """M = N: d² against N* log N* (median, min–max over repeats), the fitted d² = ĉ·N log N
    (ĉ the median of d²/(N* log N*) over the larger half of the d, where finite-size effects
    are smallest) and the reference constants."""
    spans = []
    memories = sorted(set(frame["memory"]))
    for memory, color in zip(memories, colors(len(memories)), strict=True):
        dims, n_star = _repeats(frame[frame["memory"] == memory])
        x, xerr = _spread([v * np.log(v) for v in n_star])
        ax.errorbar(x, dims**2, xerr=xerr, marker="o", ms=4, lw=1.5, capsize=2, color=color,
                    label=MEMORY_LABELS.get(memory, memory))  # fmt: skip
        c_hat = float(np.median((dims**2 / x)[len(dims) // 2 :]))  # the larger half of d
        ax.plot(x, c_hat * x, color=color, lw=0.8, ls=":", label=f"fit: d² = {c_hat:.3g}·N log N")
        spans += [x.min(), x.max()]
    if spans:
        xs = np.geomspace(min(spans), max(spans), 50)
        for (name, c), ls in zip(REFERENCE_CONSTANTS.items(), ("--", "-."), strict=True):
            ax.plot(xs, c * xs, ls=ls, color="black", lw=1, label=f"d² = {c}·N log N, {name}")
    ax.set(xscale="log", yscale="log", xlabel="N* log N*", ylabel="d²",
           title="M = N: capacity frontier")  # fmt: skip
    legend_below(ax, ncols=1)  # the references cross the whole panel


def _linear_panel(ax: Axes, frame: pd.DataFrame, outputs: str) -> None:
    """Small M: N* against d (median, min–max over repeats), with N* = k·d fitted (k the
    median of N*/d over the larger half of the d)."""
    memories = sorted(set(frame["memory"]))
    for memory, color in zip(memories, colors(len(memories)), strict=True):
        dims, n_star = _repeats(frame[frame["memory"] == memory])
        y, yerr = _spread(n_star)
        ax.errorbar(dims, y, yerr=yerr, marker="o", ms=4, lw=1.5, capsize=2, color=color,
                    label=MEMORY_LABELS.get(memory, memory))  # fmt: skip
        k = float(np.median((y / dims)[len(dims) // 2 :]))
        ax.plot(dims, k * dims, color=color, lw=0.8, ls=":", label=f"fit: N* = {k:.3g}·d")
    ax.set(xscale="log", yscale="log", xlabel="memory dimension d", ylabel="N* (accuracy ≥ τ)",
           title=f"M = {outputs}: capacity frontier")  # fmt: skip
    _dim_ticks(ax, sorted(set(frame["dim"])))
    ax.legend(fontsize=6)


def _dim_ticks(ax: Axes, dims: Sequence[float]) -> None:
    """Label the measured d on a log axis (no crowded minor labels)."""
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xticks([float(d) for d in dims], [f"{d:g}" for d in dims])


def capacity_figure(frame: pd.DataFrame) -> Figure:
    """Capacity frontiers of the Hebbian and trained memories: a panel for M = N (d² vs
    N log N, fitted constant and the references 1.3 and 2) and one per small M (N* vs d)."""
    small = sorted({o for o in frame["outputs"] if o != "N"}, key=int)
    fig, axes = new_figure(int((frame["outputs"] == "N").any()) + len(small))
    panels = iter(axes)
    if (frame["outputs"] == "N").any():
        _n_log_n_panel(next(panels), frame[frame["outputs"] == "N"])
    for outputs in small:
        _linear_panel(next(panels), frame[frame["outputs"] == outputs], outputs)
    return fig

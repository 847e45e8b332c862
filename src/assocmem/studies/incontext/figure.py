"""The in-context study's figure: plotting only, from the summaries of
:mod:`assocmem.studies.incontext.summary` (docs: beyond/incontext.md).

Six panels, one colour per memory throughout: (a, b) recall error against T at uniform and
Zipf keys, the Hebbian prediction dashed; (c) error against d at one T; (d) capacity T*(d);
(e) softmax attention's capacity at large T with hard attention's extreme-value theory, drawn
beyond the measured d; (f) recall against state size at the MQAR benchmark's sizes.
"""

import math

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import NullFormatter

from assocmem.figures.style import new_figure

PALETTE = {  # one colour per memory, in every panel
    "hebbian": "#1b9e77",
    "hebbian γ=0.95": "#66c2a5",
    "delta β=1": "#d95f02",
    "delta β=1 ×4": "#7570b3",
    "delta β=1 γ=0.95": "#fc8d62",
    "softmax β=1": "#e7298a",
    "hard": "#a6761d",
}


def _colour(memory: str) -> str:
    return PALETTE.get(memory, "#666666")


def _middle(values: pd.Series) -> int:
    ordered = sorted(int(v) for v in values.unique())
    return ordered[len(ordered) // 2] if len(ordered) > 2 else ordered[-1]


def _against_t(ax: Axes, c: pd.DataFrame, alpha: float, dim: int) -> None:
    rows = c[(c["alpha"] == alpha) & (c["dim"] == dim)]
    for memory, g in rows.groupby("memory", sort=False):
        g = g.sort_values("n_pairs")
        ax.errorbar(g["n_pairs"], g["error"], yerr=2 * g["se"], color=_colour(str(memory)),
                    marker="o", ms=3, lw=1.2, capsize=2, label=memory)  # fmt: skip
        if g["predicted"].notna().any():
            ax.plot(g["n_pairs"], g["predicted"], color=_colour(str(memory)), ls="--", lw=1)
    ax.set(xscale="log", xlabel="pairs written $T$", ylabel="recall error",
           title=f"error vs $T$, $\\alpha = {alpha:g}$, $d = {dim}$")  # fmt: skip


def _dims_axis(ax: Axes, dims: pd.Series) -> None:
    """A log d axis labelled at the measured d."""
    ticks = sorted(int(d) for d in dims.unique())
    ax.set_xticks(ticks, [str(d) for d in ticks])
    ax.xaxis.set_minor_formatter(NullFormatter())


def _against_d(ax: Axes, c: pd.DataFrame, n_pairs: int) -> None:
    rows = c[(c["alpha"] == 0) & (c["n_pairs"] == n_pairs)]
    for memory, g in rows.groupby("memory", sort=False):
        g = g[g["error"] > 0].sort_values("dim")  # a log axis: an error of 0 is left out
        low = np.minimum(2 * g["se"], 0.9 * g["error"])  # a log axis: the bar stays above 0
        ax.errorbar(g["dim"], g["error"], yerr=[low, 2 * g["se"]], color=_colour(str(memory)),
                    marker="o", ms=3, lw=1.2, capsize=2, label=memory)  # fmt: skip
        theory = g[g["predicted"] > 0]
        if len(theory):
            ax.plot(theory["dim"], theory["predicted"], color=_colour(str(memory)), ls="--", lw=1)
    ax.set(xscale="log", yscale="log", xlabel="dimension $d$", ylabel="recall error",
           title=f"error vs $d$, $\\alpha = 0$, $T = {n_pairs}$")  # fmt: skip
    _dims_axis(ax, rows["dim"])


def _capacity(ax: Axes, caps: pd.DataFrame) -> None:
    rows = caps[caps["alpha"] == 0]
    for memory, g in rows.groupby("memory", sort=False):
        g = g.sort_values("dim")
        mean, two_se = g["mean"].clip(lower=0.5), 2 * g["se"].fillna(0)
        ax.errorbar(g["dim"], mean, yerr=[np.minimum(two_se, 0.9 * mean), two_se],
                    color=_colour(str(memory)), marker="s", ms=3, lw=1.2, capsize=2,
                    label=memory)  # fmt: skip
    ax.set(xscale="log", yscale="log", xlabel="dimension $d$", ylabel="capacity $T^*(d)$",
           title="capacity at 99 % recall, $\\alpha = 0$")  # fmt: skip
    _dims_axis(ax, rows["dim"])


def _softmax(ax: Axes, caps: pd.DataFrame, n_keys: int) -> None:
    for memory, g in caps.groupby("memory", sort=False):
        g = g.sort_values("dim")
        mean, two_se = g["mean"].clip(lower=0.5), 2 * g["se"].fillna(0)
        ax.errorbar(g["dim"], mean, yerr=[np.minimum(two_se, 0.9 * mean), two_se],
                    color=_colour(str(memory)), marker="s", ms=3, lw=1.2, capsize=2,
                    label=memory)  # fmt: skip
        theory = g[g["theory"].notna() & (g["theory"] > 0)]
        if len(theory):
            ax.plot(theory["dim"], theory["theory"], color=_colour(str(memory)), ls="--", lw=1,
                    label="extreme-value theory")  # fmt: skip
    ax.set(yscale="log", xlabel="dimension $d$", ylabel="capacity $T^*(d)$",
           title=f"softmax attention, $N = {n_keys}$")  # fmt: skip
    ax.legend(fontsize=8, loc="upper left")


def _state(ax: Axes, c: pd.DataFrame) -> None:
    t = int(c["n_pairs"].max())
    rows = c[c["n_pairs"] == t]
    for memory, g in rows.groupby("memory", sort=False):
        g = g.sort_values("dim")
        ax.errorbar(g["state_size"], 1 - g["error"], yerr=2 * g["se"], color=_colour(str(memory)),
                    marker="o", ms=3, lw=1.2, capsize=2, label=memory)  # fmt: skip
    ax.set(xscale="log", xlabel="state size (numbers)", ylabel="recall",
           title=f"MQAR sizes: $N = M = 4096$, $T = {t}$")  # fmt: skip


def incontext_figure(
    c: pd.DataFrame, caps: pd.DataFrame, softmax: pd.DataFrame, mqar: pd.DataFrame, n_keys: int
) -> Figure:
    """The six panels from the summaries (``curves`` of the main and MQAR sweeps,
    ``capacities`` of the main and the large-T softmax sweeps, whose N is ``n_keys``)."""
    fig, flat = new_figure(3, width=4.4, height=3.5, rows=2)
    axes = np.array(flat).reshape(2, 3)
    dim = _middle(c["dim"])
    _against_t(axes[0, 0], c, 0.0, dim)
    zipf = sorted(a for a in c["alpha"].unique() if a > 0)
    _against_t(axes[0, 1], c, zipf[len(zipf) // 2] if zipf else 0.0, dim)
    _against_d(axes[0, 2], c, int(np.median(sorted(c["n_pairs"].unique()))))
    _capacity(axes[1, 0], caps)
    _softmax(axes[1, 1], softmax, n_keys)
    _state(axes[1, 2], mqar)
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=math.ceil(len(labels) / 2),
               fontsize=9, frameon=False, title="memory (dashed: theory)",
               title_fontsize=9)  # fmt: skip
    return fig

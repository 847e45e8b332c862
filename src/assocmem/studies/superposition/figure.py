"""The figure of the superposition study (docs: beyond/superposition.md): plotting only.

Every function reads summary frames that :mod:`assocmem.studies.superposition.experiment` makes from
the stored records (means, standard errors, and the predictions of
:mod:`assocmem.studies.superposition.theory` in a ``predicted`` column) and draws them:

- :func:`heads_panel`: error vs H at one d, one curve per arrangement (frame ``heads,
  arrangement, mean, sem, predicted``);
- :func:`dims_panel`: error vs d, one curve per H (``heads, dim, mean, sem, predicted``) with
  fitted slopes;
- :func:`trained_panel`: trained error vs H per optimiser (``heads, optimizer, mean, sem``);
- :func:`specialisation_panel`: the participation ratio of the per-head margins over H, by
  frequency rank (``heads, optimizer, rank, participation, superposed, routed``).
"""

from collections.abc import Mapping

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import NullFormatter

from assocmem.figures.style import BAND_Z, colors, curve, legend_below, new_figure

ARRANGEMENT_LABELS = {
    "same": "same q in every head",
    "band": "routed by frequency band",
    "random": "routed at random",
    "band-gated": "band, read own head",
    "random-gated": "random, read own head",
}
OPTIMIZER_STYLES = {"adam": "-", "sgd": "--"}
OPTIMIZER_LABELS = {"adam": "sign-Adam", "sgd": "SGD"}


def _log2_ticks(ax: Axes, values: list[float]) -> None:
    ax.set_xscale("log", base=2)
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xticks(values, [f"{v:g}" for v in values])


def _predicted(ax: Axes, x: np.ndarray, y: np.ndarray, color: str) -> None:
    ok = np.isfinite(y) & (y > 0)
    ax.plot(x[ok], y[ok], ls="--", lw=1, color=color)


def heads_panel(ax: Axes, stats: pd.DataFrame, title: str) -> None:
    """Error vs H, one curve per arrangement (band: ±1.96 s.e.), its prediction dashed."""
    arrangements = [a for a in ARRANGEMENT_LABELS if a in set(stats["arrangement"])]
    for arrangement, color in zip(arrangements, colors(len(arrangements)), strict=True):
        part = stats[stats["arrangement"] == arrangement].sort_values("heads")
        x = part["heads"].to_numpy(float)
        curve(ax, x, part["mean"].to_numpy(float), part["sem"].to_numpy(float),
              ARRANGEMENT_LABELS[arrangement], color)  # fmt: skip
        _predicted(ax, x, part["predicted"].to_numpy(float), color)
    _log2_ticks(ax, sorted(set(stats["heads"].astype(float))))
    ax.set(xlabel="heads H", ylabel="population error")
    ax.set_title(title, fontsize=9)


def dims_panel(ax: Axes, stats: pd.DataFrame, slopes: Mapping[int, str], title: str) -> None:
    """Error vs d, one curve per H (label: its fitted slope), its prediction dashed. A zero
    error (every token retrieved) has no point on log axes: the curve stops there."""
    heads = sorted(set(stats["heads"]))
    for h, color in zip(heads, colors(len(heads)), strict=True):
        part = stats[(stats["heads"] == h) & (stats["mean"] > 0)].sort_values("dim")
        x = part["dim"].to_numpy(float)
        curve(ax, x, part["mean"].to_numpy(float), part["sem"].to_numpy(float),
              f"H = {h}: {slopes.get(h, '')}", color)  # fmt: skip
        _predicted(ax, x, part["predicted"].to_numpy(float), color)
    dims = sorted(set(stats["dim"].astype(float)))
    _log2_ticks(ax, dims)
    if len(dims) > 6:
        ax.tick_params(axis="x", labelsize=7, labelrotation=45)
    ax.set(xlabel="single-memory dimension d", ylabel="population error")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=6)


def trained_panel(ax: Axes, stats: pd.DataFrame, title: str) -> None:
    """Trained error vs H per optimiser (at its selected lr), ±1.96 s.e. over seeds."""
    for optimizer, style in OPTIMIZER_STYLES.items():
        part = stats[stats["optimizer"] == optimizer].sort_values("heads")
        if part.empty:
            continue
        x, mean, sem = (part[k].to_numpy(float) for k in ("heads", "mean", "sem"))
        ax.errorbar(x, mean, yerr=BAND_Z * sem, ls=style, marker="o", ms=3, capsize=2,
                    color="black", label=OPTIMIZER_LABELS[optimizer])  # fmt: skip
    ax.set_yscale("log")
    _log2_ticks(ax, sorted(set(stats["heads"].astype(float))))
    ax.set(xlabel="heads $H$ ($H\\,d_h = d$)", ylabel="population error")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7)


def specialisation_panel(ax: Axes, bins: pd.DataFrame, title: str) -> None:
    """PR/H of the per-head margins by frequency rank: trained by sign-Adam (solid), one colour
    per H ≥ 2; at the largest H also trained by SGD (dashed) and the closed-form references on
    the same embeddings (q = p in every head: dotted; q = p routed at random: dash-dotted).
    Every H with every reference would be 4 curves per H, drawn over each other."""
    heads = sorted(h for h in set(bins["heads"]) if h > 1)
    palette = dict(zip(heads, colors(len(heads)), strict=True))
    for h in heads:
        rows = bins[(bins["heads"] == h) & (bins["optimizer"] == "adam")].sort_values("rank")
        ax.plot(rows["rank"].to_numpy(float) + 1, rows["participation"] / h, marker="o", ms=2,
                color=palette[h], label=f"H = {h}, sign-Adam")  # fmt: skip
    top = bins[bins["heads"] == heads[-1]]
    sgd = top[top["optimizer"] == "sgd"].sort_values("rank")
    x = sgd["rank"].to_numpy(float) + 1
    ax.plot(x, sgd["participation"] / heads[-1], ls="--", marker="o", ms=2,
            color=palette[heads[-1]], label=f"H = {heads[-1]}, SGD")  # fmt: skip
    first = top[top["optimizer"] == top["optimizer"].iloc[0]].sort_values("rank")
    x = first["rank"].to_numpy(float) + 1
    for column, style, label in (("superposed", ":", "q = p in every head"),
                                 ("routed", "-.", "q = p routed")):  # fmt: skip
        ax.plot(x, first[column] / heads[-1], ls=style, lw=1, color="grey",
                label=f"H = {heads[-1]}, {label}")  # fmt: skip
    ax.set_xscale("log")
    ax.set(xlabel="frequency rank (bin start + 1)", ylabel="participation ratio / $H$",
           ylim=(0, 1.05))  # fmt: skip
    ax.set_title(title, fontsize=9)
    legend_below(ax, handlelength=3)


def superposition_figure(
    heads_stats: Mapping[tuple[str, str], pd.DataFrame],
    dims_stats: pd.DataFrame,
    slopes: Mapping[int, str],
    trained: pd.DataFrame,
    bins: pd.DataFrame,
    titles: Mapping[str, str],
) -> Figure:
    """The study's figure: error vs H at each budget (one row per scheme), error vs d per H,
    trained error vs H and the trained heads' specialisation.

    ``heads_stats`` maps (scheme label, budget title) to a :func:`heads_panel` frame, in order;
    ``titles`` names the last three panels (``dims``, ``trained``, ``specialisation``).
    """
    n_columns = max(3, len({budget for _, budget in heads_stats}))
    schemes = list(dict.fromkeys(scheme for scheme, _ in heads_stats))
    rows = len(schemes) + 1
    fig, axes = new_figure(n_columns, width=4.0, height=3.2, rows=rows)
    for (scheme, budget), stats in heads_stats.items():
        row = schemes.index(scheme)
        column = [b for s, b in heads_stats if s == scheme].index(budget)
        heads_panel(axes[row * n_columns + column], stats, f"{scheme}\n{budget}")
    axes[0].legend(fontsize=6)
    last = axes[(rows - 1) * n_columns :]
    dims_panel(last[0], dims_stats, slopes, titles["dims"])
    trained_panel(last[1], trained, titles["trained"])
    specialisation_panel(last[2], bins, titles["specialisation"])
    for ax in last[3:]:
        ax.set_visible(False)
    return fig

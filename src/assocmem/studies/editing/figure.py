"""The editing study's figure: records of the ``editing`` run kind in, a figure out.

Panels (N = 1000 and α = 2 unless said): (a, b) the relative collateral damage of ROME edits
(C = I) against k/d for the threshold and q = p memories, one colour per d, the interference
theory dashed; (c) every method and memory at one d; (d) the edit capacity against d with the
theory; (e) which other tokens break, by decade of frequency rank; (f) edit success and
erasure against d; (g) the edited tokens' frequency; (h) N; (i) α.
"""

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import NullFormatter

from assocmem.figures.style import colors, legend_below, new_figure
from assocmem.studies.editing.summary import (
    break_fractions,
    capacity_summary,
    checkpoint_summary,
    relative_damage,
)

MEMORY_LABELS = {"threshold:P=d/8": "threshold d/8", "population": "q = p", "trained": "trained"}
METHOD_STYLES = {"replace": ":", "rome": "-", "rome_cov": "--"}
METHOD_LABELS = {"replace": "replace", "rome": "ROME C=I", "rome_cov": "ROME C=Σpeeᵀ"}
MEMORY_MARKERS = {"threshold:P=d/8": "o", "population": "s", "trained": "^"}
Theory = Mapping[tuple[str, float, int, int], Any]  # (memory, α, N, d) → EditPrediction | None


def _label(memory: Any, method: Any) -> str:
    return f"{MEMORY_LABELS.get(str(memory), str(memory))}, {METHOD_LABELS[str(method)]}"


def _palette(keys: Any) -> dict[Any, str]:
    """A colour per key, along viridis (none for no keys)."""
    keys = list(keys)
    return dict(zip(keys, colors(len(keys))[: len(keys)], strict=True))


def _legend(ax: Axes, fontsize: float = 6, ncol: int = 1, below: bool = False) -> None:
    """The panel's legend, where it has labelled lines (an empty panel has none); ``below``:
    under the axes, for a panel whose data leave no free corner."""
    if not ax.get_legend_handles_labels()[0]:
        return
    if below:
        legend_below(ax, fontsize=fontsize)
    else:
        ax.legend(fontsize=fontsize, ncol=ncol)


def _dim_axis(ax: Axes, values: Any) -> None:
    """A log axis labelled at the values themselves (no minor labels)."""
    ticks = sorted({int(v) for v in values})
    ax.set_xscale("log")
    ax.set_xticks(ticks, [str(t) for t in ticks])
    ax.xaxis.set_minor_formatter(NullFormatter())


Settings = tuple[int, float]  # (N, α) of the panels that show one law


def _main(frame: pd.DataFrame, settings: Settings = (1000, 2.0)) -> pd.DataFrame:
    n_inputs, alpha = settings
    picked: pd.DataFrame = frame[(frame["alpha"] == alpha) & (frame["n_inputs"] == n_inputs)]
    return picked


def _with_relative(frame: pd.DataFrame) -> pd.DataFrame:
    out = frame.copy()
    out["relative"] = relative_damage(out)
    return out


def damage_panel(
    ax: Axes, frame: pd.DataFrame, memory: str, theory: Theory, settings: Settings = (1000, 2.0)
) -> None:
    """Relative damage of ROME (C = I) edits against k/d, one colour per d; theory dashed."""
    rows = _with_relative(_main(frame, settings))
    rows = rows[(rows["memory"] == memory) & (rows["method"] == "rome")]
    rows = rows[(rows["operation"] == "edit") & (rows["band"] == "all")]
    summary = checkpoint_summary(rows, "relative")
    dims = sorted(summary["dim"].unique())
    for dim, color in _palette(dims).items():
        part = summary[summary["dim"] == dim].sort_values("k")
        x = part["k"].to_numpy(float) / dim
        ax.errorbar(
            x,
            part["mean"],
            part["two_se"],
            color=color,
            marker="o",
            ms=3,
            lw=1,
            capsize=2,
            label=f"d = {dim}",
        )
        prediction = theory.get((memory, settings[1], settings[0], int(dim)))
        if prediction is not None and prediction.error[0] > 0:
            ks = prediction.ks[1:].astype(float)
            ax.plot(
                ks / dim, prediction.damage[1:] / prediction.error[0], ls="--", color=color, lw=1
            )
    ax.set_xscale("log")
    ax.set_yscale("symlog", linthresh=0.01)
    ax.axhline(0.1, color="grey", lw=0.8, ls=":", label="+10 % (capacity)")
    ax.set_xlabel("edits per dimension k/d")
    ax.set_ylabel("relative damage to the other tokens")
    ax.set_title(f"ROME (C = I), {MEMORY_LABELS.get(memory, memory)}; dashed: theory")
    _legend(ax, fontsize=7)


def methods_panel(
    ax: Axes, frame: pd.DataFrame, dim: int, settings: Settings = (1000, 2.0)
) -> None:
    """Relative damage against k for every method and memory at one d."""
    rows = _with_relative(_main(frame, settings))
    rows = rows[(rows["dim"] == dim) & (rows["operation"] == "edit") & (rows["band"] == "all")]
    summary = checkpoint_summary(rows, "relative")
    palette = _palette(MEMORY_LABELS)
    for (memory, method), part in summary.groupby(["memory", "method"]):
        part = part.sort_values("k")
        ax.errorbar(
            part["k"],
            part["mean"],
            part["two_se"],
            ls=METHOD_STYLES[str(method)],
            color=palette.get(str(memory), "black"),
            marker=MEMORY_MARKERS.get(str(memory)),
            ms=3,
            lw=1,
            capsize=2,
            label=_label(memory, method),
        )
    ax.set_xscale("log")
    ax.set_yscale("symlog", linthresh=0.01)
    ax.set_xlabel("edits k")
    ax.set_ylabel("relative damage to the other tokens")
    ax.set_title(f"every method at d = {dim}")
    _legend(ax, fontsize=6, below=True)


def capacity_panel(
    ax: Axes, frame: pd.DataFrame, theory: Theory, settings: Settings = (1000, 2.0)
) -> None:
    """Median edit capacity (quartile bars) against d, ROME with and without the covariance;
    the theory for ROME (C = I) on the closed-form memories as thick lines."""
    summary = capacity_summary(_main(frame, settings))
    palette = _palette(MEMORY_LABELS)
    for (memory, method), part in summary.groupby(["memory", "method"]):
        if method == "replace":
            continue
        part = part[np.isfinite(part["median"])].sort_values("dim")
        color = palette.get(str(memory), "black")
        below = part["median"] - part["q25"]
        above = np.where(np.isfinite(part["q75"]), part["q75"] - part["median"], 0.0)
        ax.errorbar(
            part["dim"],
            part["median"],
            [below, above],
            ls=METHOD_STYLES[str(method)],
            color=color,
            marker=MEMORY_MARKERS.get(str(memory)),
            ms=3,
            lw=1,
            capsize=2,
            label=_label(memory, method),
        )
        if method == "rome":
            dims = sorted(frame.loc[frame["memory"] == memory, "dim"].unique())
            key = (str(memory), settings[1], settings[0])
            predicted = [theory.get((*key, int(d))) for d in dims]
            pairs = [(d, p.capacity) for d, p in zip(dims, predicted, strict=True) if p is not None]
            pairs = [(d, c) for d, c in pairs if np.isfinite(c)]
            if pairs:
                x, y = zip(*pairs, strict=True)
                label = f"theory, {_label(memory, method)}"
                ax.plot(x, y, color=color, lw=2.5, alpha=0.35, label=label)
    _dim_axis(ax, summary["dim"])
    ax.set_yscale("log")
    ax.set_xlabel("d")
    ax.set_ylabel("edits until the others' error is +10 %")
    ax.set_title("edit capacity (median, quartiles)")
    _legend(ax, fontsize=6, below=True)


def breaks_panel(
    ax: Axes, frame: pd.DataFrame, dim: int, k: int, settings: Settings = (1000, 2.0)
) -> None:
    """The share of other tokens answered before that k edits broke, by decade of rank."""
    table = break_fractions(_main(frame, settings), k)
    table = table[(table["dim"] == dim) & (table["operation"] == "edit")]
    decades = [c.removeprefix("broken_") for c in table.columns if c.startswith("broken_")]
    width = 0.8 / max(len(table), 1)
    for i, (_, row) in enumerate(table.iterrows()):
        values = [row[f"broken_{d}"] for d in decades]
        label = _label(row["memory"], row["method"])
        ax.bar(np.arange(len(decades)) + i * width, values, width, label=label)
    ax.set_xticks(np.arange(len(decades)) + 0.4 - width / 2, decades)
    ax.set_yscale("symlog", linthresh=1e-3)
    ax.set_ylim(0.0, 1.0)  # a share: the tallest bar fits
    ax.set_xlabel("frequency rank of the other tokens")
    ax.set_ylabel("share broken")
    ax.set_title(f"which tokens break (k = {k}, d = {dim})")
    _legend(ax, fontsize=5, below=True)


def success_panel(
    ax: Axes, frame: pd.DataFrame, k: int, n_outputs: int, settings: Settings = (1000, 2.0)
) -> None:
    """Edit success (solid) and the erased tokens' old-target retrieval (dotted) at k edits,
    against d; chance 1/M grey."""
    rows = _main(frame, settings)
    rows = rows[(rows["band"] == "all") & (rows["k"] == k)]
    summary = checkpoint_summary(rows, "success")
    palette = _palette(METHOD_LABELS)
    for (memory, method, operation), part in summary.groupby(["memory", "method", "operation"]):
        part = part.sort_values("dim")
        ax.errorbar(
            part["dim"],
            part["mean"],
            part["two_se"],
            color=palette[str(method)],
            ls="-" if operation == "edit" else ":",
            marker=MEMORY_MARKERS.get(str(memory)),
            ms=3,
            lw=1,
            capsize=2,
            label=_label(memory, method) if operation == "edit" else None,
        )
    ax.axhline(1.0 / n_outputs, color="grey", lw=0.8, label="chance 1/M")
    _dim_axis(ax, summary["dim"])
    ax.set_xlabel("d")
    ax.set_ylabel("share of the edited tokens")
    ax.set_title(f"k = {k}: edits held (solid), erased kept (dotted)")
    _legend(ax, fontsize=5, below=True)


def band_panel(ax: Axes, frame: pd.DataFrame, dim: int, settings: Settings = (1000, 2.0)) -> None:
    """Success of edits of tokens of each decade of rank at one d, per method and memory."""
    rows = _main(frame, settings)
    rows = rows[(rows["band"] != "all") & (rows["dim"] == dim) & (rows["operation"] == "edit")]
    summary = checkpoint_summary(rows, "success")
    order = sorted(summary["band"].unique(), key=lambda band: int(band.split("-")[0]))
    palette = _palette(METHOD_LABELS)
    for (memory, method), part in summary.groupby(["memory", "method"]):
        part = part.set_index("band").loc[order]
        ax.errorbar(
            np.arange(len(order)),
            part["mean"],
            part["two_se"],
            color=palette[str(method)],
            marker=MEMORY_MARKERS.get(str(memory)),
            ms=4,
            lw=1,
            capsize=2,
            label=_label(memory, method),
        )
    ax.set_xticks(np.arange(len(order)), order)
    ax.set_xlabel("frequency rank of the edited tokens")
    ax.set_ylabel("edit success")
    ax.set_title(f"edited tokens' frequency (d = {dim})")
    _legend(ax, fontsize=5, ncol=2)


def sizes_panel(ax: Axes, frame: pd.DataFrame, sizes: pd.DataFrame, dim: int) -> None:
    """ROME edit capacity at one d against N (sizes sweep and the main one), and against d at
    the second α (markers)."""
    alphas = set(sizes["alpha"])
    both = pd.concat([frame[(frame["dim"] == dim) & frame["alpha"].isin(alphas)], sizes])
    summary = capacity_summary(both)
    palette = _palette(METHOD_LABELS)
    for (memory, method), part in summary.groupby(["memory", "method"]):
        if method == "replace" or memory == "trained":
            continue
        part = part[np.isfinite(part["median"])].sort_values("n_inputs")
        ax.plot(
            part["n_inputs"],
            part["median"],
            color=palette[str(method)],
            marker=MEMORY_MARKERS.get(str(memory)),
            lw=1,
            label=_label(memory, method),
        )
    _dim_axis(ax, summary["n_inputs"])
    ax.set_yscale("log")
    ax.set_xlabel("number of facts N")
    ax.set_ylabel("edit capacity (median)")
    ax.set_title(f"against N (d = {dim})")
    _legend(ax, fontsize=6)


def alpha_panel(ax: Axes, frame: pd.DataFrame, n_inputs: int = 1000) -> None:
    """ROME edit capacity against d at each α (at N = ``n_inputs``)."""
    summary = capacity_summary(frame[frame["n_inputs"] == n_inputs])
    alphas = sorted(summary["alpha"].unique())
    palette = _palette(alphas)
    for (memory, method, alpha), part in summary.groupby(["memory", "method", "alpha"]):
        if method != "rome":
            continue
        part = part[np.isfinite(part["median"])].sort_values("dim")
        ax.plot(
            part["dim"],
            part["median"],
            color=palette[alpha],
            lw=1,
            marker=MEMORY_MARKERS.get(str(memory)),
            label=f"{MEMORY_LABELS.get(str(memory), memory)}, α = {alpha:g}",
        )
    _dim_axis(ax, summary["dim"])
    ax.set_yscale("log")
    ax.set_xlabel("d")
    ax.set_ylabel("ROME (C = I) capacity (median)")
    ax.set_title("against the Zipf exponent α")
    _legend(ax, fontsize=6)


def editing_figure(
    frame: pd.DataFrame,
    sizes: pd.DataFrame,
    theory: Theory,
    *,
    dim: int,
    k: int = 64,
    settings: Settings = (1000, 2.0),
) -> Figure:
    """The nine panels of the module docstring.

    Parameters
    ----------
    frame, sizes : pandas.DataFrame
        The ``editing`` and ``editing_sizes`` records (:meth:`EditingKind.rows`); ``sizes`` may
        be empty.
    theory : mapping
        (memory, α, N, d) → the :class:`~assocmem.analysis.edit_theory.EditPrediction` (None
        for trained memories).
    dim : int
        The d of the panels at one d.
    k : int, default 64
        The checkpoint of the panels at one k.
    settings : (int, float), default (1000, 2.0)
        (N, α) of the panels at one law.

    Returns
    -------
    matplotlib.figure.Figure
    """
    frame = frame[frame["status"] == "ok"] if "status" in frame else frame
    fig, axes = new_figure(3, width=5.0, height=3.9, rows=3)
    damage_panel(axes[0], frame, "threshold:P=d/8", theory, settings)
    damage_panel(axes[1], frame, "population", theory, settings)
    methods_panel(axes[2], frame, dim, settings)
    capacity_panel(axes[3], frame, theory, settings)
    breaks_panel(axes[4], frame, dim, k, settings)
    success_panel(axes[5], frame, k, int(frame["n_outputs"].iloc[0]), settings)
    band_panel(axes[6], frame, dim, settings)
    if not sizes.empty:
        sizes_panel(axes[7], frame, sizes, int(sizes["dim"].iloc[0]))
    alpha_panel(axes[8], frame, settings[0])
    return fig

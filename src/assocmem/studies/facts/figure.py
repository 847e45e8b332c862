"""The factual-recall figure (docs: beyond/facts.md): stored rows and computed theory in, a grid
of panels out; one colour per memory kind in every panel of the capacity row.

(a) capacity N*(d) per memory kind (median over seeds, the seeds' range as bars) with the
theory lines of :func:`~assocmem.studies.facts.summary.capacity_theory`; (b) d²/(N* ln N*)
against d with the same lines; (c) local slopes Δ ln N*/Δ ln d; (d) bits per trained parameter
at N* against the 2 bits per parameter of trained language models; (e) the error of q = p at
infinite data against d for each M, with the M − 1-competitor theory (dashed); (f), (g) the
earlier questions at M = N, drawn by :func:`~assocmem.studies.facts.earlier.earlier_panels`
when given; the last panel holds the legend of (a)–(d).
"""

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import FixedLocator, NullFormatter, NullLocator

from assocmem.figures.style import colors, legend_below, new_figure
from assocmem.studies.facts.capacity import LM_BITS_PER_PARAMETER

STYLE: dict[str, Any] = {"marker": "o", "ms": 3, "lw": 1.2, "capsize": 2}
LEGEND_PT = 8.0  # every legend's font size (points)
TITLE_PT = 9.0
# One colour per memory kind, the same in every panel (qualitative: kinds have no order)
KIND_COLORS = {
    "outer product (closed form)": "#d62728",
    "linear, sign-Adam": "#1f77b4",
    "linear, SGD": "#17becf",
    "MLP, sign-Adam": "#ff7f0e",
    "MLP, SGD": "#8c564b",
}
# The theory lines: (column of the theory frame, label, colour, line style)
LINES = (
    ("sharp", "sharp threshold $d^2 = 2N \\ln N$", "black", "--"),
    ("finite_size", "$d^2 = 2N(\\ln N - \\ln\\ln N + c)$, $c$ fitted", "black", ":"),
    (
        "outer",
        "outer product, extreme-value model",
        KIND_COLORS["outer product (closed form)"],
        "--",
    ),
)


def facts_figure(
    table: pd.DataFrame,
    rows: pd.DataFrame,
    lines: pd.DataFrame,
    errors: pd.DataFrame,
    theory: pd.DataFrame,
    earlier: Callable[[Axes, Axes], None] | None = None,
) -> Figure:
    """table: :func:`~assocmem.studies.facts.summary.capacity_table`; rows: the searches;
    lines: :func:`~assocmem.studies.facts.summary.capacity_theory`; errors:
    :func:`~assocmem.studies.facts.summary.error_curves`; theory: the error law's predictions;
    earlier: draws two more panels, (f) and (g), on the axes it is given."""
    fig, axes = new_figure(4, width=3.3, height=2.9, rows=2)
    cap, constant, slope, bits, err, edits, heads, key = axes
    for kind in sorted(table["kind"].unique()):
        color = KIND_COLORS.get(str(kind), "grey")
        part = table[table["kind"] == kind].sort_values("dim")
        seeds = rows[rows["kind"] == kind].groupby("dim")["n_star"]
        low = part["n_star"].to_numpy() - seeds.min().reindex(part["dim"]).to_numpy()
        high = seeds.max().reindex(part["dim"]).to_numpy() - part["n_star"].to_numpy()
        cap.errorbar(part["dim"], part["n_star"], yerr=[low, high], color=color, label=kind,
                     **STYLE)  # fmt: skip
        constant.errorbar(part["dim"], part["constant"], color=color, label=kind, **STYLE)
        sloped = part.dropna(subset=["local_slope"])
        slope.errorbar(sloped["slope_at"], sloped["local_slope"], color=color, label=kind,
                       **STYLE)  # fmt: skip
        mean, band = part["bits_per_parameter"], 2 * part["bits_per_parameter_se"]
        bits.errorbar(part["dim"], mean, yerr=[np.minimum(band, mean), band], color=color,
                      label=kind, **STYLE)  # fmt: skip
    _theory_lines(cap, constant, slope, lines)
    slope.axhline(2.0, color="grey", ls="-.", lw=1, label="slope 2 ($N \\propto d^2$)")
    bits.axhline(LM_BITS_PER_PARAMETER, color="#9467bd", ls="-", lw=1,
                 label="trained LMs (2 bits, loss-based)")  # fmt: skip
    dims = sorted(int(d) for d in table["dim"].unique())
    cap.set(xscale="log", yscale="log", xlabel="$d$", ylabel=r"capacity $N^*$")
    constant.set(xscale="log", yscale="log", xlabel="$d$", ylabel=r"$d^2 / (N^* \ln N^*)$")
    slope.set(xscale="log", xlabel="$d$", ylabel=r"local slope $\Delta\ln N^* / \Delta\ln d$")
    top = float((table["bits_per_parameter"] + 2 * table["bits_per_parameter_se"]).max())
    bits.set(xscale="log", xlabel="$d$", ylabel="bits / trained param.")
    bits.set_ylim(0, max(2.4, 1.1 * top))
    cap.set_title(r"(a) facts stored at acc. $\geq 0.99$, $M = N$", fontsize=TITLE_PT)
    constant.set_title(r"(b) $d^2/(N^*\ln N^*)$; theory: 2 at full recall", fontsize=TITLE_PT)
    slope.set_title("(c) local slopes", fontsize=TITLE_PT)
    bits.set_title("(d) bits per parameter at $N^*$ (Fano)", fontsize=TITLE_PT)
    for ax in (cap, constant, slope, bits):
        _dim_ticks(ax, dims)
    _error_panel(err, errors, theory)
    legend_below(err, ncols=2, fontsize=LEGEND_PT)
    if earlier is not None:
        earlier(edits, heads)
        for ax in (edits, heads):
            legend_below(ax, ncols=1, fontsize=LEGEND_PT)
    else:
        edits.set_visible(False)
        heads.set_visible(False)
    _shared_legend(key, [cap, constant, slope, bits])
    return fig


def _theory_lines(cap: Axes, constant: Axes, slope: Axes, lines: pd.DataFrame) -> None:
    """The theory's N, d²/(N ln N) and local slope over the theory frame's d (where finite)."""
    d = lines["dim"].to_numpy(float)
    for column, label, color, ls in LINES:
        n = lines[column].to_numpy(float)
        ok = np.isfinite(n) & (n >= 30)  # the models hold for many facts, not a handful
        if not ok.any():
            continue
        style: dict[str, Any] = {"color": color, "ls": ls, "lw": 1.1, "label": label}
        cap.plot(d[ok], n[ok], **style)
        constant.plot(d[ok], lines[f"{column}_constant"].to_numpy(float)[ok], **style)
        slope.plot(d[ok], lines[f"{column}_slope"].to_numpy(float)[ok], **style)


def _shared_legend(key: Axes, panels: list[Axes]) -> None:
    """One legend, in ``key``, for every entry of ``panels`` (each label once)."""
    handles: dict[str, Any] = {}
    for ax in panels:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            handles.setdefault(label, handle)
    key.set_axis_off()
    key.legend(list(handles.values()), list(handles), loc="center", fontsize=LEGEND_PT,
               title="(a)–(d)", title_fontsize=LEGEND_PT, frameon=False)  # fmt: skip


def _dim_ticks(ax: Axes, dims: list[int]) -> None:
    """Ticks at the measured d (at most six), plain numbers; no minor labels."""
    shown = dims[:: max(1, math.ceil(len(dims) / 6))]
    ax.xaxis.set_major_locator(FixedLocator([float(d) for d in shown]))
    ax.set_xticklabels([str(int(d)) for d in shown])
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_minor_formatter(NullFormatter())


def _error_panel(ax: Axes, errors: pd.DataFrame, theory: pd.DataFrame) -> None:
    rows = errors[(errors["scheme"] == "population") & np.isinf(errors["n_samples"].astype(float))]
    outputs = sorted(rows["n_outputs"].unique())
    for m, color in zip(outputs, colors(len(outputs)), strict=True):
        part = rows[rows["n_outputs"] == m].sort_values("dim")
        mean, band = part["error"], 2 * part["error_se"]
        low = np.minimum(band, mean / 2)  # a log axis: the bars stay above 0
        ax.errorbar(part["dim"], mean, yerr=[low, band], color=color, label=f"$M = {m}$",
                    **STYLE)  # fmt: skip
        pred = theory[theory["n_outputs"] == m].sort_values("dim") if len(theory) else theory
        if len(pred):
            ax.plot(pred["dim"], pred["predicted"], ls="--", lw=1, color=color,
                    label=f"theory, $M = {m}$")  # fmt: skip
    ax.set(xscale="log", yscale="log", xlabel="$d$", ylabel=r"error ($q = p$, $T = \infty$)")
    ax.set_title(r"(e) error law as $M$ grows (Zipf $\alpha = 2$)", fontsize=TITLE_PT)
    positive = rows[rows["error"] > 0]
    if len(positive):
        high = float((positive["error"] + 2 * positive["error_se"]).max())
        ax.set_ylim(float(positive["error"].min()) / 3, max(1.0, 1.2 * high))
    _dim_ticks(ax, sorted(int(d) for d in rows["dim"].unique()))

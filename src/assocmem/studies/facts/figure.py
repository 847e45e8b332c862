"""The factual-recall figure (docs: beyond/facts.md): stored rows in, three panels out.

(a) capacity N*(d) per memory kind (median over seeds, the seeds' range as bars) beside the
trained linear memories' published d² ≈ 1.3·N·ln N; (b) bits per trained parameter at N*
against the 2 bits per parameter of trained language models; (c) the error of q = p at
infinite data against d for each M, with predict.py's theory (dashed) where it was computed;
(d), (e) the earlier questions at M = N, drawn by
:func:`~assocmem.studies.facts.earlier.earlier_panels` when given.
"""

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import FixedLocator, NullFormatter, NullLocator

from assocmem.analysis.frontier import frontier_guess
from assocmem.figures.style import colors, legend_below, new_figure
from assocmem.studies.facts.capacity import LM_BITS_PER_PARAMETER

STYLE: dict[str, Any] = {"marker": "o", "ms": 3, "lw": 1.2, "capsize": 2}


def facts_figure(
    table: pd.DataFrame,
    rows: pd.DataFrame,
    errors: pd.DataFrame,
    theory: pd.DataFrame,
    earlier: Callable[[Axes, Axes], None] | None = None,
) -> Figure:
    """table: :func:`~assocmem.studies.facts.summary.capacity_table`; rows: the searches;
    errors: :func:`~assocmem.studies.facts.summary.error_curves`; theory: predictions;
    earlier: draws two more panels, (d) and (e), on the axes it is given."""
    fig, axes = new_figure(3 if earlier is None else 5, width=3.6, height=3.0)
    cap, bits, err = axes[:3]
    kinds = sorted(table["kind"].unique())
    for kind, color in zip(kinds, colors(len(kinds)), strict=True):
        part = table[table["kind"] == kind].sort_values("dim")
        seeds = rows[rows["kind"] == kind].groupby("dim")["n_star"]
        low = part["n_star"].to_numpy() - seeds.min().reindex(part["dim"]).to_numpy()
        high = seeds.max().reindex(part["dim"]).to_numpy() - part["n_star"].to_numpy()
        cap.errorbar(part["dim"], part["n_star"], yerr=[low, high], color=color, label=kind,
                     **STYLE)  # fmt: skip
        mean, band = part["bits_per_parameter"], 2 * part["bits_per_parameter_se"]
        bits.errorbar(part["dim"], mean, yerr=[np.minimum(band, mean), band], color=color,
                      label=kind, **STYLE)  # fmt: skip
    dims = np.geomspace(table["dim"].min(), table["dim"].max(), 30)
    ref = r"$d^2 = 1.3\,N \ln N$ (trained linear, ref.)"
    reference = [frontier_guess(int(round(d)), None, 1.3) for d in dims]  # d² = 1.3 N ln N
    cap.plot(dims, reference, "k--", lw=1, label=ref)
    bits.axhline(LM_BITS_PER_PARAMETER, color="k", ls=":", lw=1, label="trained LMs (2 bits)")
    cap.set(xscale="log", yscale="log", xlabel="$d$", ylabel=r"capacity $N^*$")
    top = float((table["bits_per_parameter"] + 2 * table["bits_per_parameter_se"]).max())
    bits.set(xscale="log", xlabel="$d$", ylabel="bits / trained param.")
    bits.set_ylim(0, max(2.4, 1.1 * top))
    cap.set_title(r"(a) facts stored at acc. $\geq 0.99$, $M = N$", fontsize=8)
    bits.set_title("(b) bits per parameter at $N^*$", fontsize=8)
    _error_panel(err, errors, theory)
    _dim_ticks(cap, sorted(set(table["dim"])))
    _dim_ticks(bits, sorted(set(table["dim"])))
    if earlier is not None:
        earlier(axes[3], axes[4])
    for ax in axes:
        legend_below(ax, ncols=1)
    return fig


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
    ax.set_title(r"(c) error law as $M$ grows (Zipf $\alpha = 2$)", fontsize=8)
    positive = rows[rows["error"] > 0]
    if len(positive):
        high = float((positive["error"] + 2 * positive["error_se"]).max())
        ax.set_ylim(float(positive["error"].min()) / 3, max(1.0, 1.2 * high))
    _dim_ticks(ax, sorted(int(d) for d in rows["dim"].unique()))

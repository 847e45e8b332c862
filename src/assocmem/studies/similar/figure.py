"""The similar-tokens figure (docs: beyond/similar.md): stored records of the ``similar`` run
kind in, a six-panel figure out. Plotting only: the curves are means over trials of stored
values (:mod:`assocmem.studies.similar.records`), the dashed lines the stored theory, the dotted
ones the disjoint curves E_0(T; N_eff) of the fitted effective numbers of tokens."""

import math

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import NullFormatter

from assocmem.figures.style import BAND_Z, colors, legend_below, new_figure
from assocmem.ops.stats import column_mean_se
from assocmem.studies.similar.effective_tokens import disjoint_error
from assocmem.studies.similar.records import (
    by_trial,
    curve_summary,
    data_rows,
    dim_rows,
    window_cap,
)

LAW = {"alpha": 2.0, "grouping": "random"}
N_EFF, E0 = r"$N_{eff}$", r"$E_0(T;\,N_{eff})$"  # mathtext


def _largest(rows: pd.DataFrame) -> pd.DataFrame:
    return rows[rows["dim"] == rows["dim"].max()] if len(rows) else rows


def _band(
    ax: Axes, x: np.ndarray, mean: np.ndarray, se: np.ndarray, color: str, label: str, log: bool
) -> None:
    """A mean curve with its 95 % band (on a log axis, clipped at a hundredth of the mean)."""
    ax.plot(x, mean, marker="o", ms=3, lw=1.4, color=color, label=label)
    low = mean - BAND_Z * se
    if log:
        low = np.clip(low, mean * 1e-2, None)
    ax.fill_between(x, low, mean + BAND_Z * se, color=color, alpha=0.18, lw=0)


def _integer_ticks(ax: Axes, values: np.ndarray) -> None:
    """Major ticks at the measured x values (a log axis), no minor labels."""
    ax.set_xticks(values, [f"{v:g}" for v in values])
    ax.xaxis.set_minor_formatter(NullFormatter())


def _by_rho(
    ax: Axes, rows: pd.DataFrame, x: str, value: str, theory: str | None, log_y: bool
) -> None:
    """One curve per ρ (mean ± band over trials) and its theory, dashed. A log axis spans the
    measured means (an error of exactly 0 is not drawn)."""
    rhos = sorted(rows["similarity"].unique())
    shown: list[float] = []
    for rho, color in zip(rhos, colors(len(rhos)), strict=True):
        part = rows[rows["similarity"] == rho]
        names = {"m": value} | ({"t": theory} if theory else {})
        summary = curve_summary(part, x, names)
        xs = summary.index.to_numpy(float)
        mean, se = summary["m"].to_numpy(), summary["m_se"].to_numpy()
        if log_y:
            mean = np.where(mean > 0, mean, np.nan)
        _band(ax, xs, mean, np.nan_to_num(se), color, f"ρ = {rho:g}", log_y)
        shown += [float(v) for v in mean[np.isfinite(mean)]]
        if theory:
            ax.plot(xs, summary["t"].to_numpy(), ls="--", lw=1, color=color)
    ax.set_xscale("log")
    if log_y and shown:
        ax.set_yscale("log")
        ax.set_ylim(min(shown) / 5, min(max(shown) * 3, 1.0))


def _never_seen(ax: Axes, frame: pd.DataFrame, groups: int) -> None:
    rows = _largest(data_rows(frame, **LAW, n_groups=groups, target="group"))
    rows = rows[rows["unseen_mass"] > 0]
    if rows.empty:
        return
    _by_rho(ax, rows, "n_samples", "never_seen", "theory_never_seen", log_y=False)
    ax.axhline(1 - 1 / int(rows["n_outputs"].iloc[0]), color="grey", ls=":", lw=1, label="chance")
    ax.set(xlabel=f"samples T (d = {rows['dim'].max()})", ylabel="error on never-seen tokens",
           ylim=(0, 1.02))  # fmt: skip
    ax.set_title(f"(a) never-seen tokens: shared targets, G = {groups}", fontsize=9)


def _versus_samples(ax: Axes, frame: pd.DataFrame, fits: pd.DataFrame, groups: int) -> None:
    rows = _largest(data_rows(frame, **LAW, n_groups=groups, target="group"))
    if rows.empty:
        return
    _by_rho(ax, rows, "n_samples", "error", None, log_y=True)
    dim, m, alpha = float(rows["dim"].max()), int(rows["n_outputs"].iloc[0]), 2.0
    ts = np.geomspace(rows["n_samples"].min(), window_cap(dim, alpha), 40)
    rhos = sorted(rows["similarity"].unique())
    chosen = fits[(fits["alpha"] == 2.0) & (fits["grouping"] == "random")]
    chosen = chosen[(chosen["n_groups"] == groups) & (chosen["target"] == "group")]
    for rho, color in zip(rhos, colors(len(rhos)), strict=True):
        fit = chosen[chosen["similarity"] == rho]
        if len(fit):
            n_eff = int(fit["n_eff"].iloc[0])
            curve = disjoint_error(n_eff, alpha, m, ts)
            shown = curve >= ax.get_ylim()[0]  # stops at the axis, not below it
            ax.plot(ts, np.where(shown, curve, np.nan), ls=":", lw=1.2, color=color)
    ax.axvline(window_cap(dim, alpha), color="grey", lw=0.8, ls="-.", label="fit window")
    ax.set(xlabel="samples T", ylabel="error")
    ax.set_title(f"(b) shared targets, G = {groups}; dotted: {E0}", fontsize=9)


def _effective(ax: Axes, fits: pd.DataFrame) -> None:
    """N_eff against ρ per (α, grouping, G), shared targets: filled markers with 95 % intervals
    (open: censored at the end of the candidate range), crosses: the fit on never-seen tokens."""
    shared = fits[fits["target"] == "group"]
    keys = sorted(set(zip(shared["alpha"], shared["grouping"], shared["n_groups"], strict=True)))
    for (alpha, grouping, groups), color in zip(keys, colors(len(keys)), strict=True):
        part = shared[(shared["alpha"] == alpha) & (shared["grouping"] == grouping)]
        part = part[part["n_groups"] == groups].sort_values("similarity")
        edge = part["at_edge"].astype(bool).to_numpy()
        y = np.where(edge, np.nan, part["n_eff"].to_numpy(float))  # the line breaks there
        err = np.array([y - part["low"].to_numpy(), part["high"].to_numpy() - y])
        label = f"α = {alpha:g}, {grouping}, G = {groups}"
        ax.errorbar(part["similarity"], y, yerr=np.nan_to_num(err), marker="o", ms=4, capsize=2,
                    lw=1.2, color=color, label=label)  # fmt: skip
        ax.plot(part["similarity"][edge], part["n_eff"][edge], ls="none", marker="^", mfc="none",
                color=color)  # fmt: skip
        ax.plot(part["similarity"], part["n_eff_never_seen"], ls="none", marker="x", ms=4,
                color=color)  # fmt: skip
        ax.axhline(groups, color=color, ls=":", lw=0.8)
    if len(shared):
        ax.axhline(int(shared["n_inputs"].iloc[0]), color="black", ls="--", lw=1, label="N")
    ax.plot([], [], ls="none", marker="^", mfc="none", color="grey",
            label="at the search cap (≥)")  # fmt: skip
    ax.plot([], [], ls="none", marker="x", ms=4, color="grey", label="never-seen fit")
    ax.plot([], [], ls=":", lw=0.8, color="grey", label="G")
    ax.set(xlabel="similarity ρ", ylabel=f"{N_EFF} (95 % bootstrap)", yscale="log")
    ax.set_title(f"(c) {N_EFF}, shared targets", fontsize=9)


def _versus_dim(ax: Axes, frame: pd.DataFrame, target: str, groups: int, letter: str) -> None:
    rows = dim_rows(frame, **LAW, n_groups=groups, target=target)
    if rows.empty:
        return
    _by_rho(ax, rows, "dim", "error", "theory_error", log_y=True)
    _integer_ticks(ax, np.array(sorted(rows["dim"].unique()), dtype=float))
    kind = "shared" if target == "group" else "independent"
    ax.set(xlabel="dimension d", ylabel="error")
    ax.set_title(f"({letter}) T = ∞, threshold d/8: {kind} targets, G = {groups}", fontsize=9)


def _interference(ax: Axes, frame: pd.DataFrame, groups: int) -> None:
    rows = _largest(data_rows(frame, **LAW, n_groups=groups, target="mod"))
    if rows.empty or 0.0 not in set(rows["similarity"]):
        return
    base = by_trial(rows[rows["similarity"] == 0.0], "n_samples", "error")
    base_theory = by_trial(rows[rows["similarity"] == 0.0], "n_samples", "theory_error")
    rhos = [r for r in sorted(rows["similarity"].unique()) if r > 0]
    for rho, color in zip(rhos, colors(len(rhos) + 1)[1:], strict=True):
        part = rows[rows["similarity"] == rho]
        excess = by_trial(part, "n_samples", "error") - base
        mean, se = column_mean_se(excess)
        xs = mean.index.to_numpy(float)
        _band(ax, xs, mean.to_numpy(), np.nan_to_num(se.to_numpy()), color, f"ρ = {rho:g}", False)
        theory = (by_trial(part, "n_samples", "theory_error") - base_theory).mean()
        ax.plot(xs, theory.to_numpy(), ls="--", lw=1, color=color)
    ax.axhline(0, color="grey", lw=0.8, label="no interference")
    ax.set(xscale="log", xlabel=f"samples T (d = {rows['dim'].max()})",
           ylabel="error − error at ρ = 0")  # fmt: skip
    ax.set_title(f"(f) interference: independent targets, G = {groups}", fontsize=9)


def similar_figure(frame: pd.DataFrame, fits: pd.DataFrame) -> Figure:
    """The six panels of the similar-tokens study.

    Parameters
    ----------
    frame : pandas.DataFrame
        Rows of the ``similar`` run kind (``assocmem sweep results`` of the ``similar`` spec).
    fits : pandas.DataFrame
        :func:`assocmem.studies.similar.records.effective_table` of ``frame``.

    Returns
    -------
    matplotlib.figure.Figure
    """
    fig, axes = new_figure(3, width=5.0, height=3.8, rows=2)
    groups = sorted(frame["n_groups"].unique()) if len(frame) else [math.nan]
    small, large = int(groups[0]), int(groups[-1])
    _never_seen(axes[0], frame, large)
    _versus_samples(axes[1], frame, fits, small)
    _effective(axes[2], fits)
    _versus_dim(axes[3], frame, "group", small, "d")
    _versus_dim(axes[4], frame, "mod", small, "e")
    _interference(axes[5], frame, small)
    for ax in axes:
        if ax is axes[2] and ax.has_data():
            legend_below(ax)  # N and G cross the whole panel: no free corner
        elif ax.has_data():
            ax.legend(fontsize=6)
    return fig

"""The noise-threshold figure (docs: beyond/noise-threshold.md): plotting only, from the frames of
:func:`assocmem.studies.noise_threshold.records.analyse_records` (``curves``, ``cells``) and
:func:`~assocmem.studies.noise_threshold.records.balance_dims`.

Top row: the capped rule (``P = d/8``, majority labels, α = 2) at one T, error vs k at three d
(near T^{1/α}, 4 and 16 times it), one colour per ε, measured (mean ± 2 s.e.) and predicted
(dashed). Bottom row: the same rule without the cap at d ≈ T^{1/α}; the best k against d,
measured and predicted; the best error over the noisy data floor against d / T^{1/α}.
"""

from collections.abc import Sequence

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import NullFormatter, ScalarFormatter

from assocmem.figures.style import colors, legend_below, new_figure

CAPPED, UNCAPPED = "d/8", "uncapped"
MARKERS = {"majority": "o", "soft": "s"}
RULE_STYLES = {"majority": "-", "soft": ":"}  # the predicted best k of each label rule


def _nearest(values: Sequence[float], target: float) -> float:
    """The value nearest ``target`` on a log scale."""
    return min(values, key=lambda v: abs(np.log(v) - np.log(target)))


def _select(frame: pd.DataFrame, **values: object) -> pd.DataFrame:
    for column, value in values.items():
        frame = frame[frame[column] == value]
    return frame


def _vs_k(ax: Axes, curves: pd.DataFrame, noises: Sequence[float], title: str) -> None:
    """Error vs k, one colour per ε: measured with 2-s.e. bars, predicted dashed."""
    for noise, color in zip(noises, colors(len(noises)), strict=True):
        part = curves[curves["label_noise"] == noise].sort_values("k")
        if part.empty:
            continue
        mean, band = part["mean"].to_numpy(), 2 * part["sem"].to_numpy()
        below = np.minimum(band, 0.9 * mean)  # log axes: bars stay above zero
        ax.errorbar(part["k"], mean, yerr=[below, band], marker="o", ms=3, lw=1.2, capsize=2,
                    color=color, label=f"ε = {noise:g}")  # fmt: skip
        ax.plot(part["k"], part["predicted"], ls="--", lw=1, color=color)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("k (store x once seen k times)")
    ax.set_ylabel("error")
    ax.set_title(title, fontsize=9)


def _k_star(ax: Axes, cells: pd.DataFrame, noises: Sequence[float]) -> None:
    """Best k vs d: measured (markers) and predicted (lines), per ε and rule."""
    for noise, color in zip(noises, colors(len(noises)), strict=True):
        for rule, marker in MARKERS.items():
            part = _select(cells, label_noise=noise, label_rule=rule).sort_values("dim")
            if part.empty:
                continue
            ax.plot(part["dim"], part["k_pred"], ls=RULE_STYLES[rule], color=color, lw=1)
            ax.plot(part["dim"], part["k_star"], ls="none", marker=marker, ms=4, color=color,
                    label=f"ε = {noise:g}, {rule}")  # fmt: skip
    ax.set_xscale("log")
    ax.set_yscale("log")
    dims = sorted(cells["dim"].unique())
    ax.set_xticks(dims)
    ax.xaxis.set_major_formatter(ScalarFormatter())
    ax.xaxis.set_minor_formatter(NullFormatter())
    for rule, style in RULE_STYLES.items():
        ax.plot([], [], ls=style, color="grey", lw=1, label=f"predicted, {rule}")
    ax.set_xlabel("d")
    ax.set_ylabel("best k (markers: measured; lines: predicted)")


def _balance(ax: Axes, cells: pd.DataFrame, noises: Sequence[float]) -> None:
    """Best error over the noisy data floor vs d / T^{1/α}, one colour per ε, one marker per T."""
    sizes = sorted(cells["n_samples"].unique())
    markers = ["o", "s", "^", "D", "v", "P"]
    for noise, color in zip(noises, colors(len(noises)), strict=True):
        for size, marker in zip(sizes, markers * 4, strict=False):
            part = _select(cells, label_noise=noise, n_samples=size).sort_values("dim")
            if part.empty:
                continue
            x = part["dim"] / size ** (1 / part["alpha"])
            ax.plot(x, part["error_star"] / part["floor"], marker=marker, ms=3, lw=0.8,
                    color=color, label=f"ε = {noise:g}" if size == sizes[0] else None)  # fmt: skip
    for size, marker in zip(sizes, markers * 4, strict=False):
        ax.plot([], [], ls="none", marker=marker, ms=3, color="grey", label=f"T = {size:g}")
    ax.axhline(2.0, color="black", lw=0.8, ls="--", label="twice the floor")
    ax.axvline(1.0, color="grey", lw=0.8, ls=":", label=r"$d = T^{1/\alpha}$")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(r"$d\,/\,T^{1/\alpha}$")
    ax.set_ylabel("best error / noisy data floor")
    ax.set_title("capped, majority labels", fontsize=9)


def noise_threshold_figure(
    curves: pd.DataFrame,
    cells: pd.DataFrame,
    alpha: float = 2.0,
    n_samples: float = 1000,
    at_k: int = 30,
) -> Figure:
    """Six panels from the analysed records (see the module docstring).

    Parameters
    ----------
    curves, cells : pandas.DataFrame
        :attr:`NoiseThresholdRecords.curves` and ``.cells``; the cap column holds ``"d/8"`` and
        an integer P (no cap).
    alpha, n_samples : float
        The α and the T of the panels that show one of each (the nearest available).
    at_k : int, default 30
        The fixed k marked on the regret panel (the authors' k; the records' ``regret_at_k``).

    Returns
    -------
    matplotlib.figure.Figure
    """
    fig, axes = new_figure(3, width=4.3, height=3.5, rows=2)
    alpha = _nearest(sorted(curves["alpha"].unique()), alpha)
    size = _nearest(sorted(curves["n_samples"].unique()), n_samples)
    noises = sorted(curves["label_noise"].unique())
    dims = sorted(curves["dim"].unique())
    balance = size ** (1 / alpha)
    capped = _select(curves, cap=CAPPED, label_rule="majority", alpha=alpha, n_samples=size)
    for ax, scale in zip(axes[:3], (1.0, 4.0, 16.0), strict=True):
        d = _nearest(dims, scale * balance)
        title = f"P = d/8, majority: α = {alpha:g}, T = {size:g}, d = {d:g}"
        _vs_k(ax, capped[capped["dim"] == d], noises, title)
    axes[0].legend(fontsize=7)
    uncapped = curves[(curves["cap"] != CAPPED) & (curves["alpha"] == alpha)]
    d = _nearest(dims, balance)
    part = _select(uncapped, label_rule="majority", n_samples=size, dim=d)
    title = f"no cap (P = N), majority: T = {size:g}, d = {d:g} " + r"$\approx T^{1/\alpha}$"
    _vs_k(axes[3], part, noises, title)
    axes[3].axvline(at_k, color="grey", lw=0.8, ls=":", label=f"k = {at_k} (the authors')")
    legend_below(axes[3])
    no_cap = cells[(cells["cap"] != CAPPED) & (cells["alpha"] == alpha)]
    _k_star(axes[4], no_cap[no_cap["n_samples"] == size], [noises[0], noises[-1]])
    axes[4].set_title(f"no cap: best k, α = {alpha:g}, T = {size:g}", fontsize=9)
    axes[4].legend(fontsize=7)
    majority = cells[(cells["cap"] == CAPPED) & (cells["label_rule"] == "majority")]
    _balance(axes[5], majority[majority["alpha"] == alpha], noises)
    legend_below(axes[5], ncols=3)
    return fig

"""The vocabulary study's figure (docs: beyond/vocabulary.md): the word law, error vs d and
error vs T, Monte Carlo with the predicted curves. Plotting only: records in, a Figure out."""

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from assocmem.figures.closed_form import scheme_label
from assocmem.figures.style import colors, curve, legend_below, new_figure, summarise
from assocmem.studies.vocabulary.theory import size_label

EMPIRICAL = "empirical_threshold:P=d/12"
T_CURVE_DIMS = 4  # d-values drawn in the error-vs-T panel (spread over the dims)
ZIPF_STYLES: list[Any] = ["-", "-.", (0, (1, 2))]  # one per scheme on Zipf(α̂), all grey


def _law_panel(ax: Axes, laws: Mapping[str, np.ndarray]) -> None:
    for (name, probs), color in zip(laws.items(), ["black", "tab:red", "tab:blue"], strict=False):
        ranks = np.arange(1, probs.size + 1)
        step = max(1, probs.size // 4000)  # a few thousand points draw the same line
        style = "-" if color == "black" else "--"
        ax.plot(ranks[::step], probs[::step], style, color=color, lw=1.2, label=name)
    ax.set(xscale="log", yscale="log", xlabel="rank x", ylabel="p(x)", title="(a) the word law")
    ax.legend(fontsize=7)


def _series_label(scheme: str, n_samples: float) -> str:
    if math.isinf(n_samples):
        return scheme_label(scheme) if scheme != EMPIRICAL else "q = top d/12 of p"
    return f"top d/12 seen, T = {size_label(n_samples)}"


def _dim_panel(ax: Axes, real: pd.DataFrame, predicted: pd.DataFrame, zipf: pd.DataFrame) -> None:
    stats = summarise(real, ["scheme", "n_samples", "dim"])
    finite = sorted(t for t in real["n_samples"].unique() if math.isfinite(t))
    series = [("population", math.inf), ("threshold:P=d/8", math.inf)]
    series += [(EMPIRICAL, t) for t in dict.fromkeys(finite[:1] + finite[-1:])]
    series = [s for s in series if ((stats["scheme"] == s[0]) & (stats["n_samples"] == s[1])).any()]
    for (scheme, t), color in zip(series, colors(len(series)), strict=True):
        s = stats[(stats["scheme"] == scheme) & (stats["n_samples"] == t)]
        x = s["dim"].to_numpy()
        curve(ax, x, s["mean"].to_numpy(), s["sem"].to_numpy(), _series_label(scheme, t), color)
        p = predicted[(predicted["scheme"] == scheme) & (predicted["n_samples"] == t)]
        ax.plot(p["dim"], p["predicted"], ls="--", color=color, lw=1)
    zstats = summarise(zipf, ["scheme", "dim"])
    for i, (zipf_scheme, rows) in enumerate(zstats.groupby("scheme", sort=False)):
        ax.plot(rows["dim"], rows["mean"], color="grey", lw=1, marker="x", ms=3,
                ls=ZIPF_STYLES[i % len(ZIPF_STYLES)],
                label=f"Zipf(α̂) Monte Carlo, {scheme_label(str(zipf_scheme))}")  # fmt: skip
    ax.plot([], [], ls="--", color="black", lw=1, label="predicted from p")
    ax.set(xlabel="memory dimension d", ylabel="population error", title="(b) error vs d")
    legend_below(ax)


def _samples_panel(
    ax: Axes, real: pd.DataFrame, predicted: pd.DataFrame, finite_data: pd.DataFrame
) -> None:
    """Linear error against log T: the curves flatten onto their T = ∞ floors (dotted)."""
    rows = real[real["scheme"] == EMPIRICAL]
    dims = np.sort(rows["dim"].unique())
    if dims.size > T_CURVE_DIMS:
        dims = dims[np.unique(np.linspace(0, dims.size - 1, T_CURVE_DIMS).round().astype(int))]
    stats = summarise(rows, ["dim", "n_samples"])
    for dim, color in zip(dims, colors(len(dims)), strict=True):
        s = stats[(stats["dim"] == dim) & np.isfinite(stats["n_samples"])]
        x, mean, sem = s["n_samples"].to_numpy(), s["mean"].to_numpy(), s["sem"].to_numpy()
        ax.plot(x, mean, marker="o", markersize=3, lw=1.5, color=color, label=f"d = {int(dim)}")
        ax.fill_between(x, mean - 1.96 * sem, mean + 1.96 * sem, color=color, alpha=0.2, lw=0)
        p = predicted[(predicted["scheme"] == EMPIRICAL) & (predicted["dim"] == dim)]
        finite = p[np.isfinite(p["n_samples"])]
        ax.plot(finite["n_samples"], finite["predicted"], ls="--", color=color, lw=1)
        floor = stats[(stats["dim"] == dim) & np.isinf(stats["n_samples"])]["mean"]
        if not floor.empty:
            ax.axhline(float(floor.iloc[0]), color=color, ls=":", lw=1)
    ax.plot(
        finite_data["n_samples"],
        finite_data["error"],
        color="black",
        lw=1.2,
        label=r"$\sum_x p(x)\,(1-p(x))^T$ (d = ∞)",
    )
    ax.plot([], [], ls="--", color="black", lw=1, label="predicted from p")
    ax.plot([], [], ls=":", color="black", lw=1, label="T = ∞, each d")
    ax.set_xscale("log")
    ax.set_ylim(bottom=0)
    ax.set(xlabel="tokens T", ylabel="population error", title="(c) top d/12 seen: error vs T")
    legend_below(ax)


def vocabulary_figure(
    real: pd.DataFrame,
    real_predicted: pd.DataFrame,
    zipf: pd.DataFrame,
    laws: Mapping[str, np.ndarray],
    finite_data: pd.DataFrame,
) -> Figure:
    r"""The law, error vs d and error vs T on a whole vocabulary.

    Parameters
    ----------
    real : pandas.DataFrame
        Tidy closed-form rows on the word law (``scheme``, ``dim``, ``n_samples``, ``trial``,
        ``error``), with ``population``, ``threshold:P=d/8`` and
        ``empirical_threshold:P=d/12`` curves.
    real_predicted : pandas.DataFrame
        The predicted mean error (``scheme``, ``n_samples``, ``dim``, ``predicted``).
    zipf : pandas.DataFrame
        Tidy rows of the infinite-data schemes on Zipf(α̂) (grey in panel b).
    laws : mapping of str to numpy.ndarray
        Probability vectors by legend label (the word law first, then its Zipf fits).
    finite_data : pandas.DataFrame
        ``n_samples`` and ``error``: the infinite-memory error :math:`\sum p(1-p)^T`.

    Returns
    -------
    matplotlib.figure.Figure
        Three panels (log-log, but linear error in c); Monte Carlo means with 95 % bands,
        predictions dashed, the T = ∞ error of each d dotted in c.

    Notes
    -----
    See the docs: beyond/vocabulary.md.
    """
    fig, axes = new_figure(3, width=4.4, height=3.6)
    _law_panel(axes[0], laws)
    _dim_panel(axes[1], real, real_predicted, zipf)
    _samples_panel(axes[2], real, real_predicted, finite_data)
    return fig

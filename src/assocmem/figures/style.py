"""The paper's look: log-log axes, mean with a band, dashed theory lines. No LaTeX needed:
symbols and exponents are matplotlib's mathtext (``"$0.35\\,d^{-1/4}$"``).

Figures are built as :class:`matplotlib.figure.Figure` objects, without pyplot: no backend is
chosen or changed at import (a notebook keeps its own), nothing is kept in pyplot's list of open
figures, and a returned figure shows in a notebook cell and saves with ``savefig``.
"""

from typing import Any

import matplotlib
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.transforms import ScaledTranslation

from assocmem.analysis.stats import seed_summary

BAND_Z = 1.96  # band = mean ± 1.96 standard errors over trials (95 % interval of the mean)


def new_figure(
    n_panels: int, width: float = 4.2, height: float = 3.4, rows: int = 1
) -> tuple[Figure, list[Axes]]:
    """``rows`` × ``n_panels`` panels of ``width`` × ``height`` inches, listed row by row."""
    fig = Figure(figsize=(width * n_panels, height * rows), layout="constrained")
    axes = fig.subplots(rows, n_panels, squeeze=False)
    return fig, list(axes.flat)


summarise = seed_summary  # mean, sem and count of a value per group (assocmem.analysis.stats)


def curve(
    ax: Axes, x: np.ndarray, mean: np.ndarray, sem: np.ndarray, label: str, color: str
) -> None:
    """A mean curve with its band, on log-log axes (the band is clipped to positive values)."""
    ax.plot(x, mean, marker="o", markersize=3, lw=1.5, label=label, color=color)
    low = np.clip(mean - BAND_Z * sem, mean * 1e-2, None)
    ax.fill_between(x, low, mean + BAND_Z * sem, color=color, alpha=0.2, lw=0)
    ax.set_xscale("log")
    ax.set_yscale("log")


def theory_line(
    ax: Axes, x: np.ndarray, constant: float, exponent: float, label: str, ls: str = "--"
) -> None:
    r"""The black reference :math:`\mathrm{constant} \cdot x^{\mathrm{exponent}}` (dashed, or ``ls``
    where a panel has two: two references of one style could not be told apart)."""
    ax.plot(x, constant * np.asarray(x, float) ** exponent, ls=ls, color="black", lw=1, label=label)


def colors(n: int) -> list[str]:
    """``n`` colours along viridis (its light yellow end left out)."""
    cmap = matplotlib.colormaps["viridis"]
    return [matplotlib.colors.to_hex(cmap(v)) for v in np.linspace(0.05, 0.9, n)]


def legend_below(ax: Axes, ncols: int = 2, fontsize: float = 6, **kw: Any) -> None:
    """The legend of ``ax`` under its x label, where it covers no data. Its anchor sits a fixed
    0.5 inch under the axes (room for the tick labels and the x label whatever the axes'
    height), so that constrained layout makes room for it in one pass."""
    below = ax.transAxes + ScaledTranslation(0.0, -0.5, ax.figure.dpi_scale_trans)
    ax.legend(fontsize=fontsize, ncols=ncols, loc="upper center", bbox_to_anchor=(0.5, 0.0),
              bbox_transform=below, **kw)  # fmt: skip

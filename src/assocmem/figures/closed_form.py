"""Figures of closed-form memories: Figure 1 (joint law), Figure 3 (contours), Figure 4 (schemes
with infinite data) and the memory-matrix pictures (Cabannes et al. 2024; see the docs:
science/figures.md)."""

import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from assocmem.figures.style import colors, curve, new_figure, summarise, theory_line


def frame_from_records(records: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """Tidy rows, one per trial, from closed-form records.

    Parameters
    ----------
    records : sequence of mapping
        :attr:`ClosedFormResult.records` (or ``assocmem closed-form --format json`` records):
        ``scheme``, ``dim``, ``n_samples`` (None for infinite data) and ``errors`` per trial.

    Returns
    -------
    pandas.DataFrame
        Columns ``scheme`` (str), ``dim`` (int), ``n_samples`` (float, ``inf`` for infinite
        data), ``trial`` (int), ``error`` (float): what the figure functions read.
    """
    rows = []
    for r in records:
        n_samples = math.inf if r["n_samples"] is None else r["n_samples"]
        for trial, error in enumerate(r["errors"]):
            rows.append(
                {
                    "scheme": r["scheme"],
                    "dim": r["dim"],
                    "n_samples": n_samples,
                    "trial": trial,
                    "error": error,
                }
            )
    return pd.DataFrame(rows)


def _label_samples(t: float) -> str:
    return "T = ∞" if math.isinf(t) else f"T = {int(t):,}"


SCHEME_LABELS = {
    "uniform": "q = 1",
    "population": "q = p",
    "threshold:P=d/8": "q = 1{x ≤ d/8}",
    "seen_once": "q = 1{n(x) > 0} (seen)",
    "empirical": "q = n(x) (counts)",
    "empirical_threshold:P=d/12": "q = 1{top d/12 seen}",
}


def scheme_label(scheme: str) -> str:
    """The legend label of a scheme spec: the paper's notation where it has one."""
    return SCHEME_LABELS.get(scheme, scheme)


def figure4(frame: pd.DataFrame) -> Figure:
    r"""Error against d with infinite data, one curve per scheme (Figure 4 of the paper).

    Parameters
    ----------
    frame : pandas.DataFrame
        Tidy closed-form rows, one per trial (:meth:`ClosedFormResult.to_frame`,
        :func:`frame_from_records` or :func:`assocmem.load_results`), with columns ``scheme``
        (str), ``dim`` (int), ``n_samples`` (float, ``inf`` for infinite data) and ``error``
        (float). Rows of several ``n_samples`` give one curve per (scheme, T), never a pool.

    Returns
    -------
    matplotlib.figure.Figure
        One log-log panel: the trial mean of each scheme with a 95 % band (± 1.96 standard
        errors), labelled :math:`q = 1`, :math:`q = p`, :math:`q = \mathbb{1}\{x \le d/8\}` (else
        the scheme spec), and the references :math:`0.35 d^{-1/4}` (dashed) and :math:`3.5 d^{-1}`
        (dotted) of the paper's figure.

    Notes
    -----
    Cabannes et al. (2024), Figure 4 and Theorem 1; see the docs: science/figures.md.
    """
    fig, (ax,) = new_figure(1, width=5.0, height=3.8)
    stats = summarise(frame, ["scheme", "n_samples", "dim"])
    series = list(dict.fromkeys(zip(frame["scheme"], frame["n_samples"], strict=True)))
    several_t = len({t for _, t in series}) > 1
    for (scheme, t), color in zip(series, colors(len(series)), strict=True):
        s = stats[(stats["scheme"] == scheme) & (stats["n_samples"] == t)]
        label = scheme_label(scheme) + (f", {_label_samples(t)}" if several_t else "")
        curve(ax, s["dim"].to_numpy(), s["mean"].to_numpy(), s["sem"].to_numpy(), label, color)
    dims = np.sort(stats["dim"].unique())
    theory_line(ax, dims, 0.35, -0.25, r"$0.35\,d^{-1/4}$")
    theory_line(ax, dims, 3.5, -1.0, r"$3.5\,d^{-1}$", ls=":")
    title = "Infinite data: error vs d" if not several_t else "Error vs d"
    ax.set(xlabel="memory dimension d", ylabel="population error", title=title)
    ax.legend(fontsize=8)
    return fig


def figure1(frame: pd.DataFrame) -> Figure:
    r"""The joint law in (d, T): error vs d, error vs T and the (d, T) contour (Figure 1).

    Parameters
    ----------
    frame : pandas.DataFrame
        Tidy closed-form rows, one per trial, with columns ``scheme`` (str), ``dim`` (int),
        ``n_samples`` (float; ``inf`` rows appear only in the error-vs-d panel) and ``error``.

    Returns
    -------
    matplotlib.figure.Figure
        One row of three panels per scheme, in the order the schemes first appear (the paper
        draws one, ``empirical_threshold:P=d/12``): error vs d, one curve per T, with the
        dashed :math:`5 d^{-1}`; error vs T, one curve per d, with the dashed :math:`0.5 T^{-1/2}`;
        the contour of the trial-mean error over (d, T). With several schemes every panel title
        starts with the scheme, so schemes are never pooled.

    Notes
    -----
    Cabannes et al. (2024), Figure 1 and Proposition 4
    (:math:`E \asymp d^{-\alpha +1} + T^{-1+1/\alpha}`); see the docs: science/figures.md.
    """
    schemes = list(dict.fromkeys(frame["scheme"]))
    fig, axes = new_figure(3, rows=len(schemes))
    for row, scheme in enumerate(schemes):
        prefix = f"{scheme_label(scheme)}: " if len(schemes) > 1 else ""
        _joint_row(axes[3 * row : 3 * row + 3], frame[frame["scheme"] == scheme], prefix)
    return fig


def _joint_row(axes: Sequence[Axes], frame: pd.DataFrame, prefix: str) -> None:
    """Figure 1's three panels for one scheme's rows."""
    stats = summarise(frame, ["n_samples", "dim"])
    samples = np.sort(stats["n_samples"].unique())
    dims = np.sort(stats["dim"].unique())
    for t, color in zip(samples, colors(len(samples)), strict=True):
        s = stats[stats["n_samples"] == t]
        mean, sem = s["mean"].to_numpy(), s["sem"].to_numpy()
        curve(axes[0], s["dim"].to_numpy(), mean, sem, _label_samples(t), color)
    theory_line(axes[0], dims, 5.0, -1.0, r"$5\,d^{-1}$")
    axes[0].set(xlabel="memory dimension d", ylabel="population error", title=prefix + "Error vs d")
    finite = [t for t in samples if math.isfinite(t)]
    for d, color in zip(dims, colors(len(dims)), strict=True):
        s = stats[(stats["dim"] == d) & np.isfinite(stats["n_samples"])]
        mean, sem = s["mean"].to_numpy(), s["sem"].to_numpy()
        curve(axes[1], s["n_samples"].to_numpy(), mean, sem, f"d = {d}", color)
    theory_line(axes[1], np.asarray(finite), 0.5, -0.5, r"$0.5\,T^{-1/2}$")
    axes[1].set(
        xlabel="number of samples T", ylabel="population error", title=prefix + "Error vs T"
    )
    _contour(axes[2], stats[np.isfinite(stats["n_samples"])], prefix + "Error over (d, T)")
    for ax in axes[:2]:
        ax.legend(fontsize=7)


def _contour(ax: Axes, stats: pd.DataFrame, title: str) -> None:
    grid = stats.pivot(index="n_samples", columns="dim", values="mean")
    d, t = np.meshgrid(grid.columns.to_numpy(float), grid.index.to_numpy(float))
    levels = np.logspace(
        np.log10(max(grid.min().min(), 1e-4)), np.log10(max(grid.max().max(), 1e-3)), 12
    )
    filled = ax.contourf(
        d, t, np.clip(grid.to_numpy(), levels[0], None), levels=levels, norm="log", cmap="viridis"
    )
    ax.figure.colorbar(filled, ax=ax, label="population error", format="%.2g")
    ax.set(
        xscale="log",
        yscale="log",
        xlabel="memory dimension d",
        ylabel="number of samples T",
        title=title,
    )


def figure3(frame: pd.DataFrame) -> Figure:
    """(d, T) contours of the trial-mean error, one panel per scheme (Figure 3).

    Parameters
    ----------
    frame : pandas.DataFrame
        Tidy closed-form rows with ``scheme``, ``dim``, ``n_samples`` and ``error``; rows of
        infinite data are left out.

    Returns
    -------
    matplotlib.figure.Figure
        One log-log contour panel (with its colour bar) per scheme, titled with its weighting
        (:func:`scheme_label`).

    Notes
    -----
    Cabannes et al. (2024), Figure 3 (the overflow of schemes without a threshold); see the
    docs: science/figures.md.
    """
    schemes = list(dict.fromkeys(frame["scheme"]))
    fig, axes = new_figure(len(schemes))
    stats = summarise(frame[np.isfinite(frame["n_samples"])], ["scheme", "n_samples", "dim"])
    for ax, scheme in zip(axes, schemes, strict=True):
        _contour(ax, stats[stats["scheme"] == scheme], scheme_label(scheme))
    return fig


def memory_matrices(scores: Mapping[str, np.ndarray], targets: np.ndarray) -> Figure:
    r"""Pictures of what memories store: the softmax of their N×M scores.

    Parameters
    ----------
    scores : mapping of str to numpy.ndarray, shape (N, M)
        Each memory's scores :math:`u_y^\top W e_x` by panel title.
    targets : numpy.ndarray of int, shape (N,)
        f*(x), marked by a red circle (its ``gid`` is ``"f*(x)"``, for the caption to name).

    Returns
    -------
    matplotlib.figure.Figure
        One panel per memory (rows: inputs, most frequent first) and a shared colour bar.

    Notes
    -----
    The memory-matrix pictures of Cabannes et al. (2024); see the docs: science/figures.md.
    """
    fig, axes = new_figure(len(scores), width=3.0, height=3.6)
    for ax, (label, s) in zip(axes, scores.items(), strict=True):
        z = np.exp(s - s.max(axis=1, keepdims=True))
        image = ax.imshow(
            z / z.sum(axis=1, keepdims=True), cmap="Blues", vmin=0, vmax=1, aspect="auto"
        )
        ax.scatter(
            targets,
            np.arange(len(targets)),
            marker="o",
            facecolors="none",
            edgecolors="red",
            s=30,
            gid="f*(x)",  # named by the caption: circles mark f*(x)
        )
        ax.set(xlabel="output y", ylabel="input x", title=label)
    fig.colorbar(image, ax=axes, label="softmax of scores")
    return fig


FIGURES: dict[str, Callable[[pd.DataFrame], Figure]] = {"1": figure1, "3": figure3, "4": figure4}


def save(fig: Figure, path_stem: str | Path, formats: Sequence[str] = ("png", "svg")) -> list[Path]:
    """Write a figure as ``stem.png`` and ``stem.svg`` (or other formats).

    Parameters
    ----------
    fig : matplotlib.figure.Figure
    path_stem : str or pathlib.Path
        The path without its suffix; missing folders are created.
    formats : sequence of str, default ("png", "svg")

    Returns
    -------
    list of pathlib.Path
        The files written.
    """
    paths = []
    for fmt in formats:
        path = Path(f"{path_stem}.{fmt}")
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path, dpi=150, bbox_inches="tight")
        paths.append(path)
    return paths

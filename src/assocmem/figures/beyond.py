"""Figures beyond the paper (issue 7): capacity frontiers, noisy-label excess error, real word
laws against Zipf. Every function reads stored records (DataFrames), never computes a memory.

Inputs:

- :func:`frontier_frame` turns the JSON of ``assocmem capacity --format json`` (one payload per
  memory × M) into rows ``memory, outputs, dim, repeat, n_star``; :func:`capacity_figure` reads
  them.
- :func:`training_frame` turns training records (``assocmem compare-trained … --format json``,
  ``assocmem train --format json``, or the training rows of ``assocmem sweep results``) into one
  row per run with ``law, label_noise, dim, seed, lr, error, noisy_error, bayes_error,
  excess_error``; :func:`noise_figure` and :func:`laws_figure` read them. With several lrs per
  (curve, d), the lr of lowest seed-averaged error is kept (honest selection).
"""

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import NullFormatter

from assocmem.analysis.capacity import REFERENCE_CONSTANTS
from assocmem.analysis.lr_selection import tuned
from assocmem.figures.style import colors, curve, legend_below, new_figure

MEMORY_LABELS = {"hebbian": "outer product (Hebbian)", "trained": "trained W (full-batch Adam)"}


def frontier_frame(payloads: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """Rows ``memory, outputs, dim, repeat, n_star`` from ``assocmem capacity`` JSON payloads.

    ``outputs`` is ``"N"`` (each input its own output) or M; a payload without ``memory`` or
    ``settings`` (older output) counts as hebbian with M = N.
    """
    rows = []
    for payload in payloads:
        memory = payload.get("memory", "hebbian")
        n_outputs = payload.get("settings", {}).get("n_outputs")
        outputs = "N" if n_outputs is None else str(n_outputs)
        for point in payload["points"]:
            for repeat, n_star in enumerate(point["n_star"]):
                rows.append({"memory": memory, "outputs": outputs, "dim": point["dim"],
                             "repeat": repeat, "n_star": n_star})  # fmt: skip
    return pd.DataFrame(rows)


def _repeats(part: pd.DataFrame) -> tuple[np.ndarray, list[np.ndarray]]:
    """The dims and, per d, the N* of every repeat."""
    groups = part.groupby("dim")["n_star"]
    return np.array([d for d, _ in groups], float), [g.to_numpy(float) for _, g in groups]


def _spread(values: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Medians and the (below, above) distances to the min and max of each array."""
    med = np.array([np.median(v) for v in values])
    return med, np.array([med - [v.min() for v in values], [v.max() for v in values] - med])


def _n_log_n_panel(ax: Axes, frame: pd.DataFrame) -> None:
    """M = N: d² against N* log N* (median, min–max over repeats), the fitted d² = ĉ·N log N
    (ĉ the median of d²/(N* log N*) over the larger half of the d, where finite-size effects
    are smallest) and the reference constants."""
    spans = []
    memories = sorted(set(frame["memory"]))
    for memory, color in zip(memories, colors(len(memories)), strict=True):
        dims, n_star = _repeats(frame[frame["memory"] == memory])
        x, xerr = _spread([v * np.log(v) for v in n_star])
        ax.errorbar(x, dims**2, xerr=xerr, marker="o", ms=4, lw=1.5, capsize=2, color=color,
                    label=MEMORY_LABELS.get(memory, memory))  # fmt: skip
        c_hat = float(np.median((dims**2 / x)[len(dims) // 2 :]))  # the larger half of d
        ax.plot(x, c_hat * x, color=color, lw=0.8, ls=":", label=f"fit: d² = {c_hat:.3g}·N log N")
        spans += [x.min(), x.max()]
    if spans:
        xs = np.geomspace(min(spans), max(spans), 50)
        for (name, c), ls in zip(REFERENCE_CONSTANTS.items(), ("--", "-."), strict=True):
            ax.plot(xs, c * xs, ls=ls, color="black", lw=1, label=f"d² = {c}·N log N, {name}")
    ax.set(xscale="log", yscale="log", xlabel="N* log N*", ylabel="d²",
           title="M = N: capacity frontier")  # fmt: skip
    legend_below(ax, ncols=1)  # the references cross the whole panel


def _linear_panel(ax: Axes, frame: pd.DataFrame, outputs: str) -> None:
    """Small M: N* against d (median, min–max over repeats), with N* = k·d fitted (k the
    median of N*/d over the larger half of the d)."""
    memories = sorted(set(frame["memory"]))
    for memory, color in zip(memories, colors(len(memories)), strict=True):
        dims, n_star = _repeats(frame[frame["memory"] == memory])
        y, yerr = _spread(n_star)
        ax.errorbar(dims, y, yerr=yerr, marker="o", ms=4, lw=1.5, capsize=2, color=color,
                    label=MEMORY_LABELS.get(memory, memory))  # fmt: skip
        k = float(np.median((y / dims)[len(dims) // 2 :]))
        ax.plot(dims, k * dims, color=color, lw=0.8, ls=":", label=f"fit: N* = {k:.3g}·d")
    ax.set(xscale="log", yscale="log", xlabel="memory dimension d", ylabel="N* (accuracy ≥ τ)",
           title=f"M = {outputs}: capacity frontier")  # fmt: skip
    _dim_ticks(ax, sorted(set(frame["dim"])))
    ax.legend(fontsize=6)


def _dim_ticks(ax: Axes, dims: Sequence[float]) -> None:
    """Label the measured d on a log axis (no crowded minor labels)."""
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xticks([float(d) for d in dims], [f"{d:g}" for d in dims])


def capacity_figure(frame: pd.DataFrame) -> Figure:
    """Capacity frontiers of the Hebbian and trained memories: a panel for M = N (d² vs
    N log N, fitted constant and the references 1.3 and 2) and one per small M (N* vs d)."""
    small = sorted({o for o in frame["outputs"] if o != "N"}, key=int)
    fig, axes = new_figure(int((frame["outputs"] == "N").any()) + len(small))
    panels = iter(axes)
    if (frame["outputs"] == "N").any():
        _n_log_n_panel(next(panels), frame[frame["outputs"] == "N"])
    for outputs in small:
        _linear_panel(next(panels), frame[frame["outputs"] == outputs], outputs)
    return fig


def _law(row: Mapping[str, Any]) -> str:
    words = row.get("words")
    if isinstance(words, str):
        return f"words:{words}"
    return f"zipf:{float(row.get('alpha', 2.0)):g}"


def training_frame(records: Sequence[Mapping[str, Any]] | pd.DataFrame) -> pd.DataFrame:
    """One row per training run from flat records, ``RunResult.to_dict()`` records (a nested
    ``config``) or a sweep-results DataFrame; adds ``law`` and the noise columns if missing."""
    if isinstance(records, pd.DataFrame):
        frame = records.copy()
    else:
        flat = [{**r["config"], **{k: v for k, v in r.items() if k != "config"}}
                if "config" in r else dict(r) for r in records]  # fmt: skip
        frame = pd.DataFrame(flat)
    if "law" not in frame:
        frame["law"] = [
            _law({str(k): v for k, v in row.items()}) for row in frame.to_dict("records")
        ]
    if "label_noise" not in frame:
        frame["label_noise"] = 0.0
    frame["label_noise"] = frame["label_noise"].fillna(0.0)
    if "excess_error" not in frame or frame["excess_error"].isna().all():
        eps, m = frame["label_noise"], frame["n_outputs"]
        frame["noisy_error"] = eps + (1 - eps * m / (m - 1)) * frame["error"]
        frame["bayes_error"] = eps
        frame["excess_error"] = frame["noisy_error"] - eps
    return frame


def _curves(ax: Axes, stats: pd.DataFrame, key: str, label: Any, log_y: bool = True) -> None:
    values = list(dict.fromkeys(stats[key]))
    for v, color in zip(values, colors(len(values)), strict=True):
        # On log axes a zero error (every token stored) has no point: the curve stops there.
        s = stats[(stats[key] == v) & ((stats["mean"] > 0) | (not log_y))].sort_values("dim")
        curve(ax, s["dim"].to_numpy(float), s["mean"].to_numpy(float), s["sem"].to_numpy(float),
              label(v), color)  # fmt: skip


def noise_figure(frame: pd.DataFrame) -> Figure:
    """Trained memories under label noise: excess error over the Bayes error ε vs d (left) and
    the error against the noisy labels with the Bayes floors (right), one curve per ε."""
    frame = training_frame(frame)
    fig, (left, right) = new_figure(2)
    _curves(
        left, tuned(frame, ["label_noise"], "excess_error"), "label_noise", lambda e: f"ε = {e:g}"
    )
    left.set(xlabel="memory dimension d", ylabel="excess error (vs Bayes)",
             title="label noise: excess error")  # fmt: skip
    left.legend(fontsize=7)
    stats = tuned(frame, ["label_noise"], "noisy_error")
    _curves(right, stats, "label_noise", lambda e: f"ε = {e:g}", log_y=False)
    floors = [eps for eps in sorted(set(stats["label_noise"])) if eps > 0]
    for i, eps in enumerate(floors):
        label = "Bayes error ε" if i == 0 else None
        right.axhline(eps, ls="--", color="black", lw=0.8, label=label)
    right.set_yscale("linear")
    right.set(xlabel="memory dimension d", ylabel="error vs noisy labels",
              title="against the noisy labels")  # fmt: skip
    right.legend(fontsize=7)
    return fig


def laws_figure(frame: pd.DataFrame) -> Figure:
    """Trained memories on real word laws against the Zipf law at the fitted α̂: error vs d,
    one curve per law (one panel; put one language and its Zipf fit per figure)."""
    frame = training_frame(frame)
    fig, (ax,) = new_figure(1)
    _curves(ax, tuned(frame, ["law"]), "law", _law_label)
    ax.set(xlabel="memory dimension d", ylabel="population error",
           title="real word law vs Zipf(α̂)")  # fmt: skip
    ax.legend(fontsize=7)
    return fig


def _law_label(law: str) -> str:
    kind, _, value = law.partition(":")
    if kind == "words":
        return f"words ({value})"
    return f"Zipf α = {float(value):.3g}" if value and not math.isnan(float(value)) else law

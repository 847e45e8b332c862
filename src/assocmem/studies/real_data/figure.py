"""Figures beyond the paper: noisy-label excess error, real word laws against Zipf.
Every function reads stored records (DataFrames), never computes a memory. (The capacity
frontiers' figure is the facts study's: :mod:`assocmem.studies.facts.frontier_figure`.)

Input: :func:`training_frame` turns training records (``assocmem compare-trained … --format
json``, ``assocmem train --format json``, or the training rows of ``assocmem sweep results``)
into one row per run with ``law, label_noise, dim, seed, lr, error, noisy_error, bayes_error,
excess_error``; :func:`noise_figure` and :func:`laws_figure` read them. With several lrs per
(curve, d), the lr of lowest seed-averaged error is kept (honest selection).
"""

import math
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from assocmem.analysis.lr_selection import tuned
from assocmem.figures.style import colors, curve, new_figure


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

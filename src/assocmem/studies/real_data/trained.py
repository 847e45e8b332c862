"""Trained memories beyond the paper: real word laws against Zipf(α̂), and noisy labels.

Both comparisons run an ordinary training grid (:func:`assocmem.training.grid.expand_grid`) and
return flat per-run records (the config fields and the metrics of
:class:`~assocmem.training.records.RunResult`, without curves and snapshots), the shape that
:func:`assocmem.studies.real_data.figure` reads, plus power-law fits in d:

- :func:`compare_trained_laws`: the same grid on ``words:LANG`` and on the Zipf law over the same
  N tokens closest in KL (α̂, :func:`assocmem.laws.words.word_distribution`);
- :func:`noise_curves`: the same grid at several label-noise levels ε; the fitted quantity is the
  excess error over the Bayes error ε (∝ the error against f*).

Slopes: every curve of one comparison is fitted over the same window of d, chosen automatically
(:func:`assocmem.analysis.fit.auto_window`) on the first curve (the real law; the first ε) whose
automatic window holds at least three points.

Learning rates: when the grid has several, each (law or ε, d) keeps the lr with the lowest
seed-averaged error against f* (honest selection, not the per-seed oracle).
"""

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from assocmem.analysis.fit import PowerLawFit, fit_scaling
from assocmem.laws.words import word_distribution
from assocmem.ops.lr_selection import best_lr_records
from assocmem.training.engine import train
from assocmem.training.grid import expand_grid
from assocmem.training.records import RunResult

METRICS = ("error", "head_error", "tail_error", "cross_entropy", "p_correct", "noisy_error",
           "bayes_error", "excess_error")  # fmt: skip


def run_records(spec: Mapping[str, Any], *, progress: bool = False) -> list[dict[str, Any]]:
    """Train the grid ``spec``; one flat record per run: config fields, ``law``, status, metrics."""
    return [flat_record(result) for result in train(expand_grid(spec), progress=progress)]


def flat_record(result: RunResult) -> dict[str, Any]:
    record = {**result.config.to_dict(), "law": result.config.law, "status": result.status}
    record.update({name: getattr(result, name) for name in METRICS})
    return record


def best_lr(records: Sequence[dict[str, Any]], group: str) -> list[dict[str, Any]]:
    """Keep, for each (``group`` value, d), the runs of the lr with the lowest mean error."""
    return best_lr_records(records, [group, "dim"])


@dataclass
class Curve:
    """One curve in d: seed-averaged metrics per d and the power-law fit of ``metric``."""

    label: str
    metric: str
    dims: list[int]
    mean: list[float]
    lr: list[float]
    fit: PowerLawFit | None
    extra: dict[str, list[float]] = field(default_factory=dict)  # other metrics' means per d


def curve(
    records: Sequence[dict[str, Any]],
    label: str,
    metric: str,
    window: tuple[float, float] | None = None,
    seed: int = 0,
) -> Curve:
    """Seed-averaged ``metric`` vs d for records of one curve, and its slope in d (bootstrap)
    over ``window`` (None: chosen by :func:`assocmem.analysis.fit.auto_window`)."""
    dims = sorted({r["dim"] for r in records})
    by_dim = [[r for r in records if r["dim"] == d] for d in dims]
    per_seed = np.array([[r[metric] for r in sorted(rs, key=lambda r: r["seed"])] for rs in by_dim])
    fit = None
    if len(dims) >= 3 and per_seed.shape[1] > 0 and (per_seed.mean(1) > 0).sum() >= 2:
        fit = fit_scaling(np.asarray(dims, float), per_seed.T, window=window, n_boot=500, seed=seed)
    extra = {m: [statistics.fmean(r[m] for r in rs) for rs in by_dim] for m in METRICS}
    return Curve(label, metric, dims, per_seed.mean(1).tolist(), [rs[0]["lr"] for rs in by_dim],
                 fit, extra)  # fmt: skip


def compare_trained_laws(
    language: str, spec: Mapping[str, Any], *, progress: bool = False
) -> tuple[float, list[dict[str, Any]], list[Curve]]:
    """Train ``spec`` on ``words:LANG`` and on Zipf(α̂) over the same N; fit the error vs d.

    Returns α̂, the records (lr-selected) and one :class:`Curve` per law.
    """
    base = {k: v for k, v in spec.items() if k not in ("distribution", "distributions", "words")}
    n_inputs = int(expand_grid(base)[0].n_inputs)
    alpha = word_distribution(language, n_inputs).alpha_kl
    laws = [f"words:{language}", f"zipf:{alpha:.6g}"]
    records = best_lr(run_records({**base, "distributions": laws}, progress=progress), "law")
    curves = same_window([[r for r in records if r["law"] == law] for law in laws], laws, "error")
    return alpha, records, curves


def noise_curves(
    spec: Mapping[str, Any], noises: Sequence[float], *, progress: bool = False
) -> tuple[list[dict[str, Any]], list[Curve]]:
    """Train ``spec`` at each label-noise level; fit the excess error vs d per ε."""
    base = {k: v for k, v in spec.items() if k not in ("label_noise", "label_noises")}
    records = best_lr(
        run_records({**base, "label_noises": list(noises)}, progress=progress), "label_noise"
    )
    groups = [[r for r in records if r["label_noise"] == eps] for eps in noises]
    curves = same_window(groups, [f"ε = {eps:g}" for eps in noises], "excess_error")
    return records, curves


def same_window(
    groups: Sequence[Sequence[dict[str, Any]]], labels: Sequence[str], metric: str
) -> list[Curve]:
    """One curve per group, all fitted over one window of d, so their slopes compare like with
    like: the window chosen automatically on the first curve whose automatic fit has at least
    three points (a curve that reaches zero error early has fewer)."""
    auto = [curve(group, label, metric) for group, label in zip(groups, labels, strict=True)]
    windows = [c.fit.window for c in auto if c.fit is not None and c.fit.n_points >= 3]
    if not windows:
        return auto
    return [
        curve(group, label, metric, window=windows[0])
        for group, label in zip(groups, labels, strict=True)
    ]

"""What a training group records: the error curves and snapshots at record points, the
population metrics where a run ends, and each run's :class:`RunResult`.

Runs that differ only in T share one trajectory (:mod:`~assocmem.training.trajectories`): the
shorter ones end at record points of the longest, and their records are read there.
"""

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from assocmem.laws.tokens import noisy_error
from assocmem.ops.population import PopulationMetrics, population_metrics
from assocmem.runtime import intra_op_threads
from assocmem.training.config import TrainConfig
from assocmem.training.kernels import AbstractKernel
from assocmem.training.state import TrainedState
from assocmem.training.task import Task


@dataclass
class RunResult:
    r"""One training run's record: its config, status and exact population metrics.

    Attributes
    ----------
    config : TrainConfig
    status : {"ok", "diverged"}
        "diverged": some logits non-finite (those tokens count as errors).
    error, head_error, tail_error : float
        The population 0-1 error, and its parts on the head and tail tokens.
    cross_entropy : float
        The population cross-entropy.
    curve : list of (int, float)
        (step, error) every ``eval_every`` steps.
    snapshots : dict of int to list of list of float
        Step → the N×M softmax of the scores.
    p_correct : float
        :math:`\sum_x p(x) \operatorname{softmax}(\mathrm{logits}_x)[f^*(x)]`.
    noisy_error, bayes_error, excess_error : float
        Under label noise ε: the error against noisy labels, ε, and their difference.
    kernel : str
        The kernel that trained it, e.g. "DenseKernel (compiled avx512)".
    state : TrainedState or None
        With ``train(..., return_state=True)``, the trained memory; never part of a stored
        record.
    """

    config: TrainConfig
    status: str  # "ok" | "diverged" (some logits non-finite; those tokens count as errors)
    error: float
    head_error: float
    tail_error: float
    cross_entropy: float
    curve: list[tuple[int, float]] = field(default_factory=list)  # (step, error)
    snapshots: dict[int, list[list[float]]] = field(default_factory=dict)  # step -> N×M softmax
    p_correct: float = math.nan  # Σ_x p(x) softmax(logits_x)[f*(x)]
    noisy_error: float = math.nan  # error against noisy labels, ε + (1 − εM/(M−1))·error
    bayes_error: float = 0.0  # ε: the error of f*, the Bayes rule, against noisy labels
    excess_error: float = math.nan  # noisy_error − bayes_error
    kernel: str = ""  # the kernel that trained it, e.g. "DenseKernel (compiled avx512)"
    state: TrainedState | None = field(default=None, compare=False, repr=False)

    def to_dict(self) -> dict[str, Any]:
        """The record as JSON-ready data: ``config`` (flat), ``status`` and the metrics.

        Returns
        -------
        dict
        """
        return {
            "config": self.config.to_dict(),
            "status": self.status,
            "error": self.error,
            "head_error": self.head_error,
            "tail_error": self.tail_error,
            "cross_entropy": self.cross_entropy,
            "p_correct": self.p_correct,
            "noisy_error": self.noisy_error,
            "bayes_error": self.bayes_error,
            "excess_error": self.excess_error,
            "curve": [list(point) for point in self.curve],
            "snapshots": {str(step): table for step, table in self.snapshots.items()},
            "kernel": self.kernel,
        }


class Recorder:
    """The error curves and softmax snapshots of a group's runs at their record points."""

    def __init__(self, cfg: TrainConfig, runs: int, task: Task, ends: Sequence[int] = ()) -> None:
        self.cfg, self.task = cfg, task
        self.curves: list[list[tuple[int, float]]] = [[] for _ in range(runs)]
        self.snapshots: list[dict[int, list[list[float]]]] = [{} for _ in range(runs)]
        self.ends = frozenset(ends)  # steps where shorter runs of the same trajectories end
        self.at_end: dict[int, PopulationMetrics] = {}  # their population metrics there

    def stops_after(self, t: int) -> list[int]:
        """The record points after step t."""
        cfg = self.cfg
        stops = [s for s in (*cfg.snapshot_steps, *self.ends) if s > t]
        if cfg.eval_every:
            stops.append((t // cfg.eval_every + 1) * cfg.eval_every)
        return stops

    def record(self, step: int, kernel: AbstractKernel) -> None:
        cfg = self.cfg
        task = self.task
        with intra_op_threads(1):
            metrics = None
            if step in self.ends:
                metrics = population_metrics(
                    kernel.logits(), task.targets, task.probs, task.law, task.population
                )
                self.at_end[step] = metrics
            if cfg.eval_every and step % cfg.eval_every == 0:
                # the error does not depend on the label law (only the cross-entropy does)
                metrics = metrics or population_metrics(
                    kernel.logits(), task.targets, task.probs, population=task.population
                )
                for curve, value in zip(self.curves, metrics.error.tolist(), strict=True):
                    curve.append((step, value))
            if step in cfg.snapshot_steps:
                scores = torch.softmax(kernel.logits().double(), dim=2).tolist()
                for snap, table in zip(self.snapshots, scores, strict=True):
                    snap[step] = table


def results(
    configs: Sequence[TrainConfig], final: PopulationMetrics, recorder: Recorder, kernel: str
) -> list[RunResult]:
    """Every run's record from the group's final population metrics."""
    return [
        run_result(cfg, final, r, recorder.curves[r], recorder.snapshots[r], kernel)
        for r, cfg in enumerate(configs)
    ]


def shorter_results(
    configs: Sequence[TrainConfig],
    shorter: Sequence[tuple[TrainConfig, int]],
    recorder: Recorder,
    kernel: str,
) -> list[RunResult]:
    """The records of runs that end early on the trajectory of run r of ``configs``: (config,
    r) pairs, read at their last step (their curves and snapshots up to it)."""
    out = []
    for cfg, r in shorter:
        end = cfg.steps
        curve = [point for point in recorder.curves[r] if point[0] <= end]
        snapshots = {s: table for s, table in recorder.snapshots[r].items() if s <= end}
        out.append(run_result(cfg, recorder.at_end[end], r, curve, snapshots, kernel))
    return out


def run_result(
    cfg: TrainConfig,
    metrics: PopulationMetrics,
    r: int,
    curve: list[tuple[int, float]],
    snapshots: dict[int, list[list[float]]],
    kernel: str,
) -> RunResult:
    """The record of the run ``cfg`` from row r of a group's population metrics."""
    finite = bool(metrics.finite[r])
    noisy = noisy_fields(float(metrics.error[r]), cfg)
    return RunResult(
        config=cfg,
        status="ok" if finite else "diverged",
        error=float(metrics.error[r]),
        head_error=float(metrics.head_error[r]),
        tail_error=float(metrics.tail_error[r]),
        cross_entropy=float(metrics.cross_entropy[r]) if finite else math.nan,
        curve=curve,
        snapshots=snapshots,
        noisy_error=noisy["noisy_error"],
        bayes_error=noisy["bayes_error"],
        excess_error=noisy["excess_error"],
        p_correct=float(metrics.p_correct[r]) if metrics.p_correct is not None else math.nan,
        kernel=kernel,
    )


def noisy_fields(error: float, cfg: TrainConfig) -> dict[str, float]:
    """Error against noisy labels, Bayes error ε and excess error (the closed-form definitions)."""
    noisy = noisy_error(error, cfg.label_noise, cfg.n_outputs)
    return {
        "noisy_error": noisy,
        "bayes_error": cfg.label_noise,
        "excess_error": noisy - cfg.label_noise,
    }

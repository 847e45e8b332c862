"""Similar-tokens runs: a closed-form run (one point, one trial) measured token by token.

Its config is a :class:`~assocmem.closed_form.config.ClosedFormConfig` (clustered embeddings:
``embedding = "clustered"``, ``n_groups``, ``similarity``, ``grouping``; group-shared targets:
``target = "group"``); besides the population error of every (scheme, d, T) it stores the part
of that error on tokens never seen in the sample and on tokens the memory does not store, their
probability masses, and the Gaussian theory's predictions of the three errors
(:mod:`assocmem.studies.similar.memory`; docs: beyond/similar.md).
"""

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from assocmem.config.memory import check_budget
from assocmem.studies.similar.memory import METRICS, QUADRATURE_NODES, similar_trials
from assocmem.sweep.kinds.base import Outcome, as_float, base_row, config_columns
from assocmem.sweep.kinds.closed_form import EXPLICIT, ClosedFormKind, build_closed_form

_VECTORS = ("dims", "schemes", "n_samples", "trial")


def _columns(cfg: Any) -> int:
    return sum(len(set(cfg.n_samples)) if s.uses_data else 1 for s in cfg.parsed_schemes)


class SimilarKind(ClosedFormKind):
    """Closed-form runs with the error on never-seen and unstored tokens and its theory."""

    name = "similar"
    default_runs_per_batch = 10

    def build(self, values: Mapping[str, Any]) -> Any:
        """The point config, with the working set of the token-by-token theory in the budget."""
        cfg = build_closed_form(values)
        n, m, columns = cfg.n_inputs, cfg.n_outputs, _columns(cfg)
        theory = 8 * n * m * (QUADRATURE_NODES + 8)  # one (column, d): the quadrature's arrays
        stored = columns * len(cfg.dims) * n * (8 + 1) * 3  # weights, retrieval, expected misses
        check_budget(
            theory + stored,
            cfg.memory_gb,
            f"the similar-tokens theory of N = {n}",
            "lower n_inputs, dims or n_samples",
        )
        return cfg

    def execute(self, configs: Sequence[Any], trials: Sequence[int | None]) -> list[Outcome]:
        """One pass of the kernel over the batch's trials, then each trial's metrics."""
        cfg = configs[0]
        indices = [t for t in trials if t is not None]
        assert len(indices) == len(configs)  # runs of one point (one group key)
        from assocmem.closed_form.problem import Problem

        problem = Problem(cfg)
        columns = [[c.scheme, c.n_samples] for c in problem.columns]
        out: list[Outcome] = []
        for metrics in similar_trials(cfg, indices):
            finite = all(bool(np.isfinite(v).all()) for v in metrics.values())
            document: dict[str, Any] = {"columns": columns, "dims": list(problem.dims)}
            document.update({name: metrics[name].tolist() for name in METRICS})
            out.append((document, "ok" if finite else "diverged"))
        return out

    def rows(self, row: Mapping[str, Any]) -> list[dict[str, Any]]:
        """One row per (scheme, d, T): ``scheme``, ``dim``, ``n_samples`` (``inf``: infinite
        data) and every metric of :data:`~assocmem.studies.similar.memory.METRICS`."""
        common = {**base_row(row), **config_columns(row, _VECTORS), "trial": row["config"]["trial"]}
        common["sampler"] = row["config"].get("sampler", EXPLICIT)
        metrics = row["metrics"]
        if metrics is None:  # a failed run: no numbers
            return [{**common, "scheme": None, "dim": None, "n_samples": None, "error": math.nan}]
        out = []
        for c, (scheme, n_samples) in enumerate(metrics["columns"]):
            for i, dim in enumerate(metrics["dims"]):
                values = {name: as_float(metrics[name][c][i]) for name in METRICS}
                size = math.inf if n_samples is None else n_samples
                out.append({**common, "scheme": scheme, "dim": dim, "n_samples": size, **values})
        return out

    def work(self, config: Any) -> float:
        cfg = config
        n, m = cfg.n_inputs, cfg.n_outputs
        return super().work(cfg) + float(_columns(cfg) * len(cfg.dims) * n * m * QUADRATURE_NODES)

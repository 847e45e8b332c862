"""Closed-form runs: one (point, trial index) holds the errors of every (scheme, d, T) of that
trial; a batch is one ``run_closed_form`` call over a chunk of trials of one point."""

import math
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np

from assocmem.closed_form.config import ClosedFormConfig, config_from_mapping
from assocmem.config.errors import ConfigError
from assocmem.sweep.kinds.base import Outcome, RunKind, as_float, base_row, config_columns

_VECTORS = ("dims", "schemes", "n_samples", "trial")  # not config columns of a result row
EXPLICIT = "explicit"  # what a record stored before the sampler field existed computed


def build_closed_form(values: Mapping[str, Any]) -> ClosedFormConfig:
    """A closed-form point config; trials are the sweep's business (the spec's ``trials``)."""
    if "trials" in values:
        raise ConfigError("trials", "set trials at the top level of a sweep spec")
    return config_from_mapping({**values, "trials": 1})


class ClosedFormKind(RunKind):
    """:class:`ClosedFormConfig` runs, one per trial index (a trial's numbers depend only on its
    config, seed and index, so they do not depend on the batch)."""

    name = "closed_form"
    operational: ClassVar[tuple[str, ...]] = ("trials", "device", "memory_gb")
    # fields that came later (multinomial counts: beyond/vocabulary.md; the majority label
    # rule: beyond/noise-threshold.md; similar tokens: beyond/similar.md): runs at their
    # defaults keep their hashes
    added_fields: ClassVar[Mapping[str, Any]] = {
        "counts": "tokens",
        "label_rule": "soft",
        "n_groups": 1,
        "similarity": 0.0,
        "grouping": "random",
    }
    has_trials = True
    default_runs_per_batch = 10

    def build(self, values: Mapping[str, Any]) -> ClosedFormConfig:
        return build_closed_form(values)

    def identity(self, config: Any, trial: int | None) -> dict[str, Any]:
        """The base identity with the *resolved* sampler in place of the config's choice, and
        no sampler at all for explicit runs: they hash as runs stored before samplers existed
        (their numbers are the same), and ``auto`` and ``in_law`` runs that compute the same
        thing share one hash."""
        identity = super().identity(config, trial)
        identity["config"].pop("sampler", None)
        if config.resolved_sampler != EXPLICIT:
            identity["config"]["sampler"] = config.resolved_sampler
        return identity

    def record(self, config: Any, trial: int | None) -> dict[str, Any]:
        """The stored config: the resolved sampler (a record read back says what ran)."""
        record = super().record(config, trial)
        record.pop("trials")
        record["sampler"] = config.resolved_sampler
        return record

    def execute(self, configs: Sequence[Any], trials: Sequence[int | None]) -> list[Outcome]:
        """One ``run_closed_form`` call over the batch's trials of one point."""
        from assocmem.closed_form import run_closed_form

        cfg = configs[0]
        indices = [t for t in trials if t is not None]
        assert len(indices) == len(configs)  # runs of one point (one group key)
        result = run_closed_form(cfg, trials=indices)
        columns = [[c.scheme, c.n_samples] for c in result.columns]
        out: list[Outcome] = []
        for row in range(len(indices)):
            errors, head = result.errors[row], result.head[row]
            finite = bool(np.isfinite(errors).all() and np.isfinite(head).all())
            metrics = {
                "columns": columns,
                "dims": list(result.dims),
                "errors": errors.tolist(),  # (n_columns, n_dims)
                "head": head.tolist(),
            }
            out.append((metrics, "ok" if finite else "diverged"))
        return out

    def rows(self, row: Mapping[str, Any]) -> list[dict[str, Any]]:
        """One row per (scheme, d, T): ``scheme``, ``dim``, ``n_samples`` (``inf`` = infinite
        data), ``error``, ``head_error``, ``tail_error``; a failed run gives one row of NaN."""
        common = {**base_row(row), **config_columns(row, _VECTORS), "trial": row["config"]["trial"]}
        common["sampler"] = row["config"].get("sampler", EXPLICIT)  # stored before samplers
        metrics = row["metrics"]
        if metrics is None:  # a failed run: no numbers
            return [{**common, "scheme": None, "dim": None, "n_samples": None, "error": math.nan}]
        out = []
        for c, (scheme, n_samples) in enumerate(metrics["columns"]):
            for i, dim in enumerate(metrics["dims"]):
                error, head = as_float(metrics["errors"][c][i]), as_float(metrics["head"][c][i])
                out.append(
                    {
                        **common,
                        "scheme": scheme,
                        "dim": dim,
                        "n_samples": math.inf if n_samples is None else n_samples,
                        "error": error,
                        "head_error": head,
                        "tail_error": error - head,
                    }
                )
        return out

    def work(self, config: Any) -> float:
        cfg = config
        columns = sum(len(cfg.n_samples) if s.uses_data else 1 for s in cfg.parsed_schemes)
        n, m, d = cfg.n_inputs, cfg.n_outputs, max(cfg.dims)
        return float(n * d * (m + 2) + n * m * columns * len(cfg.dims) * 4)

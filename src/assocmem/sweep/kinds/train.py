"""Training runs: one :class:`TrainConfig` each; a batch is one ``train`` call over runs that
differ only in seed, lr and T (the runs of one T-family share one trajectory:
:mod:`~assocmem.training.trajectories`), cut to the engine's memory budget."""

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import fields
from typing import Any, ClassVar

import numpy as np

from assocmem.analysis.stats import METRICS
from assocmem.config.errors import ConfigError, unknown_name
from assocmem.config.fields import field_names
from assocmem.sweep.kinds.base import Outcome, RunKind, as_float, base_row, config_columns
from assocmem.training.config import RENAMED, TrainConfig

# The stored metrics of a training run are analysis.stats.METRICS (attributes of the engine's
# ``RunResult``); NaN in result rows of records stored before a metric existed.
_FINITE = ("error", "head_error", "tail_error")  # a run is ``diverged`` unless these are finite
_TUPLES = ("betas", "decay_steps", "snapshot_steps")
_BOOLS = tuple(f.name for f in fields(TrainConfig) if isinstance(f.default, bool))
DEFAULT_RUNS_PER_BATCH = 256


def build_train(values: Mapping[str, Any]) -> TrainConfig:
    """A training config from plain TOML values (lists for its tuple fields)."""
    allowed = set(TrainConfig.flat_keys()) | {"distribution"}
    unknown = sorted(set(values) - allowed)
    if unknown:
        raise unknown_name(unknown[0], "key", unknown[0], sorted(allowed))
    clean = dict(values)
    if "distribution" in clean:  # zipf, zipf:ALPHA or words:LANG, as `assocmem train` takes it
        from assocmem.laws.words import parse_distribution

        clean.update(parse_distribution(clean.pop("distribution")))
    for key in _BOOLS:
        if key in clean and not isinstance(clean[key], bool):
            raise ConfigError(key, f"must be true or false, got {clean[key]!r}")
    for key in _TUPLES:  # lists become tuples in from_flat
        if key in clean and not isinstance(clean[key], list | tuple):
            raise ConfigError(key, f"must be a list, got {clean[key]!r}")
    try:
        return TrainConfig.from_flat(clean)
    except TypeError as err:  # a wrong type the validators did not name (e.g. a table)
        raise ConfigError("config", str(err)) from None


class TrainKind(RunKind):
    """One training run per point (its seed is a field of the point)."""

    name = "train"
    added_fields: ClassVar[Mapping[str, Any]] = {"words": None, "label_noise": 0.0}
    renamed: ClassVar[Mapping[str, str]] = {new: old for old, new in RENAMED.items()}
    default_runs_per_batch = DEFAULT_RUNS_PER_BATCH

    def build(self, values: Mapping[str, Any]) -> TrainConfig:
        return build_train(values)

    def group_key(self, config: Any) -> Hashable:
        """Every field but seed, lr and T: the runs of one ``train`` call, whose runs that
        differ only in T share a trajectory and the others one tensor program (the training
        layer's own grouping, :meth:`TrainConfig.batch_key` but for T)."""
        varied = ("seed", "lr", "n_samples", "extra")
        return tuple(
            getattr(config, name) for name in field_names(TrainConfig) if name not in varied
        )

    def batch_limit(self, config: Any, runs_per_batch: int | None) -> int:
        """At most ``runs_per_batch`` (default 256), and what fits the engine's memory budget
        (:func:`assocmem.training.planning.runs_per_chunk`, as ``train`` chunks)."""
        from assocmem.training.planning import runs_per_chunk

        return runs_per_chunk(config, max_runs=runs_per_batch or self.default_runs_per_batch)

    def execute(self, configs: Sequence[Any], trials: Sequence[int | None]) -> list[Outcome]:
        """One ``train`` call: runs that differ only in seed, lr and T."""
        from assocmem.training.engine import train

        assert all(isinstance(c, TrainConfig) for c in configs) and not any(trials)
        out: list[Outcome] = []
        for result in train(list(configs)):
            metrics: dict[str, Any] = {name: getattr(result, name) for name in METRICS}
            metrics["kernel"] = result.kernel  # provenance: which kernel (and library) ran it
            if result.curve:
                metrics["curve"] = [list(point) for point in result.curve]
            if result.snapshots:
                metrics["snapshots"] = {str(k): v for k, v in result.snapshots.items()}
            finite = all(np.isfinite(metrics[k]) for k in _FINITE)
            out.append((metrics, result.status if finite else "diverged"))
        return out

    def rows(self, row: Mapping[str, Any]) -> list[dict[str, Any]]:
        """One row: the config fields, then :data:`METRICS`."""
        metrics = row["metrics"] or {}
        values = {name: as_float(metrics.get(name)) for name in METRICS}
        return [{**base_row(row), **config_columns(row, renamed=self.renamed), **values}]

    def curves(self, row: Mapping[str, Any]) -> list[dict[str, Any]]:
        """One row per evaluated step (``eval_every``): the config, ``step`` and ``error``."""
        curve = (row["metrics"] or {}).get("curve")
        if not curve:
            return []
        run = {**base_row(row), **config_columns(row, renamed=self.renamed)}
        return [{**run, "step": int(step), "error": float(error)} for step, error in curve]

    def work(self, config: Any) -> float:
        from assocmem.training.planning import work_estimate

        return work_estimate(config)

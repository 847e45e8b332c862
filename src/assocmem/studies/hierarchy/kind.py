"""Memories in series: ``hierarchy`` runs (closed form) and ``hierarchy_train`` runs (trained
through a bottleneck). The science is :mod:`assocmem.studies.hierarchy.memory` and
:mod:`assocmem.studies.hierarchy.train`; these kinds build their configs from a spec, execute
a batch of trials of one point and read the stored records back as tidy rows.

A run is one (point, trial): a trial draws its own f₁, samples and embeddings from named
streams, so its numbers do not depend on the trials computed beside it. A spec::

    kind = "hierarchy"
    trials = 100
    [base]
    dims = [16, 32, 64]
    [axes]
    n_concepts = [5, 20]
    alpha = [1.5, 2.0]
"""

import math
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from assocmem.config.errors import ConfigError
from assocmem.sweep.kinds.base import (
    Outcome,
    RunKind,
    as_float,
    base_row,
    config_columns,
    config_fields,
)

PARITIES = ("matrix", "embeddings")  # as assocmem.studies.hierarchy.memory.PARITIES (a test checks)
INFINITE = "inf"  # a spec's spelling of n_samples = None (T = ∞)
_VECTORS = ("dims", "schemes", "trial")  # not config columns of a result row


def _build(cls: type, values: Mapping[str, Any], tuples: Sequence[str]) -> Any:
    """A config dataclass from plain TOML values: unknown keys refused, lists as tuples."""
    clean = config_fields(cls, values, tuples)
    try:
        return cls(**clean)
    except TypeError as err:  # a wrong type the validators did not name
        raise ConfigError("config", str(err)) from None


def build_hierarchy(values: Mapping[str, Any]) -> Any:
    """A :class:`~assocmem.studies.hierarchy.memory.HierarchyConfig` (``n_samples = "inf"``:
    T = ∞)."""
    from assocmem.studies.hierarchy.memory import HierarchyConfig

    clean = dict(values)
    if clean.get("n_samples") == INFINITE:
        clean["n_samples"] = None
    return _build(HierarchyConfig, clean, ("dims", "schemes"))


def build_bottleneck(values: Mapping[str, Any]) -> Any:
    """A :class:`~assocmem.studies.hierarchy.train.BottleneckConfig`."""
    from assocmem.studies.hierarchy.train import BottleneckConfig

    return _build(BottleneckConfig, values, ())


class HierarchyKind(RunKind):
    """Closed-form hierarchies, one run per trial; a batch is one ``run_hierarchy`` call over
    trials of one point."""

    name = "hierarchy"
    operational: ClassVar[tuple[str, ...]] = ("device", "memory_gb")
    has_trials = True
    default_runs_per_batch = 10

    def build(self, values: Mapping[str, Any]) -> Any:
        return build_hierarchy(values)

    def execute(self, configs: Sequence[Any], trials: Sequence[int | None]) -> list[Outcome]:
        """Metrics per trial: ``hidden_dims`` (h per parity) and every array of
        :data:`assocmem.studies.hierarchy.run.METRICS` as nested lists."""
        from assocmem.studies.hierarchy.run import run_hierarchy

        indices = [t for t in trials if t is not None]
        assert len(indices) == len(configs)  # runs of one point (one group key)
        result = run_hierarchy(configs[0], indices)
        hidden = {parity: list(dims) for parity, dims in result.hidden_dims.items()}
        out: list[Outcome] = []
        for row in range(len(indices)):
            arrays = {name: values[row] for name, values in result.metrics.items()}
            finite = all(math.isfinite(v) for a in arrays.values() for v in a.flat)
            metrics = {"hidden_dims": hidden, **{k: a.tolist() for k, a in arrays.items()}}
            out.append((metrics, "ok" if finite else "diverged"))
        return out

    def rows(self, row: Mapping[str, Any]) -> list[dict[str, Any]]:
        """One row per (parity, scheme, d): ``parity``, ``scheme``, ``dim``, ``hidden`` (h) and
        the errors ``direct``, ``first``, ``second``, ``second_soft``, ``hard``, ``soft``,
        ``both_wrong``, ``lucky``; ``n_samples`` is ``inf`` for T = ∞."""
        config = row["config"]
        common = {**base_row(row), **config_columns(row, _VECTORS), "trial": config["trial"]}
        if common.get("n_samples") is None:
            common["n_samples"] = math.inf
        m = row["metrics"]
        if m is None:
            return [{**common, "parity": None, "scheme": None, "dim": None, "hard": math.nan}]
        out = []
        for p, parity in enumerate(PARITIES):
            for s, scheme in enumerate(config["schemes"]):
                for i, dim in enumerate(config["dims"]):
                    values = {
                        name: as_float(m[name][p][s][i])
                        for name in ("first", "hard", "soft", "both_wrong", "lucky")
                    }
                    values["direct"] = as_float(m["direct"][s][i])
                    values["second"] = as_float(m["second"][p][i])
                    values["second_soft"] = as_float(m["second_soft"][p][i])
                    where = {"parity": parity, "scheme": scheme, "dim": dim}
                    hidden = m["hidden_dims"][parity][i]
                    out.append({**common, **where, "hidden": hidden, **values})
        return out

    def work(self, config: Any) -> float:
        r"""About :math:`N^2\cdot h_{\max} + \sum_d N\cdot d\cdot S\cdot M` multiply-adds per
        trial."""
        n, s = config.n_inputs, len(config.schemes)
        h_max = max(max(config.hidden_dims(p)) for p in PARITIES)
        return float(n * n * h_max + sum(n * d * s * config.n_outputs for d in config.dims))


class BottleneckKind(RunKind):
    """Trained hierarchies and direct memories, one run per trial (seed index)."""

    name = "hierarchy_train"
    has_trials = True
    default_runs_per_batch = 4

    def build(self, values: Mapping[str, Any]) -> Any:
        return build_bottleneck(values)

    def execute(self, configs: Sequence[Any], trials: Sequence[int | None]) -> list[Outcome]:
        """Metrics per trial: :data:`assocmem.studies.hierarchy.train.METRICS` (on CUDA the
        batch's trials train together)."""
        from assocmem.studies.hierarchy.train import train_bottleneck

        indices = [t for t in trials if t is not None]
        out: list[Outcome] = []
        for metrics in train_bottleneck(configs[0], indices):
            finite = all(math.isfinite(v) for v in metrics.values())
            out.append((metrics, "ok" if finite else "diverged"))
        return out

    def rows(self, row: Mapping[str, Any]) -> list[dict[str, Any]]:
        """One row: the config fields, ``trial``, ``hidden`` (h) and the metrics."""
        from assocmem.studies.hierarchy.train import METRICS

        config = row["config"]
        metrics = row["metrics"] or {}
        hidden = math.isqrt(config["dim"] * config["dim"] // 2)
        values = {name: as_float(metrics.get(name)) for name in METRICS}
        return [{**base_row(row), **config_columns(row), "hidden": hidden, **values}]

    def work(self, config: Any) -> float:
        """``n_steps`` steps of a batch through both models."""
        h, d, b = config.hidden, config.dim, config.batch_size
        per_step = b * (2 * h * h + 2 * config.n_concepts * h + d * d)
        return float(config.n_steps * 3 * per_step)

"""In-context runs: one (point, trial) reads R MQAR contexts with one memory rule at every
(d, T) of its grid and searches its capacity T*(d) (the science is
:mod:`assocmem.studies.incontext.runs`). A batch is the trials of one point.

A spec::

    kind = "incontext"
    trials = 5
    [base]
    n_keys = 1000
    n_values = 8
    dims = [8, 16, 32, 64]
    n_pairs = [4, 16, 64, 256, 1024]
    [axes]
    alpha = [0.0, 1.0, 1.5, 2.0]
    [zip]                      # rule and its parameters side by side (a parameter that a
                               # rule does not take is left out of its run)
    rule = ["hebbian", "delta", "softmax", "hard"]
    passes = [1, 4, 1, 1]
"""

import math
from collections.abc import Mapping, Sequence
from typing import Any

from assocmem.sweep.kinds.base import (
    Outcome,
    RunKind,
    as_float,
    base_row,
    config_columns,
    config_fields,
    ints_as_floats,
)

_TUPLES = ("dims", "n_pairs")
_FLOATS = ("alpha", "beta", "gate", "tau")


def build_incontext(values: Mapping[str, Any]) -> Any:
    """An :class:`~assocmem.studies.incontext.runs.InContextConfig` from plain TOML values.

    Raises
    ------
    ConfigError
        Naming the first field at fault.
    """
    from assocmem.studies.incontext.runs import InContextConfig, check_incontext, taken_fields

    clean = config_fields(InContextConfig, values, _TUPLES, "a list of integers")
    ints_as_floats(clean, _FLOATS)
    for key in set(taken_fields(None)) - set(taken_fields(clean.get("rule", "hebbian"))):
        clean.pop(key, None)  # a parameter the rule does not take: not in its identity
    return check_incontext(InContextConfig(**clean))


class InContextKind(RunKind):
    """One in-context run per (point, trial)."""

    name = "incontext"
    has_trials = True
    default_runs_per_batch = 10

    def build(self, values: Mapping[str, Any]) -> Any:
        return build_incontext(values)

    def device(self, config: Any) -> str:
        return "cpu"  # float64 reads of small states

    def execute(self, configs: Sequence[Any], trials: Sequence[int | None]) -> list[Outcome]:
        """Each trial of the batch: :func:`run_incontext`, one metrics document each."""
        from assocmem.studies.incontext.runs import run_incontext

        out: list[Outcome] = []
        for cfg, trial in zip(configs, trials, strict=True):
            assert trial is not None  # the kind has trials
            metrics = run_incontext(cfg, trial)
            finite = all(math.isfinite(v) for row in metrics["error"] for v in row)
            out.append((metrics, "ok" if finite else "diverged"))
        return out

    def rows(self, row: Mapping[str, Any]) -> list[dict[str, Any]]:
        """One row per (d, T): ``dim``, ``n_pairs``, ``error`` and ``error_sd`` (over the run's
        contexts), ``predicted`` and ``predicted_sd`` (Hebbian theory; NaN otherwise) and the
        run's ``capacity`` at that d; plus one row per d with ``n_pairs`` NaN for a run without
        a grid. A failed run gives one row of NaN."""
        common = {**base_row(row), **config_columns(row, _TUPLES), "trial": row["config"]["trial"]}
        metrics = row["metrics"]
        if metrics is None:
            return [{**common, "dim": None, "n_pairs": None, "error": math.nan}]
        out = []
        for i, dim in enumerate(metrics["dims"]):
            at_d = {**common, "dim": dim, "capacity": as_float(metrics["capacity"][i])}
            if not metrics["n_pairs"]:
                out.append({**at_d, "n_pairs": math.nan, "error": math.nan})
            for j, t in enumerate(metrics["n_pairs"]):
                values = {
                    name: as_float(metrics[name][i][j]) if metrics[name] is not None else math.nan
                    for name in ("error", "error_sd", "predicted", "predicted_sd")
                }
                out.append({**at_d, "n_pairs": t, **values})
        return out

    def work(self, config: Any) -> float:
        from assocmem.studies.incontext.runs import work

        return work(config)

"""Editing runs: one (point, trial) edits one memory at one d by every method (the science is
:mod:`assocmem.studies.editing.runs`); a batch is the trials of one point (trained memories
are trained together; each trial's numbers come from its own streams).

A spec::

    kind = "editing"
    trials = 20
    [base]
    n_inputs = 1000
    checkpoints = [1, 2, 4, 8, 16, 32, 64]
    [axes]
    memory = ["threshold:P=d/8", "population", "trained"]   # a scheme q of W_q, or trained
    alpha = [2.0, 1.5]
    dim = [16, 64, 256]
"""

import math
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from assocmem.sweep.kinds.base import (
    Outcome,
    RunKind,
    as_float,
    base_row,
    config_columns,
    config_fields,
    ints_as_floats,
)

_TUPLES = ("checkpoints",)


def build_editing(values: Mapping[str, Any]) -> Any:
    """An :class:`~assocmem.studies.editing.runs.EditingConfig` from plain TOML values.

    Raises
    ------
    ConfigError
        Naming the first field at fault.
    """
    from assocmem.studies.editing.runs import TRAINED, TRAINED_ONLY, EditingConfig, check_editing

    clean = config_fields(EditingConfig, values, _TUPLES, "a list of integers")
    ints_as_floats(clean, ("alpha", "margin", "covariance_reg", "rise", "lr", "memory_gb"))
    if clean.get("memory", EditingConfig.memory) != TRAINED:  # no optimiser in a run's identity
        for key in TRAINED_ONLY:
            clean.pop(key, None)
    return check_editing(EditingConfig(**clean))


def _bins(point: Mapping[str, Any], bands: Sequence[str]) -> dict[str, float]:
    out: dict[str, float] = {}
    for name in ("correct_before", "breaks", "fixes"):
        for band, value in zip(bands, point[name], strict=True):
            out[f"{name}_{band}"] = float(value)
    return out


class EditingKind(RunKind):
    """One editing run per (point, trial)."""

    name = "editing"
    operational: ClassVar[tuple[str, ...]] = ("device", "memory_gb")
    has_trials = True
    default_runs_per_batch = 100

    def build(self, values: Mapping[str, Any]) -> Any:
        return build_editing(values)

    def device(self, config: Any) -> str:
        return "cpu"  # edits run in float64 numpy, trained memories train on the CPU

    def execute(self, configs: Sequence[Any], trials: Sequence[int | None]) -> list[Outcome]:
        """The batch's trials of one point: :func:`run_editing`, one metrics document each."""
        from assocmem.studies.editing.runs import run_editing

        indices = [t for t in trials if t is not None]
        assert len(indices) == len(configs)  # runs of one point (one group key)
        return [(metrics, "ok") for metrics in run_editing(configs[0], indices)]

    def rows(self, row: Mapping[str, Any]) -> list[dict[str, Any]]:
        """One row per (method, operation, band, checkpoint k): the config, ``trial``,
        ``base_error``, ``noise``, ``method``, ``operation``, ``band``, ``capacity`` (NaN: not
        reached or not searched), ``k``, ``success``, ``balanced_success``, ``error_before``,
        ``error_after``,
        ``damage``, ``mean_lambda`` and per decade of rank ``correct_before_*``, ``breaks_*``,
        ``fixes_*``; a failed run gives one row of NaN."""
        common = {**base_row(row), **config_columns(row, _TUPLES + ("trial",))}
        common["trial"] = row["config"]["trial"]
        metrics = row["metrics"]
        if metrics is None:
            return [{**common, "k": None, "error_after": math.nan}]
        bands = [s["band"] for s in metrics["sequences"] if s["band"] != "all"]
        bands = list(dict.fromkeys(bands))
        out = []
        run = {**common, "base_error": metrics["base_error"], "noise": metrics["noise"]}
        for seq in metrics["sequences"]:
            label = {key: seq[key] for key in ("method", "operation", "band")}
            capacity = as_float(seq["capacity"])
            for point in seq["points"]:
                keys = ("k", "success", "balanced_success", "mean_lambda")
                values = {key: as_float(point.get(key)) for key in keys}
                before, after = point["error_before"], point["error_after"]
                out.append(
                    {**run, **label, "capacity": capacity, "searched": seq["searched"], **values,
                     "error_before": before, "error_after": after, "damage": after - before,
                     **_bins(point, bands)}
                )  # fmt: skip
        return out

    def curves(self, row: Mapping[str, Any]) -> list[dict[str, Any]]:
        """The searched sequences' error curves: one row per (method, operation, k) with
        ``error_before`` and ``error_after`` of the other tokens."""
        metrics = row["metrics"]
        if metrics is None:
            return []
        common = {**base_row(row), **config_columns(row, _TUPLES + ("trial",))}
        common["trial"] = row["config"]["trial"]
        return [
            {**common, "method": seq["method"], "operation": seq["operation"], "k": int(k),
             "error_before": before, "error_after": after}
            for seq in metrics["sequences"]
            for k, before, after in seq["curve"]
        ]  # fmt: skip

    def work(self, config: Any) -> float:
        """About N·M per edit evaluation over the searched edits, the key columns
        (``N d`` per edited token) and the key covariance (:math:`N d^2 + d^3`)."""
        n, d, m = config.n_inputs, config.dim, config.n_outputs
        edits = config.searched_edits
        inverse = n * d * d + d**3 if d <= n else n * n * d + n**3
        return float(6 * edits * n * m * 4 + 2 * edits * n * d + inverse)

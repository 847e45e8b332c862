"""Memory estimates of whole library calls, checked against a budget before work starts.

A call that allocates in proportion to its inputs (the trials of a closed-form experiment, the
runs of a training grid) is refused up front, in one line
(:func:`assocmem.config.memory.check_budget`), when its estimate exceeds the budget; the
estimates are deliberately rough upper bounds of what is held at once. (A capacity search's
estimate is the facts study's: :func:`assocmem.studies.facts.frontier_search.capacity_bytes`.)
"""

from collections.abc import Mapping, Sequence
from typing import Any

from assocmem.closed_form.config import ClosedFormConfig, working_set_bytes
from assocmem.config.checks import is_int
from assocmem.config.memory import DEFAULT_MEMORY_GB, check_budget

__all__ = [
    "RECORD_BYTES",
    "bootstrap_bytes",
    "check_bootstrap_memory",
    "check_claims_memory",
    "check_closed_form_memory",
    "check_train_grid_memory",
    "claims_bytes",
    "closed_form_bytes",
    "train_grid_bytes",
]

RECORD_BYTES = 4096  # a training run's config and result objects (and their JSON) held at once
CELL_BYTES = 128  # one (trial, scheme, d, T) cell: metric arrays, record lists, JSON text


def closed_form_bytes(cfg: ClosedFormConfig) -> int:
    """One trial's working set under the sampler that will run plus every trial's metrics,
    records and output (:func:`_cells_bytes`). The next trial is drawn while one computes only
    when the budget also holds its draws (``kernel.draw_mode``); else in line."""
    return working_set_bytes(cfg) + _cells_bytes(cfg)


def _cells_bytes(cfg: ClosedFormConfig) -> int:
    """Every trial's metrics, records and output: ``trials × columns × dims`` cells."""
    columns = sum(len(cfg.n_samples) if s.uses_data else 1 for s in cfg.parsed_schemes)
    return CELL_BYTES * cfg.trials * columns * len(cfg.dims)


def check_closed_form_memory(cfg: ClosedFormConfig, memory_gb: float | None = None) -> None:
    """Refuse a closed-form experiment over ``memory_gb`` (default: the config's)."""
    budget = cfg.memory_gb if memory_gb is None else memory_gb
    what = f"{cfg.trials} trials of N = {cfg.n_inputs}, d_max = {max(cfg.dims)}"
    check_budget(closed_form_bytes(cfg), budget, what, "lower trials, n_inputs or dims")


def claims_bytes(configs: Sequence[ClosedFormConfig]) -> int:
    """Closed-form runs made one after the other whose results are all kept (the record frames
    of :class:`~assocmem.experiments.claims.ClaimRunner`, until every claim is judged): the
    largest trial working set plus every run's cells (:func:`closed_form_bytes`)."""
    if not configs:
        return 0
    return max(working_set_bytes(cfg) for cfg in configs) + sum(map(_cells_bytes, configs))


def check_claims_memory(
    configs: Sequence[ClosedFormConfig], memory_gb: float = DEFAULT_MEMORY_GB
) -> None:
    """Refuse the closed-form runs of the claims (:func:`claims_bytes`) over ``memory_gb``."""
    trials = max((cfg.trials for cfg in configs), default=0)
    what = f"judging the claims at {trials} trials ({len(configs)} closed-form runs)"
    check_budget(claims_bytes(configs), memory_gb, what, "lower trials")


def bootstrap_bytes(n_trials: int, n_points: int, n_boot: int) -> int:
    """Peak bytes of one trial-bootstrap fit (:func:`assocmem.analysis.fit.bootstrap_slopes`):
    the (n_boot, n_trials) resampling indices and the (n_boot, n_trials, n_points) resampled
    errors (8 bytes each), plus the (n_boot, n_points) means and their logs."""
    return 8 * n_boot * (n_trials * (n_points + 1) + 2 * n_points)


def check_bootstrap_memory(
    records: Sequence[Mapping[str, Any]], n_boot: int, memory_gb: float = DEFAULT_MEMORY_GB
) -> None:
    """Refuse fitting closed-form ``records`` (each with ``dim``, ``n_samples`` and per-trial
    ``errors``) with ``n_boot`` resamples when its largest curve's bootstrap
    (:func:`bootstrap_bytes`) exceeds ``memory_gb``; the curves are fitted one at a time."""
    n_trials = max((len(r["errors"]) for r in records if isinstance(r["errors"], list)), default=0)
    n_points = max(len({str(r[key]) for r in records}) for key in ("dim", "n_samples"))
    need = bootstrap_bytes(n_trials, n_points, n_boot)
    what = f"a bootstrap of {n_boot} resamples of {n_trials} trials × {n_points} points"
    check_budget(need, memory_gb, what, "lower n_boot")


def _seed_count(spec: Mapping[str, Any]) -> tuple[int, dict[str, Any]]:
    """The number of seeds of a grid spec, and the spec with a single seed."""
    one = dict(spec)
    for key in ("seeds", "seed"):
        value = spec.get(key)
        if is_int(value) and key == "seeds":
            one[key] = 1 if value >= 1 else value
            return max(value, 1), one
        if isinstance(value, list | tuple) and value:
            one[key] = list(value)[:1]
            return len(value), one
    return 1, one


def train_grid_bytes(spec: Mapping[str, Any]) -> tuple[int, int]:
    """``(runs, bytes)`` of a training grid (:func:`assocmem.training.grid.expand_grid`),
    estimated from its one-seed grid: every run's record, plus the largest tensor program
    (runs are trained in chunks of at most :data:`~assocmem.training.planning.MEMORY_BUDGET`
    bytes, or one run when a run alone is larger)."""
    from assocmem.training.grid import expand_grid
    from assocmem.training.planning import MEMORY_BUDGET, state_bytes

    seeds, one_seed = _seed_count(spec)
    configs = expand_grid(one_seed)
    runs = len(configs) * seeds
    largest = max(state_bytes(cfg) for cfg in configs)
    program = max(largest, min(MEMORY_BUDGET, largest * seeds))
    return runs, RECORD_BYTES * runs + program


def check_train_grid_memory(spec: Mapping[str, Any], memory_gb: float = DEFAULT_MEMORY_GB) -> None:
    """Refuse a training grid whose estimate (:func:`train_grid_bytes`) exceeds ``memory_gb``."""
    runs, need = train_grid_bytes(spec)
    check_budget(need, memory_gb, f"this grid of {runs} runs", "lower seeds, axes or N")

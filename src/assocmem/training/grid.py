"""Small grids of training runs from a mapping (TOML or CLI flags), and seed-averaged summaries.

Grid axes (each a value or a list; the grid is their product): ``models``, ``optimizers``,
``layer_norm``, ``dims``, ``n_samples``, ``batch_sizes``, ``lrs``, ``seeds`` (an integer k means
seeds 0..k-1), ``label_noises`` (ε), and ``distributions`` (token laws spelled ``zipf``,
``zipf:ALPHA`` or ``words:LANG``, as in ``assocmem closed-form``). A singular field name (``lr``,
``dim``, ``label_noise``, ``distribution``…) sets an axis too. Every other key is a scalar field
of :class:`TrainConfig` in its flat spelling (:meth:`TrainConfig.from_flat`: ``momentum``,
``betas``… beside ``optimizer``).
"""

import itertools
import statistics
from collections.abc import Mapping, Sequence
from typing import Any

from assocmem.config.checks import is_int
from assocmem.config.errors import ConfigError
from assocmem.laws.words import parse_distribution
from assocmem.ops.stats import mean_se
from assocmem.training.config import TrainConfig
from assocmem.training.records import RunResult

AXES = {
    "models": "model",
    "optimizers": "optimizer",
    "layer_norm": "layer_norm",
    "dims": "dim",
    "n_samples": "n_samples",
    "batch_sizes": "batch_size",
    "lrs": "lr",
    "seeds": "seed",
    "label_noises": "label_noise",
}
LAW_KEYS = ("distributions", "distribution")  # token laws: an axis of (alpha, words) pairs
TUPLE_FIELDS = ("betas", "decay_steps", "snapshot_steps")


def _as_list(key: str, value: Any) -> list[Any]:
    if key == "seeds" and is_int(value):
        if value < 1:
            raise ConfigError("seeds", f"a count of seeds must be ≥ 1, got {value}")
        return list(range(value))
    values = list(value) if isinstance(value, list | tuple) else [value]
    if not values:
        raise ConfigError(key, "must hold at least one value")
    if len({v if isinstance(v, int | float | str) else repr(v) for v in values}) != len(values):
        # a repeated value would train the same runs twice
        raise ConfigError(key, f"each value may be given once, got {values}")
    return values


def expand_grid(spec: Mapping[str, Any]) -> list[TrainConfig]:
    """Every config of the grid ``spec`` (validated; unknown keys are a :class:`ConfigError`)."""
    scalar_names = set(TrainConfig.flat_keys())
    base: dict[str, Any] = {}
    axes: dict[str, list[Any]] = {}
    laws: list[dict[str, Any]] = [{}]
    for key, value in spec.items():
        if key in LAW_KEYS:
            laws = [parse_distribution(text) for text in _as_list(key, value)]
        elif key in AXES:
            axes[AXES[key]] = _as_list(key, value)
        elif key in AXES.values():  # the singular field name: a one-value axis
            axes[key] = _as_list(key, value)
        elif key in scalar_names:
            base[key] = tuple(value) if key in TUPLE_FIELDS else value
        else:
            allowed = ", ".join(sorted([*AXES, *LAW_KEYS, *scalar_names]))
            raise ConfigError(key, f"unknown setting; allowed: {allowed}")
    names = list(axes)
    configs = []
    for law, *combo in itertools.product(laws, *(axes[name] for name in names)):
        try:
            values = {**base, **law, **dict(zip(names, combo, strict=True))}
            configs.append(TrainConfig.from_flat(values))
        except TypeError as err:
            raise ConfigError("config", str(err)) from None
    return configs


SUMMARY_HEADERS = [
    "model", "ln", "optimizer", "d", "T", "B", "lr", "runs", "diverged",
    "error", "sem", "head", "tail", "cross_entropy", "p_correct",
]  # fmt: skip
LAW_HEADERS = ["law", "ε"]  # shown first when a table mixes laws or has label noise
NOISE_HEADERS = ["noisy", "bayes", "excess"]  # error vs noisy labels, ε, and their difference


def summary_headers(rows: Sequence[dict[str, Any]]) -> list[str]:
    """The table's columns: law and noise columns only when the rows need them."""
    mixed = len({row["law"] for row in rows}) > 1 or any(row["law"] != "zipf:2" for row in rows)
    noisy = any(row["ε"] for row in rows)
    return [
        *(LAW_HEADERS if mixed or noisy else []),
        *SUMMARY_HEADERS,
        *(NOISE_HEADERS if noisy else []),
    ]


def summarize(results: Sequence[RunResult]) -> list[dict[str, Any]]:
    """Seed-averaged rows: one per config up to the seed, with mean error and its s.e.m."""
    groups: dict[tuple[Any, ...], list[RunResult]] = {}
    for result in results:
        key = (*result.config.batch_key(), result.config.lr)
        groups.setdefault(key, []).append(result)
    rows = []
    for runs in groups.values():
        cfg = runs[0].config
        errors = [r.error for r in runs]
        sem = mean_se(errors)[1]  # NaN for one seed
        rows.append(
            {
                "model": cfg.model,
                "ln": cfg.layer_norm,
                "optimizer": cfg.optimizer.name,
                "d": cfg.dim,
                "T": cfg.n_samples if not cfg.full_batch else None,
                "B": cfg.batch_size if not cfg.full_batch else None,
                "lr": cfg.lr,
                "runs": len(runs),
                "diverged": sum(r.status != "ok" for r in runs),
                "error": statistics.fmean(errors),
                "sem": sem,
                "head": statistics.fmean(r.head_error for r in runs),
                "tail": statistics.fmean(r.tail_error for r in runs),
                "cross_entropy": statistics.fmean(r.cross_entropy for r in runs),
                "p_correct": statistics.fmean(r.p_correct for r in runs),
                "law": cfg.law,
                "ε": cfg.label_noise,
                "noisy": statistics.fmean(r.noisy_error for r in runs),
                "bayes": cfg.label_noise,
                "excess": statistics.fmean(r.excess_error for r in runs),
            }
        )
    return rows


SETTING_COLUMNS = ("law", "ε", "model", "ln", "optimizer", "d", "T", "B")

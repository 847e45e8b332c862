"""Planning: a spec's runs, each with a stable content hash, grouped into batches.

A *run* is the unit the store records: for ``closed_form`` one (point config, trial index) — a
trial's numbers depend only on its config, seed and index (ARCHITECTURE.md idea 3) — holding
the errors of every (scheme, d, T) of that trial; for ``train`` one training run.

A *batch* is the unit executed and committed at once: runs that share one tensor program (one
``run_closed_form`` call over a chunk of trials of one point; one ``train_group`` call over runs
with equal :meth:`TrainConfig.batch_key`). Batches are formed from the whole spec, before any
filtering, so they, and the shard that owns each one, do not change when a sweep resumes.
"""

import dataclasses
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from assocmem.closed_form.config import ClosedFormConfig
from assocmem.config.errors import ConfigError
from assocmem.sweep.spec import Config, SweepSpec
from assocmem.training.config import TrainConfig
from assocmem.training.planning import group_runs, work_estimate

SCHEMA = 1  # part of every run's identity: bump if the meaning of a record changes
DEFAULT_TRIALS_PER_BATCH = 10
DEFAULT_TRAIN_RUNS_PER_BATCH = 256
# Fields that change how a run is computed, not what it computes: left out of its hash.
OPERATIONAL = {"closed_form": ("trials", "device", "memory_gb"), "train": ("device",)}
# Fields added after a kind's records were first stored: left out of the hash at their default,
# so runs stored before they existed keep their identity (and a resumed sweep skips them).
ADDED_FIELDS: dict[str, dict[str, Any]] = {"train": {"words": None, "label_noise": 0.0}}


def _normalise(value: Any) -> Any:
    """JSON-ready, with integral floats as ints so ``alpha = 2`` and ``2.0`` hash alike."""
    kind = type(value)
    if kind is float:
        return int(value) if value.is_integer() else value
    if kind is dict:
        return {str(k): _normalise(v) for k, v in value.items()}
    if kind is list or kind is tuple:
        return [_normalise(v) for v in value]
    if value is None or kind is bool or kind is int or kind is str:
        return value
    if isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return _normalise(float(value))
    raise TypeError(f"cannot hash a {kind.__name__}")


def canonical_json(value: Any) -> str:
    return json.dumps(
        _normalise(value), sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False
    )


def content_hash(identity: dict[str, Any]) -> str:
    return hashlib.sha256(canonical_json(identity).encode()).hexdigest()


@dataclass(frozen=True)
class Run:
    """One record of the store: a validated config, and the trial index for closed_form."""

    kind: str
    config: Config
    trial: int | None
    key: str  # content hash of :meth:`identity`

    @staticmethod
    def make(kind: str, config: Config, trial: int | None = None) -> "Run":
        identity = run_identity(kind, config, trial)
        return Run(kind=kind, config=config, trial=trial, key=content_hash(identity))

    def config_record(self) -> dict[str, Any]:
        """The config as stored (JSON-ready), with the trial for closed_form runs."""
        record = config_values(self.config)
        if self.kind == "closed_form":
            record.pop("trials")
            record["trial"] = self.trial
        return record


_FIELD_NAMES: dict[str, tuple[str, ...]] = {}


def _field_names(cls: type) -> tuple[str, ...]:
    if cls.__qualname__ not in _FIELD_NAMES:
        names = tuple(f.name for f in dataclasses.fields(cls) if f.name != "extra")
        _FIELD_NAMES[cls.__qualname__] = names
    return _FIELD_NAMES[cls.__qualname__]


def config_values(config: Config) -> dict[str, Any]:
    """The config's fields (``asdict`` without its deep copies; tuples stay tuples); a train
    config's in its flat spelling (the optimiser's name and hyper-parameters as fields)."""
    if isinstance(config, TrainConfig):
        return config.flat_values()
    return {name: getattr(config, name) for name in _field_names(type(config))}


def run_identity(kind: str, config: Config, trial: int | None) -> dict[str, Any]:
    values = config_values(config)
    for name in OPERATIONAL[kind]:
        values.pop(name, None)
    for name, default in ADDED_FIELDS.get(kind, {}).items():
        if name in values and values[name] == default:
            values.pop(name)
    identity: dict[str, Any] = {"schema": SCHEMA, "kind": kind, "config": values}
    if trial is not None:
        identity["trial"] = trial
    return identity


@dataclass(frozen=True)
class Batch:
    """Runs executed together; ``index`` is its place in the full plan (for sharding)."""

    index: int
    kind: str
    runs: tuple[Run, ...]


@dataclass(frozen=True)
class Plan:
    spec: SweepSpec
    runs: list[Run]
    batches: list[Batch]


def expand_runs(spec: SweepSpec) -> list[Run]:
    """Every run of ``spec``, in a stable order (axes, zip, seeds, then trials)."""
    runs = []
    for point in spec.points():
        if spec.kind == "closed_form":
            runs += [Run.make(spec.kind, point, trial) for trial in range(spec.trials)]
        else:
            runs.append(Run.make(spec.kind, point))
    return runs


def make_batches(runs: Sequence[Run], runs_per_batch: int | None = None) -> list[Batch]:
    """Runs grouped into batches: train runs by :func:`group_runs` (batch key, memory budget),
    closed-form trials by point."""
    configs = [run.config for run in runs if isinstance(run.config, TrainConfig)]
    if configs and len(configs) == len(runs):
        limit = runs_per_batch or DEFAULT_TRAIN_RUNS_PER_BATCH
        chunks = group_runs(configs, max_runs=limit)
    else:
        chunks = _point_chunks(runs, runs_per_batch or DEFAULT_TRIALS_PER_BATCH)
    return [
        Batch(index=i, kind=runs[chunk[0]].kind, runs=tuple(runs[j] for j in chunk))
        for i, chunk in enumerate(chunks)
    ]


def _point_chunks(runs: Sequence[Run], size: int) -> list[list[int]]:
    """Indices of closed-form runs grouped by point, cut into chunks of ``size`` trials."""
    groups: dict[str, list[int]] = {}
    for index, run in enumerate(runs):
        groups.setdefault(canonical_json(config_values(run.config)), []).append(index)
    return [g[i : i + size] for g in groups.values() for i in range(0, len(g), size)]


def make_plan(spec: SweepSpec) -> Plan:
    runs = expand_runs(spec)
    if len({run.key for run in runs}) != len(runs):
        raise ConfigError(
            plan_source(spec), "two runs have the same config (a value repeated in an axis?)"
        )
    return Plan(spec=spec, runs=runs, batches=make_batches(runs, spec.runs_per_batch))


def plan_source(spec: SweepSpec) -> str:
    return spec.source or spec.name


def parse_shard(text: str) -> tuple[int, int]:
    """``K/N`` (1 ≤ K ≤ N) → (K, N)."""
    try:
        k_text, n_text = text.split("/")
        k, n = int(k_text), int(n_text)
    except ValueError:
        raise ConfigError("shard", f"must be K/N with integers 1 ≤ K ≤ N, got {text!r}") from None
    if not 1 <= k <= n:
        raise ConfigError("shard", f"must be K/N with integers 1 ≤ K ≤ N, got {text!r}")
    return k, n


def shard_batches(batches: Sequence[Batch], shard: tuple[int, int] | None) -> list[Batch]:
    """The batches of shard K of N: batch i belongs to shard ``i mod N + 1``."""
    if shard is None:
        return list(batches)
    k, n = shard
    return [b for b in batches if b.index % n == k - 1]


def run_work(run: Run) -> float:
    """A rough count of multiply-adds for one run (for the dry-run's estimate only)."""
    cfg = run.config
    if isinstance(cfg, ClosedFormConfig):
        columns = sum(len(cfg.n_samples) if s.uses_data else 1 for s in cfg.parsed_schemes)
        n, m, d = cfg.n_inputs, cfg.n_outputs, max(cfg.dims)
        return float(n * d * (m + 2) + n * m * columns * len(cfg.dims) * 4)
    return work_estimate(cfg)


def summary(plan: Plan, done: set[str], shard: tuple[int, int] | None = None) -> dict[str, Any]:
    """What ``--dry-run`` prints: runs, batches, how many are already done, the work left."""
    mine = shard_batches(plan.batches, shard)
    runs = [run for batch in mine for run in batch.runs]
    pending = [run for run in runs if run.key not in done]
    pending_batches = sum(any(r.key not in done for r in b.runs) for b in mine)
    work = sum(run_work(run) for run in pending)
    return {
        "name": plan.spec.name,
        "kind": plan.spec.kind,
        "points": plan.spec.n_points,
        "runs": len(runs),
        "batches": len(mine),
        "done": len(runs) - len(pending),
        "pending_runs": len(pending),
        "pending_batches": pending_batches,
        "estimated_gflop": round(2 * work / 1e9, 3),
        "shard": None if shard is None else f"{shard[0]}/{shard[1]}",
        "largest_batch": max((len(b.runs) for b in mine), default=0),
    }

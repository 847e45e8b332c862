"""Planning: a spec's runs, each with a stable content hash, grouped into batches.

A *run* is the unit the store records: one point config and, for kinds with trials, one trial
index (for ``closed_form``: the errors of every (scheme, d, T) of that trial, whose numbers
depend only on its config, seed and index; for ``train``: one training run).

A *batch* is the unit executed and committed at once: runs that share one tensor program (one
``run_closed_form`` call over a chunk of trials of one point; one ``train_group`` call over runs
that differ only in seed and lr). Each run kind says how (:mod:`assocmem.sweep.kinds`). Batches
are formed from the whole spec, before any filtering, so they, and the shard that owns each
one, do not change when a sweep resumes.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from assocmem.config.errors import ConfigError
from assocmem.sweep.identity import content_hash
from assocmem.sweep.kinds import get_kind
from assocmem.sweep.spec import Config, SweepSpec


@dataclass(frozen=True)
class Run:
    """One record of the store: a validated config, and its trial index for kinds with trials."""

    kind: str  # a registered run kind (:mod:`assocmem.sweep.kinds`)
    config: Config
    trial: int | None
    key: str  # content hash of the kind's :meth:`~assocmem.sweep.kinds.RunKind.identity`

    @staticmethod
    def make(kind: str, config: Config, trial: int | None = None) -> "Run":
        identity = get_kind(kind).identity(config, trial)
        return Run(kind=kind, config=config, trial=trial, key=content_hash(identity))

    def config_record(self) -> dict[str, Any]:
        """The config as stored (JSON-ready), with the trial for kinds with trials."""
        return get_kind(self.kind).record(self.config, self.trial)


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
    trials = spec.run_kind.trials(spec.trials)
    return [Run.make(spec.kind, point, trial) for point in spec.points() for trial in trials]


def make_batches(runs: Sequence[Run], runs_per_batch: int | None = None) -> list[Batch]:
    """Runs grouped by their kind's :meth:`~assocmem.sweep.kinds.RunKind.group_key`, each
    group cut into chunks of at most its :meth:`~assocmem.sweep.kinds.RunKind.batch_limit`."""
    groups: dict[Any, list[Run]] = {}
    for run in runs:
        groups.setdefault((run.kind, get_kind(run.kind).group_key(run.config)), []).append(run)
    batches: list[Batch] = []
    for (kind, _), members in groups.items():
        size = get_kind(kind).batch_limit(members[0].config, runs_per_batch)
        for start in range(0, len(members), size):
            chunk = tuple(members[start : start + size])
            batches.append(Batch(index=len(batches), kind=kind, runs=chunk))
    return batches


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
    """:math:`K/N` (1 ≤ K ≤ N) → (K, N)."""
    try:
        k_text, n_text = text.split("/")
        k, n = int(k_text), int(n_text)
    except ValueError:
        raise ConfigError("shard", f"must be K/N with integers 1 ≤ K ≤ N, got {text!r}") from None
    if not 1 <= k <= n:
        raise ConfigError("shard", f"must be K/N with integers 1 ≤ K ≤ N, got {text!r}")
    return k, n


def shard_batches(batches: Sequence[Batch], shard: tuple[int, int] | None) -> list[Batch]:
    r"""The batches of shard K of N: batch i belongs to shard :math:`i \bmod N + 1`."""
    if shard is None:
        return list(batches)
    k, n = shard
    return [b for b in batches if b.index % n == k - 1]


def run_work(run: Run) -> float:
    """A rough count of multiply-adds for one run (for the dry-run's estimate only)."""
    return get_kind(run.kind).work(run.config)


def summary(
    plan: Plan,
    done: set[str],
    shard: tuple[int, int] | None = None,
    journals: Mapping[str, Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """What ``--dry-run`` prints: runs, batches, how many are already done, the work left, and
    the pending runs a kill interrupted (``journals``: run hash → its journal's entries,
    :func:`~assocmem.sweep.store.read_journals`), which resume from their journal's entries."""
    mine = shard_batches(plan.batches, shard)
    runs = [run for batch in mine for run in batch.runs]
    pending = [run for run in runs if run.key not in done]
    pending_batches = sum(any(r.key not in done for r in b.runs) for b in mine)
    work = sum(run_work(run) for run in pending)
    journals = journals or {}
    started = [run for run in pending if journals.get(run.key)]
    return {
        "name": plan.spec.name,
        "kind": plan.spec.kind,
        "points": plan.spec.n_points,
        "runs": len(runs),
        "batches": len(mine),
        "done": len(runs) - len(pending),
        "pending_runs": len(pending),
        "pending_batches": pending_batches,
        "in_progress": len(started),
        "journal_entries": sum(len(journals[run.key]) for run in started),
        "estimated_gflop": round(2 * work / 1e9, 3),
        "shard": None if shard is None else f"{shard[0]}/{shard[1]}",
        "largest_batch": max((len(b.runs) for b in mine), default=0),
    }

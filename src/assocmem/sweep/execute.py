"""Executing a plan: the same batch function in-process or on Dask, results committed per batch.

Only the process that runs :func:`run_sweep` writes the database: workers (local or Dask) compute
a batch and return its records, the driver commits them in one transaction. So a Dask worker
that dies mid-batch loses nothing that was committed; the scheduler re-runs its batch elsewhere.
The one exception is a journaled kind's per-run journal (:mod:`assocmem.sweep.journal`): the
process computing a batch writes its partial results into the same database as it goes, so a
long run killed half-way resumes from them.
"""

import functools
import os
import platform
import socket
import subprocess
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from assocmem import __version__
from assocmem.config.errors import ConfigError
from assocmem.progress import progress_bar
from assocmem.runtime import numerics
from assocmem.sweep.journal import execute_journaled
from assocmem.sweep.kinds import Outcome, RunKind, get_kind
from assocmem.sweep.plan import Batch, Plan, Run, make_plan, shard_batches
from assocmem.sweep.spec import SweepSpec, load_spec
from assocmem.sweep.store import RunRecord, Store

EXECUTORS = ("local", "dask")


@functools.cache
def git_revision() -> str | None:
    """The git commit of the package's checkout (``+dirty`` if modified), or None."""
    folder = Path(__file__).resolve().parent
    try:
        head = subprocess.run(
            ["git", "-C", str(folder), "rev-parse", "HEAD"],
            capture_output=True, text=True, timeout=10, check=True,
        ).stdout.strip()  # fmt: skip
        dirty = subprocess.run(
            ["git", "-C", str(folder), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True, text=True, timeout=10, check=True,
        ).stdout.strip()  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return None
    return head + ("+dirty" if dirty else "") if head else None


def provenance(device: str) -> dict[str, Any]:
    return {
        "assocmem": __version__,
        "git": git_revision(),
        "torch": torch.__version__,
        "python": platform.python_version(),
        "device": device,
        "host": socket.gethostname(),
        **numerics(device),  # CPU: cpu_pin; CUDA: deterministic, tf32
    }


def _one_line(err: BaseException) -> str:
    text = " ".join(str(err).split()) or "(no message)"
    return f"{type(err).__name__}: {text}"[:500]


def _compute(kind: RunKind, batch: Batch, db: str | Path | None) -> list[Outcome]:
    """``kind.execute`` on the batch's runs; with one journal per run if the kind keeps them."""
    configs = [run.config for run in batch.runs]
    trials = [run.trial for run in batch.runs]
    if not kind.journaled:
        return kind.execute(configs, trials)
    return execute_journaled(kind, configs, trials, [run.key for run in batch.runs], db)


def execute_batch(
    batch: Batch, sweep: str, kind: RunKind | None = None, db: str | Path | None = None
) -> list[RunRecord]:
    """Compute one batch with its run kind (``kind``, else the registry's entry for
    ``batch.kind``); an exception marks its runs ``failed`` (with the message).

    Dask workers get ``kind`` itself, so a kind registered by a module of a higher layer works
    there too (unpickling it imports that module on the worker). A journaled kind keeps its
    runs' partial results in the results database ``db`` (an absolute path on a Dask worker);
    without it, or where the worker cannot see that file, in memory for this call only."""
    kind = kind or get_kind(batch.kind)
    start = time.perf_counter()
    try:
        results = _compute(kind, batch, db)
        message = None
    except Exception as err:  # the sweep goes on; the runs are recorded as failed
        results = [(None, "failed")] * len(batch.runs)
        message = _one_line(err)
    wall = time.perf_counter() - start
    prov = provenance(kind.device(batch.runs[0].config))
    prov.update(
        wall_seconds=round(wall / len(batch.runs), 6),
        batch_wall_seconds=round(wall, 4),
        batch_runs=len(batch.runs),
    )
    return [
        RunRecord(
            key=run.key,
            kind=run.kind,
            sweep=sweep,
            config=run.config_record(),
            metrics=metrics,
            status=status,
            message=message if status == "failed" else None,
            provenance=prov,
        )
        for run, (metrics, status) in zip(batch.runs, results, strict=True)
    ]


def failed_records(batch: Batch, sweep: str, message: str) -> list[RunRecord]:
    prov = provenance(get_kind(batch.kind).device(batch.runs[0].config))
    return [
        RunRecord(run.key, run.kind, sweep, run.config_record(), None, "failed", message, prov)
        for run in batch.runs
    ]


@dataclass
class Hooks:
    """Test hooks (fault injection): called around each batch's commit."""

    after_compute: Callable[[Batch], None] | None = None
    before_commit: Callable[[Batch], None] | None = None
    after_commit: Callable[[Batch], None] | None = None


@dataclass
class SweepReport:
    """What one :func:`run_sweep` call did.

    Attributes
    ----------
    name : str
        The sweep.
    total_runs : int
        Runs in the spec (this shard's).
    skipped : int
        Runs already in the database.
    written : int
        Rows inserted (or failed rows replaced) by this call.
    statuses : dict of str to int
        Count of each status written: ``"ok"``, ``"diverged"``, ``"failed"``.
    wall_seconds : float
    """

    name: str
    total_runs: int
    skipped: int  # already in the database
    written: int  # rows inserted (or failed rows replaced) by this invocation
    statuses: dict[str, int] = field(default_factory=dict)
    wall_seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        rate = self.written / self.wall_seconds if self.wall_seconds > 0 else None
        return {**self.__dict__, "runs_per_second": rate}


def pending_batches(batches: Sequence[Batch], done: set[str]) -> list[Batch]:
    """Each batch less its recorded runs; batches with nothing left are dropped."""
    out = []
    for batch in batches:
        runs = tuple(run for run in batch.runs if run.key not in done)
        if runs:
            out.append(Batch(index=batch.index, kind=batch.kind, runs=runs))
    return out


def check_executor(
    executor: str, workers: int | None, scheduler: str | None
) -> None:  # before anything is written
    if executor not in EXECUTORS:
        raise ConfigError("executor", f"unknown executor {executor!r}; allowed: local, dask")
    if executor == "local" and (workers is not None or scheduler is not None):
        raise ConfigError("executor", "--workers and --scheduler need --executor dask")
    if workers is not None and scheduler is not None:
        raise ConfigError("workers", "give --workers (a local cluster) or --scheduler, not both")
    if workers is not None and workers < 1:
        raise ConfigError("workers", f"must be an integer ≥ 1, got {workers}")
    if executor == "dask":
        try:
            import distributed  # noqa: F401
        except ImportError:
            raise ConfigError(
                "executor", "dask needs the optional dependency: pip install 'assocmem[sweep]'"
            ) from None


def _local(
    batches: Sequence[Batch], sweep: str, db: Path
) -> Iterator[tuple[Batch, list[RunRecord]]]:
    for batch in batches:
        yield batch, execute_batch(batch, sweep, db=db)


def _dask(
    batches: Sequence[Batch],
    sweep: str,
    db: Path,
    *,
    workers: int | None,
    scheduler: str | None,
    client: Any,
) -> Iterator[tuple[Batch, list[RunRecord]]]:
    """Submit every batch; yield results as they complete. A batch whose worker died is re-run
    by the scheduler (up to ``distributed.scheduler.allowed-failures`` times); past that, or on
    any other error outside :func:`execute_batch`, its runs are recorded ``failed``."""
    from distributed import Client, LocalCluster, as_completed

    own_client = client is None
    cluster = None
    if own_client:
        if scheduler is not None:
            client = Client(scheduler, timeout="60s")
        else:
            cluster = LocalCluster(
                n_workers=workers or os.cpu_count() or 1,
                threads_per_worker=1,
                processes=True,
                dashboard_address=":0",
            )
            client = Client(cluster)
    try:
        futures = {
            client.submit(execute_batch, b, sweep, get_kind(b.kind), str(db), pure=False): b
            for b in batches
        }
        for future in as_completed(futures):
            batch = futures.pop(future)
            try:
                records = future.result()
            except Exception as err:
                records = failed_records(batch, sweep, _one_line(err))
            future.release()
            yield batch, records
    finally:
        if own_client:
            client.close()
            if cluster is not None:
                cluster.close()


def run_sweep(
    spec: SweepSpec | Plan | str | Path,
    db: str | Path,
    *,
    executor: str = "local",
    workers: int | None = None,
    scheduler: str | None = None,
    shard: tuple[int, int] | None = None,
    retry_failed: bool = False,
    progress: bool = False,
    client: Any = None,
    hooks: Hooks | None = None,
) -> SweepReport:
    r"""Run every run of ``spec`` missing from the database ``db``: running it again resumes.

    Validates the spec, the plan and the executor before opening the database. Each batch's
    records are written in one transaction, so a sweep killed at any instant loses no finished
    run and writes no half record. A kind with ``journaled`` set also keeps each run's partial
    results as they come (:mod:`assocmem.sweep.journal`), so a long run resumes where it was
    interrupted.

    Parameters
    ----------
    spec : SweepSpec, Plan, str or pathlib.Path
        The sweep, its plan (:func:`~assocmem.sweep.plan.make_plan`: a caller that planned
        to validate need not plan again), or a spec file / shipped spec name for
        :func:`load_spec`.
    db : str or pathlib.Path
        The SQLite results database (created if missing).
    executor : {"local", "dask"}, default "local"
        In this process, or on a Dask cluster (needs ``assocmem[sweep]``).
    workers : int, optional
        Dask workers of a local cluster.
    scheduler : str, optional
        The address of a running Dask scheduler.
    shard : tuple of (int, int), optional
        ``(k, n)`` with 1 ≤ k ≤ n: run only shard k of n (batch i belongs to shard
        :math:`i \bmod n + 1`).
    retry_failed : bool, default False
        Run again the runs recorded as failed.
    progress : bool, default False
        A progress bar on stderr.
    client : dask.distributed.Client, optional
        An existing client to submit to.
    hooks : Hooks, optional
        Test hooks around each commit.

    Returns
    -------
    SweepReport

    Raises
    ------
    ConfigError
        For an invalid spec or executor setting (nothing is written).

    Notes
    -----
    Read the results with :func:`load_results`.
    """
    if isinstance(spec, Plan):
        plan, spec = spec, spec.spec
    else:
        spec = spec if isinstance(spec, SweepSpec) else load_spec(spec)
        plan = make_plan(spec)
    if client is None:
        check_executor(executor, workers, scheduler)
    hooks = hooks or Hooks()
    start = time.perf_counter()
    with Store(db) as store:
        store.record_sweep(spec.name, spec.kind, spec_document(spec))
        mine = shard_batches(plan.batches, shard)
        done = store.done_keys(retry_failed=retry_failed)
        todo = pending_batches(mine, done)
        total = sum(len(b.runs) for b in mine)
        pending = sum(len(b.runs) for b in todo)
        report = SweepReport(spec.name, total, total - pending, 0)
        statuses: Counter[str] = Counter()
        if executor == "dask" or client is not None:
            where = Path(db).resolve()  # the workers open the journals by this path
            stream = _dask(
                todo, spec.name, where, workers=workers, scheduler=scheduler, client=client
            )
        else:
            stream = _local(todo, spec.name, Path(db))
        desc = f"sweep {spec.name}"
        with progress_bar(pending, desc, "run", progress, leave=True, smoothing=0.1) as bar:
            for batch, records in stream:
                _call(hooks.after_compute, batch)
                before = None if hooks.before_commit is None else _bind(hooks.before_commit, batch)
                report.written += store.write(records, before_commit=before)
                _call(hooks.after_commit, batch)
                statuses.update(record.status for record in records)
                bar.update(len(records))
                bar.set_postfix(statuses, refresh=False)
        report.statuses = dict(statuses)
    report.wall_seconds = round(time.perf_counter() - start, 3)
    return report


def _call(hook: Callable[[Batch], None] | None, batch: Batch) -> None:
    if hook is not None:
        hook(batch)


def _bind(hook: Callable[[Batch], None], batch: Batch) -> Callable[[], None]:
    return lambda: hook(batch)


def spec_document(spec: SweepSpec) -> dict[str, Any]:
    """The spec as stored in the ``sweeps`` table (for provenance)."""
    return {
        "kind": spec.kind,
        "description": spec.description,
        "base": spec.base,
        "axes": spec.axes,
        "zip": spec.zipped,
        "seeds": spec.seeds,
        "trials": spec.trials,
        "runs_per_batch": spec.runs_per_batch,
        "source": spec.source,
    }


__all__ = [
    "EXECUTORS",
    "Hooks",
    "Run",
    "SweepReport",
    "execute_batch",
    "run_sweep",
]

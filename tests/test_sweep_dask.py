"""Acceptance 2: the Dask executor on a LocalCluster, with a worker SIGKILLed mid-sweep."""

import os
import signal
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from test_sweep_journal import SPEC as FACTS_SPEC
from test_sweep_journal import Evaluations

from assocmem.cli import main
from assocmem.sweep.execute import Hooks, run_sweep
from assocmem.sweep.journal import read_journals

distributed = pytest.importorskip("distributed")

SPEC = """
name = "dask"
kind = "closed_form"
trials = 12
runs_per_batch = 2
[base]
n_inputs = 1500
schemes = ["uniform", "population", "threshold:P=d/8"]
dims = [16, 64, 128]
[axes]
alpha = [1.5, 2.0]
"""


def rows(db: Path) -> list[tuple[str, str, str]]:
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT hash, status, metrics FROM runs ORDER BY hash").fetchall()


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
    ) as cluster:
        yield cluster


def test_worker_killed_mid_sweep_still_completes(tmp_path: Path, cluster) -> None:
    spec = tmp_path / "spec.toml"
    spec.write_text(SPEC)
    killed: list[tuple[int, bool]] = []
    with distributed.Client(cluster) as client:
        pids = client.run(os.getpid)  # worker address -> pid

        def kill_a_busy_worker(batch: object) -> None:
            if killed:
                return
            busy = [addr for addr, keys in client.processing().items() if keys]
            victim = busy[0] if busy else next(iter(pids))
            os.kill(pids[victim], signal.SIGKILL)
            killed.append((pids[victim], bool(busy)))

        db = tmp_path / "dask.db"
        report = run_sweep(spec, db, client=client, hooks=Hooks(after_commit=kill_a_busy_worker))
    assert killed and killed[0][1], "the killed worker had batches in flight"
    assert report.statuses == {"ok": 24} and report.written == 24
    reference = tmp_path / "local.db"
    run_sweep(spec, reference)
    assert rows(db) == rows(reference)  # every run recorded once, same numbers as local


def journal_times(db: Path) -> dict[str, float]:
    with closing(sqlite3.connect(db)) as conn:
        return dict(conn.execute("SELECT key, created FROM partial").fetchall())


def test_workers_resume_from_and_write_the_journal(
    tmp_path: Path, cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A facts search failed locally after two journaled evaluations; retried on the cluster,
    the worker reads them (rewrites neither), journals the evaluations it makes, and the
    record equals a local sweep's."""
    spec = tmp_path / "facts.toml"
    spec.write_text(FACTS_SPEC)
    reference = tmp_path / "reference.db"
    run_sweep(spec, reference)
    db = tmp_path / "journal.db"
    evaluations = Evaluations(monkeypatch)
    evaluations.how, evaluations.kill_at = "raise", 10  # the trained search's third evaluation
    assert run_sweep(spec, db).statuses == {"ok": 1, "failed": 1}
    (kept,) = read_journals(db).values()
    written = journal_times(db)
    assert len(kept) == len(written) == 2

    seen: list[tuple[dict, dict]] = []
    hooks = Hooks(after_compute=lambda batch: seen.append((read_journals(db), journal_times(db))))
    with distributed.Client(cluster) as client:
        report = run_sweep(spec, db, client=client, retry_failed=True, hooks=hooks)
    assert report.written == 1 and len(evaluations.calls) == 9  # none made in this process
    [(journals, times)] = seen  # the worker's journal, before the driver commits the record
    (full,) = journals.values()
    assert len(full) == 4 and set(kept) < set(full)  # as many as the reference search made
    assert all(times[key] == written[key] for key in kept)  # read, not evaluated again
    assert rows(db) == rows(reference)
    assert read_journals(db) == {}


@pytest.mark.slow
def test_cli_dask_local_cluster(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = tmp_path / "spec.toml"
    spec.write_text(SPEC.replace("trials = 12", "trials = 4").replace("1500", "200"))
    db = tmp_path / "cli.db"
    argv = ["sweep", "run", str(spec), "--db", str(db), "--executor", "dask", "--workers", "2"]
    assert main([*argv, "--quiet", "--format", "json"]) == 0
    assert '"written": 8' in capsys.readouterr().out
    assert len(rows(db)) == 8


@pytest.mark.slow
def test_cli_dask_scheduler_address(
    tmp_path: Path, cluster, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--scheduler ADDR``: how a SLURM (dask-jobqueue) cluster is used from the command line."""
    spec = tmp_path / "spec.toml"
    spec.write_text(SPEC.replace("trials = 12", "trials = 3").replace("1500", "200"))
    db = tmp_path / "addr.db"
    argv = ["sweep", "run", str(spec), "--db", str(db), "--executor", "dask"]
    assert main([*argv, "--scheduler", cluster.scheduler_address, "--quiet"]) == 0
    assert "6 written (6 ok)" in capsys.readouterr().out

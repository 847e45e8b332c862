"""Acceptance 2: the Dask executor on a LocalCluster, with a worker SIGKILLed mid-sweep."""

import os
import signal
import sqlite3
from pathlib import Path

import pytest

from assocmem.cli import main
from assocmem.sweep.execute import Hooks, run_sweep

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

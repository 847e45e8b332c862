"""Acceptance 1: a sweep SIGKILLed at many points and resumed each time ends with exactly the
runs of an uninterrupted sweep: no duplicate, no partial record, identical metrics.

The fast tests fork the sweep process (torch is already imported, so each kill costs
milliseconds, not an interpreter start); the slow test does the same with real
``assocmem sweep run`` processes.
"""

import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from pathlib import Path

import pytest
import torch

from assocmem.sweep.execute import Hooks, run_sweep
from assocmem.sweep.plan import make_plan
from assocmem.sweep.spec import load_spec

DRIVER = str(Path(__file__).parent / "sweep_driver.py")

SPEC = """
name = "reliability"
kind = "closed_form"
trials = 20
runs_per_batch = 2
seeds = 2

[base]
n_inputs = 300
schemes = ["uniform", "population", "empirical"]
dims = [8, 16, 64]
n_samples = [10, 1000, "inf"]

[axes]
alpha = [1.5, 2.0]
"""


def rows(db: Path) -> list[tuple[str, str, str]]:
    # closed, not just committed (``with connect()`` leaves it open): a connection open across
    # the fork of a sweep child breaks SQLite's locks (its FAQ: never carry one over fork)
    with closing(sqlite3.connect(db)) as conn:
        return conn.execute("SELECT hash, status, metrics FROM runs ORDER BY hash").fetchall()


def count(db: Path) -> int:
    if not db.exists():
        return 0
    try:
        with closing(sqlite3.connect(db, timeout=5)) as conn:
            return int(conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0])
    except sqlite3.OperationalError:  # the table is not created yet
        return 0


def run_driver(spec: Path, db: Path, *point: str) -> int:
    done = subprocess.run([sys.executable, DRIVER, str(spec), str(db), *point], timeout=120)
    return done.returncode


def kill_at_random_moment(spec: Path, db: Path, rng: random.Random) -> int:
    """Start the CLI, wait until it commits a new batch, SIGKILL it after a random delay."""
    start = count(db)
    proc = subprocess.Popen(
        [sys.executable, "-m", "assocmem", "sweep", "run", str(spec), "--db", str(db), "--quiet"],
        stdout=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while count(db) == start and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    time.sleep(rng.uniform(0.0, 0.05))
    proc.send_signal(signal.SIGKILL)
    return proc.wait()


def in_child(target) -> int:
    """Run ``target()`` in a forked process; its exit code, or -signal if it was killed."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        code = 1
        try:
            torch.set_num_threads(1)  # as DataLoader workers do after a fork
            target()
            code = 0
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)


def kill_hook(k: int):
    seen = [0]

    def hook(batch: object) -> None:
        seen[0] += 1
        if seen[0] == k:
            os.kill(os.getpid(), signal.SIGKILL)

    return hook


def forked_random_kill(spec: Path, db: Path, rng: random.Random) -> int:
    """Fork a sweep; SIGKILL it at a random moment after its next commit."""
    start = count(db)
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        code = 1
        try:
            torch.set_num_threads(1)
            # a short pause per batch, so the sweep outlasts the random delay below on any machine
            run_sweep(spec, db, hooks=Hooks(after_compute=lambda batch: time.sleep(0.01)))
            code = 0
        finally:
            os._exit(code)
    deadline = time.monotonic() + 60
    while count(db) == start and time.monotonic() < deadline:
        time.sleep(0.002)
    time.sleep(rng.uniform(0.0, 0.03))
    os.kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    return -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)


POINTS = (
    ("after_commit", 1),  # killed between batches
    ("before_commit", 1),  # killed inside the transaction: rows inserted, not committed
    ("after_compute", 2),  # killed with a computed batch not yet written
    ("after_commit", 3),
    ("before_commit", 2),
    ("after_compute", 1),
)


def check_history(history: list, db: Path, n_runs: int) -> None:
    for point, before, after in history:  # never a partial batch (batches hold 2 runs)
        assert (after - before) % 2 == 0, (point, before, after)
    for point, before, after in history:
        if point[0] == "before_commit" and point[1] == 1:
            assert after == before, "a kill inside the transaction must commit nothing"
    assert 0 < count(db) < n_runs


def test_sigkill_at_many_points_then_resume(tmp_path: Path) -> None:
    spec = tmp_path / "spec.toml"
    spec.write_text(SPEC)
    reference = tmp_path / "reference.db"
    run_sweep(spec, reference)
    expected = rows(reference)
    n_runs = len(make_plan(load_spec(spec)).runs)
    assert len(expected) == n_runs == 2 * 2 * 20

    db = tmp_path / "killed.db"
    history = []
    for name, k in POINTS:
        before = count(db)
        hooks = Hooks(**{name: kill_hook(k)})
        assert in_child(lambda hooks=hooks: run_sweep(spec, db, hooks=hooks)) == -signal.SIGKILL
        history.append(((name, k), before, count(db)))
    rng = random.Random(7)
    for _ in range(3):  # and at random moments, from outside
        before = count(db)
        assert forked_random_kill(spec, db, rng) == -signal.SIGKILL
        history.append((("random", 0), before, count(db)))
    check_history(history, db, n_runs)
    assert in_child(lambda: run_sweep(spec, db)) == 0  # resume to the end
    got = rows(db)
    assert len(got) == len({h for h, _, _ in got}) == n_runs
    assert got == expected  # same runs, same statuses, byte-identical metrics
    with closing(sqlite3.connect(db)) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_two_writers_and_shards_forked(tmp_path: Path) -> None:
    """Two whole sweeps and two shards writing one database at once: every run exactly once."""
    spec = tmp_path / "spec.toml"
    spec.write_text(SPEC)
    db = tmp_path / "shared.db"
    pids = []
    for shard in (None, None, (1, 3), (3, 3)):
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            code = 1
            try:
                torch.set_num_threads(1)
                run_sweep(spec, db, shard=shard)
                code = 0
            finally:
                os._exit(code)
        pids.append(pid)
    assert [os.waitpid(pid, 0)[1] for pid in pids] == [0, 0, 0, 0]
    reference = tmp_path / "reference.db"
    run_sweep(spec, reference)
    assert rows(db) == rows(reference)


@pytest.mark.slow
def test_sigkill_cli_processes_then_resume(tmp_path: Path) -> None:
    spec = tmp_path / "spec.toml"
    spec.write_text(SPEC)
    reference = tmp_path / "reference.db"
    run_sweep(spec, reference)
    expected = rows(reference)
    n_runs = len(make_plan(load_spec(spec)).runs)
    assert len(expected) == n_runs == 2 * 2 * 20

    db = tmp_path / "killed.db"
    history = []
    for name, k in POINTS[:5]:
        before = count(db)
        assert run_driver(spec, db, name, str(k)) == -signal.SIGKILL, (name, k)
        history.append(((name, k), before, count(db)))
    rng = random.Random(5)
    for _ in range(2):  # and at random moments, from outside
        before = count(db)
        assert kill_at_random_moment(spec, db, rng) == -signal.SIGKILL
        history.append((("random", 0), before, count(db)))
    check_history(history, db, n_runs)
    assert run_driver(spec, db) == 0  # resume to the end
    got = rows(db)
    assert len(got) == len({h for h, _, _ in got}) == n_runs
    assert got == expected  # same runs, same statuses, byte-identical metrics
    with closing(sqlite3.connect(db)) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


@pytest.mark.slow
@pytest.mark.parametrize("n_shards", [3])
def test_two_writer_cli_processes_and_shards(tmp_path: Path, n_shards: int) -> None:
    """Two whole sweeps and shards (CLI processes) writing one database at once."""
    spec = tmp_path / "spec.toml"
    spec.write_text(SPEC)
    db = tmp_path / "shared.db"
    base = [sys.executable, "-m", "assocmem", "sweep", "run", str(spec), "--db", str(db), "--quiet"]
    procs = [subprocess.Popen(base, stdout=subprocess.DEVNULL) for _ in range(2)]
    procs += [
        subprocess.Popen([*base, "--shard", f"{k}/{n_shards}"], stdout=subprocess.DEVNULL)
        for k in (1, 2)
    ]
    assert [p.wait(timeout=120) for p in procs] == [0, 0, 0, 0]
    reference = tmp_path / "reference.db"
    run_sweep(spec, reference)
    assert rows(db) == rows(reference)

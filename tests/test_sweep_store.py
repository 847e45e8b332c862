"""The results store: resume, no duplicates, failed runs, provenance, merge; a diverging
learning rate recorded as ``diverged`` while the sweep goes on (acceptance 3)."""

import json
import os
import sqlite3
from pathlib import Path

import pytest

from assocmem.config.errors import ConfigError
from assocmem.sweep.execute import run_sweep
from assocmem.sweep.kinds import RUN_KINDS
from assocmem.sweep.plan import make_plan
from assocmem.sweep.spec import load_spec
from assocmem.sweep.store import Merged, RunRecord, Store, done_keys_readonly, merge, read_rows

SPEC = """
name = "small"
kind = "closed_form"
trials = 10
runs_per_batch = 2
[base]
n_inputs = 40
schemes = ["uniform", "threshold:P=d/8"]
dims = [4, 16]
[axes]
alpha = [1.5, 2.0]
"""

DIVERGING = """
name = "diverging"
kind = "train"
seeds = 2
[base]
n_inputs = 20
n_outputs = 5
dim = 8
n_samples = 128
batch_size = 16
model = "learned"
[axes]
lr = [1.0, 1e38]
"""


@pytest.fixture
def spec(tmp_path: Path) -> Path:
    path = tmp_path / "spec.toml"
    path.write_text(SPEC)
    return path


def table(db: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT hash, metrics FROM runs ORDER BY hash").fetchall()


def test_resume_runs_only_the_missing_runs(spec: Path, tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    first = run_sweep(spec, db, shard=(1, 2))
    assert first.written == first.total_runs > 0
    second = run_sweep(spec, db)
    assert second.skipped == first.written
    assert second.written == second.total_runs - first.written
    third = run_sweep(spec, db)
    assert (third.written, third.skipped) == (0, third.total_runs)
    rows = table(db)
    assert len(rows) == len({h for h, _ in rows}) == 20
    reference = tmp_path / "ref.db"
    run_sweep(spec, reference)
    assert table(reference) == rows


def test_record_has_config_metrics_status_provenance(spec: Path, tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    run_sweep(spec, db)
    row = read_rows(db)[0]
    assert row["status"] == "ok" and row["message"] is None
    assert row["config"]["n_inputs"] == 40 and "trial" in row["config"]
    assert len(row["metrics"]["errors"]) == 2 and row["metrics"]["dims"] == [4, 16]
    prov = row["provenance"]
    for key in ("assocmem", "git", "torch", "python", "device", "host", "wall_seconds"):
        assert key in prov
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"  # closed: one file
        (sweep,) = conn.execute("SELECT spec FROM sweeps WHERE name = 'small'").fetchone()
    assert json.loads(sweep)["trials"] == 10


def test_failed_batch_is_recorded_and_retried(
    spec: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "r.db"
    kind = RUN_KINDS["closed_form"]
    real = kind.execute
    calls: list[int] = []

    def broken(configs: list, trials: list) -> list:
        calls.append(len(calls))
        if len(calls) == 2:  # the second batch
            raise RuntimeError("out of memory\nsecond line")
        return real(configs, trials)

    monkeypatch.setattr(kind, "execute", broken)
    report = run_sweep(spec, db)
    assert report.statuses == {"ok": 18, "failed": 2}
    failed = [r for r in read_rows(db) if r["status"] == "failed"]
    assert [r["message"] for r in failed] == ["RuntimeError: out of memory second line"] * 2
    assert failed[0]["metrics"] is None
    assert run_sweep(spec, db).written == 0  # failed runs count as done unless retried
    monkeypatch.setattr(kind, "execute", real)
    retried = run_sweep(spec, db, retry_failed=True)
    assert retried.written == 2 and retried.statuses == {"ok": 2}
    assert {r["status"] for r in read_rows(db)} == {"ok"}
    assert len(read_rows(db)) == 20


def test_ok_rows_are_never_overwritten(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    record = RunRecord("k", "train", "s", {"a": 1}, {"error": 0.5}, "ok", None, {})
    with Store(db) as store:
        assert store.write([record]) == 1
        assert store.write([record]) == 0
        other = RunRecord("k", "train", "s", {"a": 1}, {"error": 0.9}, "ok", None, {})
        assert store.write([other]) == 0
        failed = RunRecord("f", "train", "s", {}, None, "failed", "boom", {})
        assert store.write([failed]) == 1
        assert store.write([RunRecord("f", "train", "s", {}, {"error": 1.0}, "ok", None, {})]) == 1
        assert store.count() == 2
    assert {r["hash"]: r["metrics"] for r in read_rows(db)} == {
        "k": {"error": 0.5},
        "f": {"error": 1.0},
    }


def test_nan_metric_is_diverged_and_strict_json(
    spec: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The closed-form path with an injected NaN: ``diverged``, stored as JSON null."""
    kind = RUN_KINDS["closed_form"]
    real = kind.execute
    calls: list[int] = []

    def with_nan(configs: list, trials: list) -> list:
        out = real(configs, trials)
        calls.append(len(calls))
        if len(calls) == 1:  # the first batch
            out[0][0]["errors"][0][0] = float("nan")
            return [(out[0][0], "diverged"), *out[1:]]
        return out

    monkeypatch.setattr(kind, "execute", with_nan)
    db = tmp_path / "r.db"
    assert run_sweep(spec, db).statuses == {"ok": 19, "diverged": 1}
    with sqlite3.connect(db) as conn:
        (metrics,) = conn.execute("SELECT metrics FROM runs WHERE status = 'diverged'").fetchone()
    assert json.loads(metrics)["errors"][0][0] is None


def test_diverging_learning_rate_is_recorded_and_the_sweep_goes_on(tmp_path: Path) -> None:
    spec = tmp_path / "diverging.toml"
    spec.write_text(DIVERGING)
    db = tmp_path / "r.db"
    report = run_sweep(spec, db)
    assert report.statuses == {"ok": 2, "diverged": 2}
    rows = read_rows(db)
    assert len(rows) == 4
    for row in rows:
        expected = "diverged" if row["config"]["lr"] > 1e30 else "ok"
        assert row["status"] == expected
        assert row["config"]["model"] == "learned"
    ok = [r for r in rows if r["status"] == "ok"]
    assert all(0 <= r["metrics"]["error"] < 1 for r in ok)


def test_merge_shard_databases(spec: Path, tmp_path: Path) -> None:
    parts = [tmp_path / f"part{k}.db" for k in (1, 2, 3)]
    for k, part in enumerate(parts, start=1):
        run_sweep(spec, part, shard=(k, 3))
    target = tmp_path / "all.db"
    assert merge(target, parts) == Merged(runs=20, journals=0)
    assert merge(target, parts) == Merged(runs=0, journals=0)
    reference = tmp_path / "ref.db"
    run_sweep(spec, reference)
    assert table(target) == table(reference)
    with pytest.raises(ConfigError):
        merge(target, [tmp_path / "missing.db"])


def test_foreign_file_is_a_config_error(tmp_path: Path, spec: Path) -> None:
    junk = tmp_path / "junk.db"
    junk.write_text("not a database" * 100)
    with pytest.raises(ConfigError, match="db:"):
        run_sweep(spec, junk)
    assert make_plan(load_spec(spec)).runs


def test_database_being_created_by_another_writer_is_accepted(tmp_path: Path, spec: Path) -> None:
    """Another writer may have set the journal mode (the file is no longer empty) and not yet
    committed the schema: a second sweep must write into it, not refuse it (a race seen in CI
    with four writers). A database holding other tables is still refused."""
    db = tmp_path / "new.db"
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA journal_mode = WAL")
    assert db.stat().st_size > 0
    report = run_sweep(spec, db)
    assert report.written == len(make_plan(load_spec(spec)).runs)
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE things (x)")
    with pytest.raises(ConfigError, match="not a results database"):
        run_sweep(spec, other)


def test_reading_writes_nothing_beside_the_database(spec: Path, tmp_path: Path) -> None:
    """A closed database is one file; reading it (SQLite mode=ro) leaves no -wal or -shm."""
    db = tmp_path / "r.db"
    run_sweep(spec, db)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.db", "spec.toml"]
    assert read_rows(db) and done_keys_readonly(db)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.db", "spec.toml"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes through permission bits")
def test_read_only_database_in_read_only_folder(spec: Path, tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    db = folder / "r.db"
    run_sweep(spec, db)
    db.chmod(0o444)
    folder.chmod(0o555)
    try:
        assert read_rows(db)  # immutable=1: no lock or shared-memory file needed
        assert sorted(p.name for p in folder.iterdir()) == ["r.db"]
        with pytest.raises(ConfigError, match="db: "):
            run_sweep(spec, db)
    finally:
        folder.chmod(0o755)

"""Per-run journals: a long run (one facts capacity search) killed half-way resumes from the
evaluations it had finished, and its record is bit for bit that of an uninterrupted run.

Evaluations are counted by wrapping the study's two evaluation functions (they still compute):
a resumed search must call them only for the N its journal lacks.
"""

import os
import random
import signal
import sqlite3
import time
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
import torch
from test_sweep_reliability import in_child, rows

import assocmem.studies.facts.capacity as capacity
from assocmem.config.errors import ConfigError
from assocmem.sweep.execute import run_sweep
from assocmem.sweep.journal import open_journals, read_journals
from assocmem.sweep.plan import make_plan, summary
from assocmem.sweep.results import load_results
from assocmem.sweep.spec import load_spec
from assocmem.sweep.store import Merged, Store, done_keys_readonly, merge, open_readonly

# two searches: the outer product at d = 24 (7 evaluations), a linear memory trained by SGD at
# d = 8 (4 evaluations, two lrs × two trials, 100 steps); under a second on this VM
SPEC = """
name = "journal"
kind = "facts_capacity"
[base]
trials = 2
lrs = [30.0, 100.0]
max_steps = 100
[zip]
memory = ["closed_form", "linear"]
optimizer = ["none", "sgd"]
dim = [24, 8]
"""


class Evaluations:
    """Wraps the study's evaluation functions: records each N evaluated; at call ``kill_at``
    (1-based) kills this process with SIGKILL or raises, before computing."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls: list[int] = []
        self.kill_at: int | None = None
        self.how = "sigkill"
        self.pause = 0.0  # seconds before each evaluation (so a kill from outside lands inside)
        for name in ("closed_form_evaluation", "trained_evaluation"):
            monkeypatch.setattr(capacity, name, self.wrap(getattr(capacity, name)))

    def wrap(self, evaluate: Any) -> Any:
        def counted(n: int, *args: Any, **kwargs: Any) -> Any:
            if self.kill_at is not None and len(self.calls) + 1 == self.kill_at:
                if self.how == "sigkill":
                    os.kill(os.getpid(), signal.SIGKILL)
                raise RuntimeError("interrupted")
            time.sleep(self.pause)
            self.calls.append(n)
            return evaluate(n, *args, **kwargs)

        return counted


@pytest.fixture
def spec(tmp_path: Path) -> Path:
    path = tmp_path / "spec.toml"
    path.write_text(SPEC)
    return path


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list]:
    """An uninterrupted sweep in its own database, and the N it evaluated, in order."""
    folder = tmp_path_factory.mktemp("reference")
    spec, db = folder / "spec.toml", folder / "reference.db"
    spec.write_text(SPEC)
    with pytest.MonkeyPatch.context() as monkeypatch:
        evaluations = Evaluations(monkeypatch)
        run_sweep(spec, db)
    assert read_journals(db) == {}  # every run finished: no journal left
    return db, list(evaluations.calls)


@pytest.mark.parametrize("killed_after", [3, 9])  # inside the closed-form / the trained search
def test_killed_search_resumes_from_its_journal(
    killed_after: int,
    tmp_path: Path,
    spec: Path,
    reference: tuple[Path, list],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ref_db, ref_calls = reference
    assert len(ref_calls) == 11 and 0 < killed_after < len(ref_calls)
    evaluations = Evaluations(monkeypatch)
    db = tmp_path / "killed.db"
    evaluations.kill_at = killed_after + 1
    assert in_child(lambda: run_sweep(spec, db)) == -signal.SIGKILL
    journals = read_journals(db)  # the run in progress, with every evaluation it finished
    assert len(journals) == 1
    (kept,) = journals.values()
    first_in_search = 0 if killed_after < 7 else 7  # 7 closed-form evaluations come first
    assert sorted(kept) == sorted(
        f"evaluation/{n}" for n in ref_calls[first_in_search:killed_after]
    )

    evaluations.kill_at = None
    report = run_sweep(spec, db)
    assert evaluations.calls == ref_calls[killed_after:]  # nothing evaluated twice
    assert report.skipped == int(killed_after >= 7)  # the closed-form run was committed
    assert rows(db) == rows(ref_db)  # bit for bit, the evaluations included
    assert read_journals(db) == {}  # deleted with the final record


def test_merge_carries_the_journal_of_a_run_in_progress(
    tmp_path: Path, spec: Path, reference: tuple[Path, list], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A sweep killed in one database resumes in the one it is merged into; a journal is copied
    whole from the first source holding one (never mixed with a second source's), and never
    for a run the target has finished."""
    ref_db, ref_calls = reference
    evaluations = Evaluations(monkeypatch)
    first, second = tmp_path / "first.db", tmp_path / "second.db"
    for db, killed_after in ((first, 8), (second, 9)):  # 1 and 2 of the trained search's
        evaluations.kill_at = killed_after + 1
        assert in_child(lambda db=db: run_sweep(spec, db)) == -signal.SIGKILL
    assert [len(kept) for kept in read_journals(second).values()] == [2]
    target = tmp_path / "merged.db"
    assert merge(target, [first, second]) == Merged(runs=1, journals=1)
    assert read_journals(target) == read_journals(first)  # the first source's, whole
    assert merge(target, [second]) == Merged(runs=0, journals=0)  # one journal a run
    plan = summary(make_plan(load_spec(spec)), done_keys_readonly(target), None,
                   read_journals(target))  # fmt: skip
    assert (plan["pending_runs"], plan["in_progress"], plan["journal_entries"]) == (1, 1, 1)

    evaluations.kill_at = None
    run_sweep(spec, target)
    assert evaluations.calls == ref_calls[8:]  # resumed from the carried evaluation
    assert rows(target) == rows(ref_db)
    assert merge(target, [second]) == Merged(runs=0, journals=0)  # finished: nothing carried
    assert read_journals(target) == {}


def progress(db: Path) -> int:
    """Evaluations kept: journaled, or in a committed record (the closed-form search: 7)."""
    try:
        return sum(map(len, read_journals(db).values())) + 7 * len(rows(db))
    except (ConfigError, sqlite3.OperationalError):  # no database, or no schema yet
        return 0


def test_killed_at_random_moments_from_outside(
    tmp_path: Path, spec: Path, reference: tuple[Path, list], monkeypatch: pytest.MonkeyPatch
) -> None:
    """SIGKILL from outside at a random instant after each new evaluation is kept (in the next
    evaluation, a journal write, a commit), three times; the resume makes only the evaluations
    neither journaled nor committed, and stores the reference records."""
    ref_db, ref_calls = reference
    evaluations = Evaluations(monkeypatch)
    evaluations.pause = 0.05  # in the child: a kill from outside lands inside the search
    db = tmp_path / "random.db"
    rng = random.Random(3)
    history = []
    for _ in range(3):
        before = progress(db)
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            try:
                torch.set_num_threads(1)  # as DataLoader workers do after a fork
                run_sweep(spec, db)
            finally:
                os._exit(0)
        try:
            deadline = time.monotonic() + 60
            while progress(db) == before and time.monotonic() < deadline:
                time.sleep(0.005)
            time.sleep(rng.uniform(0.0, 0.12))
        finally:
            os.kill(pid, signal.SIGKILL)
            status = os.waitpid(pid, 0)[1]
        assert os.WIFSIGNALED(status), "the sweep ended before the kill"
        history.append(progress(db))
    assert 0 < history[0] < history[-1] < len(ref_calls)
    evaluations.pause = 0.0
    run_sweep(spec, db)
    assert evaluations.calls == ref_calls[history[-1] :]  # nothing evaluated twice
    assert rows(db) == rows(ref_db)
    assert read_journals(db) == {}


def test_failed_search_keeps_its_journal_for_a_retry(
    tmp_path: Path, spec: Path, reference: tuple[Path, list], monkeypatch: pytest.MonkeyPatch
) -> None:
    ref_db, ref_calls = reference
    evaluations = Evaluations(monkeypatch)
    evaluations.how, evaluations.kill_at = "raise", 10  # the trained search's third evaluation
    db = tmp_path / "failed.db"
    report = run_sweep(spec, db)
    assert report.statuses == {"ok": 1, "failed": 1}
    assert [len(kept) for kept in read_journals(db).values()] == [2]

    evaluations.kill_at = None
    run_sweep(spec, db, retry_failed=True)
    assert evaluations.calls == ref_calls  # each N evaluated once over both attempts
    assert rows(db) == rows(ref_db)
    assert read_journals(db) == {}


def test_a_journal_serves_only_its_own_run(
    tmp_path: Path, spec: Path, reference: tuple[Path, list], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another seed (another identity) evaluates the same first N again, from its own draws."""
    evaluations = Evaluations(monkeypatch)
    db = tmp_path / "seeds.db"
    evaluations.kill_at = 3 + 1
    assert in_child(lambda: run_sweep(spec, db)) == -signal.SIGKILL
    before = read_journals(db)
    assert [len(kept) for kept in before.values()] == [3]
    other = spec.with_name("other.toml")
    other.write_text(SPEC.replace("max_steps = 100", "max_steps = 100\nseed = 1"))
    evaluations.kill_at = None
    run_sweep(other, db)
    beside = list(evaluations.calls)
    alone = tmp_path / "alone.db"
    run_sweep(other, alone)
    alone_calls = evaluations.calls[len(beside) :]
    assert beside == alone_calls  # every evaluation made, none taken from seed 0's journal
    assert alone_calls[0] == reference[1][0]  # though both searches start at the same N
    got = {key: metrics for key, _, metrics in rows(db)}
    assert all(got[key] == metrics for key, _, metrics in rows(alone))
    assert read_journals(db) == before  # seed 0's journal is untouched

    with open_journals(db, [*before, "another run"]) as journals:
        assert dict(journals[0]) == next(iter(before.values())) and dict(journals[1]) == {}


def test_a_database_without_the_journal_table_reads_and_resumes(
    tmp_path: Path, spec: Path, reference: tuple[Path, list], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A database written before journals existed (the same schema less ``partial``)."""
    ref_db, ref_calls = reference
    db = tmp_path / "old.db"
    run_sweep(spec, db, shard=(1, 2))  # the closed-form search only
    with closing(sqlite3.connect(db)) as conn:
        conn.execute("DROP TABLE partial")
        conn.commit()
    db.chmod(0o444)  # readers must not need to write (nor create the table)
    assert read_journals(db) == {}
    open_readonly(db).close()
    assert len(load_results(db)) == 1
    db.chmod(0o644)

    evaluations = Evaluations(monkeypatch)
    report = run_sweep(spec, db)
    assert (report.skipped, report.written) == (1, 1)
    assert evaluations.calls == ref_calls[7:]  # only the trained search ran
    assert rows(db) == rows(ref_db)
    pd_rows = load_results(db).sort_values("hash").drop(columns=["created", "wall_seconds"])
    pd_ref = load_results(ref_db).sort_values("hash").drop(columns=["created", "wall_seconds"])
    assert pd_rows.reset_index(drop=True).equals(pd_ref.reset_index(drop=True))


def test_a_journal_entry_is_committed_when_set(tmp_path: Path) -> None:
    """An entry written is committed at once (another connection sees it); values come back as
    strict JSON (a non-finite float as None)."""
    db = tmp_path / "journal.db"
    Store(db).close()
    with open_journals(db, ["run"]) as (journal,):
        journal["a"] = [0.1, None]
        journal["b"] = {"x": float("nan")}
        assert read_journals(db) == {"run": {"a": [0.1, None], "b": {"x": None}}}
        assert journal["b"] == {"x": None}
        del journal["a"]
    assert read_journals(db) == {"run": {"b": {"x": None}}}
    with open_journals(None, ["run"]) as (memory,):  # no database: kept in memory only
        memory["a"] = 1
        assert dict(memory) == {"a": 1}
    assert read_journals(db) == {"run": {"b": {"x": None}}}

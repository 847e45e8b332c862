"""The results database: one SQLite row per run, written one transaction per batch.

Crash safety comes from SQLite itself: a batch's rows are inserted inside one ``BEGIN
IMMEDIATE … COMMIT``, so a process killed at any instant leaves either all of them or none (the
write-ahead log is rolled back on the next open). The content hash is the PRIMARY KEY and rows
are inserted with ``ON CONFLICT DO NOTHING`` semantics (a ``failed`` row may be replaced by a
later attempt, an ``ok`` or ``diverged`` row never), so a resumed sweep, two shards, or two
whole sweeps writing the same file never duplicate a run. WAL mode with a busy timeout lets
several writer processes and readers share the file; the last writer to close switches the file
back to a rollback journal (best effort), so that a closed database is one file and readers
(:func:`open_readonly`, SQLite ``mode=ro``) write nothing beside it.

The ``partial`` table holds the journals of runs in progress (:mod:`assocmem.sweep.journal`);
committing a run's final record (``ok`` or ``diverged``) deletes its entries in the same
transaction. Readers never need it: a database written before it existed reads and resumes
(opening it for writing adds the table).
"""

import contextlib
import json
import math
import os
import sqlite3
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assocmem.config.errors import ConfigError
from assocmem.config.files import check_output_file

STATUSES = ("ok", "diverged", "failed")
BUSY_TIMEOUT_S = 120.0

SCHEMA_SQL = """
CREATE TABLE IF NOT EXISTS runs (
    hash TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    sweep TEXT NOT NULL,
    config TEXT NOT NULL,
    metrics TEXT,
    status TEXT NOT NULL CHECK (status IN ('ok', 'diverged', 'failed')),
    message TEXT,
    provenance TEXT NOT NULL,
    created REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS sweeps (
    name TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    spec TEXT NOT NULL,
    created REAL NOT NULL
);
"""
# the journals of runs in progress (assocmem.sweep.journal): one JSON value per (run, key)
PARTIAL_SQL = """
CREATE TABLE IF NOT EXISTS partial (
    hash TEXT NOT NULL,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    created REAL NOT NULL,
    PRIMARY KEY (hash, key)
)
"""
SCHEMA_SQL += PARTIAL_SQL

UPSERT_SQL = """
INSERT INTO runs (hash, kind, sweep, config, metrics, status, message, provenance, created)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (hash) DO UPDATE SET
    sweep = excluded.sweep, config = excluded.config, metrics = excluded.metrics,
    status = excluded.status, message = excluded.message, provenance = excluded.provenance,
    created = excluded.created
WHERE runs.status = 'failed'
"""
# a run whose final record is stored needs its journal no more (a failed one keeps it: a retry
# resumes from it)
FINISHED_SQL = """
DELETE FROM partial WHERE hash = ?
AND EXISTS (SELECT 1 FROM runs WHERE runs.hash = partial.hash AND runs.status != 'failed')
"""


def _finite(value: Any) -> Any:
    """Non-finite floats → None, so every stored document is strict JSON."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def to_json(value: Any) -> str:
    return json.dumps(_finite(value), sort_keys=True, separators=(",", ":"), allow_nan=False)


@dataclass
class RunRecord:
    """What the store keeps of one run."""

    key: str
    kind: str
    sweep: str
    config: dict[str, Any]
    metrics: dict[str, Any] | None
    status: str  # ok | diverged | failed
    message: str | None
    provenance: dict[str, Any]

    def __post_init__(self) -> None:
        assert self.status in STATUSES, self.status

    def row(self) -> tuple[Any, ...]:
        metrics = None if self.metrics is None else to_json(self.metrics)
        return (
            self.key,
            self.kind,
            self.sweep,
            to_json(self.config),
            metrics,
            self.status,
            self.message,
            to_json(self.provenance),
            time.time(),
        )


class Store:
    """A results database opened for writing (created if missing)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        check_writable(path)
        try:
            self.conn = sqlite3.connect(
                str(self.path), timeout=BUSY_TIMEOUT_S, isolation_level=None
            )
            self.conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
            self.conn.execute("PRAGMA journal_mode = WAL")
            self.conn.execute("PRAGMA synchronous = FULL")
            with self.transaction():
                for statement in SCHEMA_SQL.split(";"):
                    if statement.strip():
                        self.conn.execute(statement)
        except sqlite3.DatabaseError as err:
            raise ConfigError(
                "db", f"cannot use {str(path)!r} as a results database: {err}"
            ) from None

    def transaction(self) -> "Transaction":
        return Transaction(self.conn)

    def done_keys(self, *, retry_failed: bool = False) -> set[str]:
        """Hashes of the runs already recorded (``failed`` ones count unless retried)."""
        query = "SELECT hash FROM runs"
        if retry_failed:
            query += " WHERE status != 'failed'"
        return {row[0] for row in self.conn.execute(query)}

    def record_sweep(self, name: str, kind: str, spec: dict[str, Any]) -> None:
        with self.transaction():
            self.conn.execute(
                "INSERT OR IGNORE INTO sweeps (name, kind, spec, created) VALUES (?, ?, ?, ?)",
                (name, kind, to_json(spec), time.time()),
            )

    def write(
        self, records: Sequence[RunRecord], before_commit: Callable[[], None] | None = None
    ) -> int:
        """Insert one batch's records in one transaction; return how many rows changed."""
        with self.transaction():
            changed = self.upsert([record.row() for record in records])
            if before_commit is not None:
                before_commit()  # a test hook: a crash here must lose the whole batch
        return changed

    def upsert(self, rows: Sequence[tuple[Any, ...]]) -> int:
        """Inside a transaction: insert rows (:meth:`RunRecord.row`), delete the journals of the
        runs now finished; return how many rows of ``runs`` changed."""
        before = self.conn.total_changes
        self.conn.executemany(UPSERT_SQL, rows)
        changed = self.conn.total_changes - before
        self.conn.executemany(FINISHED_SQL, [(row[0],) for row in rows])
        return changed

    def carry_journals(self, entries: Sequence[tuple[str, str, str, float]]) -> int:
        """Inside a transaction: insert journal entries (hash, key, value, created) of the runs
        with neither a final record nor a journal here; return how many runs got one."""
        finished = {row[0] for row in self.conn.execute(
            "SELECT hash FROM runs WHERE status != 'failed'")}  # fmt: skip
        present = {row[0] for row in self.conn.execute("SELECT DISTINCT hash FROM partial")}
        skip = finished | present
        wanted = [entry for entry in entries if entry[0] not in skip]
        self.conn.executemany(
            "INSERT INTO partial (hash, key, value, created) VALUES (?, ?, ?, ?)", wanted
        )
        return len({entry[0] for entry in wanted})

    def count(self) -> int:
        return int(self.conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0])

    def close(self) -> None:
        # the last connection out leaves one file (no -wal/-shm) for read-only readers; with
        # other connections open the switch fails ("database is locked") and WAL stays
        with contextlib.suppress(sqlite3.DatabaseError):
            self.conn.execute("PRAGMA busy_timeout = 0")
            self.conn.execute("PRAGMA journal_mode = DELETE")
        self.conn.close()

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Transaction:
    """``BEGIN IMMEDIATE`` (take the write lock up front, so no deadlock upgrade) … COMMIT."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def __enter__(self) -> None:
        self.conn.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: object, *exc: object) -> None:
        self.conn.execute("ROLLBACK" if exc_type is not None else "COMMIT")


def _writable(path: Path) -> bool:
    """Whether SQLite could write ``path`` and its journal beside it."""
    return os.access(path, os.W_OK) and os.access(path.parent, os.W_OK | os.X_OK)


def readonly_uri(path: str | Path) -> str:
    """The URI a reader opens: ``mode=ro`` (SQLite writes nothing), plus ``immutable=1`` for
    a file that cannot be written and has no write-ahead log (no writer can change it; SQLite
    then needs no lock or shared-memory file, so a read-only folder works)."""
    path = Path(path).resolve()
    uri = path.as_uri() + "?mode=ro"
    wal = path.with_name(path.name + "-wal")
    if not _writable(path) and not wal.exists():
        uri += "&immutable=1"
    return uri


def open_readonly(path: str | Path, *, allow_empty: bool = False) -> sqlite3.Connection:
    """A read-only connection that writes nothing; a missing, foreign or unreadable file is a
    one-line :class:`ConfigError`. With ``allow_empty``, an SQLite file without any table is
    accepted too: another writer may have created it and not yet committed the schema."""
    name = repr(str(path))
    if Path(path).is_dir():
        raise ConfigError("db", f"{name} is a folder; give a results database file")
    if not Path(path).is_file():
        raise ConfigError("db", f"no results database at {name}")
    try:
        conn = sqlite3.connect(readonly_uri(path), uri=True, timeout=BUSY_TIMEOUT_S)
    except sqlite3.Error as err:
        raise ConfigError("db", f"cannot open {name}: {err}") from None
    try:
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
        if tables or not allow_empty:
            conn.execute("SELECT COUNT(*) FROM runs").fetchone()
    except sqlite3.DatabaseError as err:
        conn.close()
        raise ConfigError("db", f"{name} is not a results database: {err}") from None
    return conn


def check_writable(path: str | Path) -> None:
    """Refuse, before any work, a database path that cannot be created or written (without
    creating it): a folder, a read-only file, a missing or read-only folder."""
    check_output_file("db", path)
    if Path(path).exists() and Path(path).stat().st_size > 0:
        # an existing file must be a results database, or one that a concurrent writer has
        # just created (its journal mode set, its schema not yet committed)
        open_readonly(path, allow_empty=True).close()


def read_rows(path: str | Path, sweep: str | None = None) -> list[dict[str, Any]]:
    """Every stored run as a dict with its JSON documents decoded."""
    conn = open_readonly(path)
    try:
        query = (
            "SELECT hash, kind, sweep, config, metrics, status, message, provenance, created "
            "FROM runs"
        )
        args: tuple[Any, ...] = ()
        if sweep is not None:
            query += " WHERE sweep = ?"
            args = (sweep,)
        rows = conn.execute(query + " ORDER BY created, hash", args).fetchall()
    finally:
        conn.close()
    return [_decode(row) for row in rows]


def stored_values(path: str | Path, column: str) -> list[str]:
    """The distinct values of ``column`` (``"sweep"`` or ``"kind"``) over the stored runs."""
    if column not in ("sweep", "kind"):
        raise ValueError(f"stored_values: no column {column!r}")
    conn = open_readonly(path)
    try:
        found = conn.execute(f"SELECT DISTINCT {column} FROM runs ORDER BY {column}").fetchall()
    finally:
        conn.close()
    return [str(value) for (value,) in found]


def _decode(row: Iterable[Any]) -> dict[str, Any]:
    key, kind, sweep, config, metrics, status, message, provenance, created = row
    return {
        "hash": key,
        "kind": kind,
        "sweep": sweep,
        "config": json.loads(config),
        "metrics": None if metrics is None else json.loads(metrics),
        "status": status,
        "message": message,
        "provenance": json.loads(provenance),
        "created": created,
    }


def journal_rows(path: str | Path) -> list[tuple[str, str, str, float]]:
    """Every journal entry of a results database as stored, (hash, key, JSON value, created),
    read-only (none for a missing database or one written before journals existed)."""
    if not Path(path).exists():
        return []
    conn = open_readonly(path)
    try:
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
        if "partial" not in tables:
            return []
        query = "SELECT hash, key, value, created FROM partial ORDER BY hash, key"
        return [(run, key, value, created) for run, key, value, created in conn.execute(query)]
    finally:
        conn.close()


def read_journals(path: str | Path) -> dict[str, dict[str, Any]]:
    """Every journal entry of a results database, read-only: run hash → key → value (empty for
    a missing database, one written before journals existed, or one with no run in
    progress)."""
    journals: dict[str, dict[str, Any]] = {}
    for run_key, key, value, _ in journal_rows(path):
        journals.setdefault(run_key, {})[key] = json.loads(value)
    return journals


def done_keys_readonly(path: str | Path) -> set[str]:
    """The recorded hashes of a database, without creating it (empty if it does not exist)."""
    if not Path(path).exists():
        return set()
    conn = open_readonly(path)
    try:
        return {row[0] for row in conn.execute("SELECT hash FROM runs")}
    finally:
        conn.close()


@dataclass(frozen=True)
class Merged:
    """What :func:`merge` copied: runs, and the journals of runs still in progress."""

    runs: int
    journals: int


def merge(target: str | Path, sources: Sequence[str | Path]) -> Merged:
    """Copy every run of ``sources`` into ``target`` (same no-duplicate rules as a sweep), and
    the journals of the runs still in progress (:mod:`assocmem.sweep.journal`), so that a run
    interrupted where a source was written resumes where the target is.

    A journal is copied whole or not at all: only for a run that ``target`` has no final
    (``ok`` or ``diverged``) record of and no journal entry for; the first source holding one
    wins. So a resumed run never mixes the evaluations of two attempts.
    """
    for source in sources:
        open_readonly(source).close()  # every source is checked before the target is touched
    check_writable(target)
    added = carried = 0
    with Store(target) as store:
        for source in sources:
            rows = [
                (r["hash"], r["kind"], r["sweep"], to_json(r["config"]),
                 None if r["metrics"] is None else to_json(r["metrics"]), r["status"],
                 r["message"], to_json(r["provenance"]), r["created"])
                for r in read_rows(source)
            ]  # fmt: skip
            with store.transaction():
                added += store.upsert(rows)
        for source in sources:
            with store.transaction():
                carried += store.carry_journals(journal_rows(source))
    return Merged(added, carried)

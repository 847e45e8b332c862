"""Per-run journals: the partial results of a long run, kept so that a killed run resumes.

A sweep resumes run by run: a run's record is committed when its batch finishes. A run that
takes hours (one whole capacity search of the facts study: several evaluations of minutes
each) would lose all its finished parts when its process dies. A kind that sets
:attr:`~assocmem.sweep.kinds.base.RunKind.journaled` gets one :class:`Journal` per run in its
``execute(configs, trials, journals=...)``: a small mapping of JSON-able values by string key,
stored in the results database itself (table ``partial``, keyed by the run's hash and the
key). Each assignment is its own transaction, committed before it returns, so a kill at any
instant keeps every finished entry and no half entry; a later attempt at the same run (same
hash: same identity) reads them back, and no other run ever sees them.

Where the journal is written: by the process that computes the batch, which opens the
database by its absolute path (the sweep's driver in-process; a Dask worker on its own
connection). SQLite's locking makes the driver's commits and the workers' journal writes safe
on one machine; on a network file system, where SQLite locking is unreliable, prefer one
database per shard (as for ``--shard``). A worker that cannot see the file (a cluster without
a shared file system) gets journals that live in memory for that batch only: the run is
computed as before journals existed, nothing is created on the worker.

Cleanup: the store deletes a run's entries in the transaction that commits its final record
(``ok`` or ``diverged``, which are never replaced), so the table only holds the runs in
progress and cannot grow with the sweep; entries of a run recorded ``failed`` stay, so
``--retry-failed`` resumes it too. What a journal kept that the record needs (the facts
search's evaluations) is in the record's metrics.
"""

import contextlib
import json
import sqlite3
import time
from collections.abc import Iterator, MutableMapping, Sequence
from pathlib import Path
from typing import Any, Protocol, cast

from assocmem.sweep.kinds.base import Outcome, RunKind
from assocmem.sweep.store import (
    BUSY_TIMEOUT_S,
    PARTIAL_SQL,
    Transaction,
    read_journals,
    to_json,
)

# read_journals lives with the store's other readers; importable from here too


class Journal(MutableMapping[str, Any]):
    """The journal of one run: JSON-able values by string key, read once, written through.

    Parameters
    ----------
    conn : sqlite3.Connection or None
        An autocommit connection to the results database (``isolation_level=None``), or None
        for a journal kept in memory only.
    run_key : str
        The run's hash: the journal holds the entries stored under it.

    Notes
    -----
    Values are stored as strict JSON (:func:`~assocmem.sweep.store.to_json`, as records are):
    a non-finite float comes back as None, a tuple as a list.
    """

    def __init__(self, conn: sqlite3.Connection | None, run_key: str) -> None:
        self.conn = conn
        self.run_key = run_key
        self._entries: dict[str, Any] = {}
        if conn is not None:
            found = conn.execute("SELECT key, value FROM partial WHERE hash = ?", (run_key,))
            self._entries = {key: json.loads(value) for key, value in found}

    def __getitem__(self, key: str) -> Any:
        return self._entries[key]

    def __setitem__(self, key: str, value: Any) -> None:
        text = to_json(value)
        if self.conn is not None:
            with Transaction(self.conn):
                self.conn.execute(
                    "INSERT OR REPLACE INTO partial (hash, key, value, created) "
                    "VALUES (?, ?, ?, ?)",
                    (self.run_key, key, text, time.time()),
                )
        self._entries[key] = json.loads(text)  # what a resumed run will read

    def __delitem__(self, key: str) -> None:
        del self._entries[key]
        if self.conn is not None:
            with Transaction(self.conn):
                self.conn.execute(
                    "DELETE FROM partial WHERE hash = ? AND key = ?", (self.run_key, key)
                )

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._entries))

    def __len__(self) -> int:
        return len(self._entries)


@contextlib.contextmanager
def open_journals(db: str | Path | None, run_keys: Sequence[str]) -> Iterator[list[Journal]]:
    """One :class:`Journal` per run of ``run_keys`` on the results database ``db``.

    The database is opened on a connection of its own (closed on exit) and the ``partial``
    table created if missing (a database written before journals existed). Without ``db``, or
    where ``db`` is not an existing file (a Dask worker that does not share the driver's file
    system), the journals live in memory.
    """
    conn = None
    if db is not None and Path(db).is_file():
        conn = sqlite3.connect(str(db), timeout=BUSY_TIMEOUT_S, isolation_level=None)
    try:
        if conn is not None:
            conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
            conn.execute("PRAGMA synchronous = FULL")
            with Transaction(conn):
                conn.execute(PARTIAL_SQL)
        yield [Journal(conn, key) for key in run_keys]
    finally:
        if conn is not None:
            conn.close()


class _JournaledExecute(Protocol):
    """``execute`` of a kind with ``journaled`` set."""

    def __call__(
        self, configs: Sequence[Any], trials: Sequence[int | None], *, journals: list[Journal]
    ) -> list[Outcome]: ...


def execute_journaled(
    kind: RunKind,
    configs: Sequence[Any],
    trials: Sequence[int | None],
    run_keys: Sequence[str],
    db: str | Path | None,
) -> list[Outcome]:
    """``kind.execute(configs, trials, journals=...)`` with the journals of ``run_keys`` (the
    runs' hashes, in order) on the database ``db`` (see :func:`open_journals`)."""
    assert kind.journaled, kind.name
    execute = cast(_JournaledExecute, kind.execute)
    with open_journals(db, run_keys) as journals:
        return execute(configs, trials, journals=journals)


__all__ = ["Journal", "execute_journaled", "open_journals", "read_journals"]

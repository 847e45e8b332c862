"""The claims' tolerances: the ``[claims.ID]`` tables of the shipped specs, their history, and the
lock that holds each one as last locked.

A claim's table holds what passes (its tolerance: every key but the two below) and its history::

    [claims.NT-3]
    tolerance_since = "2026-11-24"   # the date the values below were set
    min_noise = 0.3
    z = 3.0
    ...
    [[claims.NT-3.revisions]]        # one per change, oldest first
    date = "2026-11-24"
    old = {min_noise = 0.3, z = 2.0, rel = 0.0, min_fraction = 1.0}  # the values before
    reason = "why the tolerance changed"

A claim that turned out to test the code rather than the science leaves the claims for a test;
its table becomes a ``[retired.ID]`` table (``date``, ``old``: its tolerance as last locked,
``reason``, ``test``: the pytest node that now checks the property), so the lock's entry may go::

    [retired.hierarchy-1]
    date = "2026-11-27"
    old = {atol = 1e-12}
    reason = "an identity of the code, not a statistic"
    test = "tests/test_hierarchy.py::test_stored_records_decompose_exactly"

``specs/claims.lock.json`` holds every claim's tolerance as last locked. :func:`lock_problems`
reports a tolerance that differs from the lock unless its last revision's ``old`` equals the
locked values (a change, recorded); only :func:`write_lock` (``assocmem claims --lock``) writes
the lock. A test keeps the specs and the lock in step, so a tolerance cannot move silently.
"""

import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assocmem.config.errors import ConfigError
from assocmem.config.files import load_toml
from assocmem.sweep.spec import shipped_specs

__all__ = [
    "LOCK_NAME",
    "Retired",
    "Revision",
    "Tolerance",
    "claim_tolerance",
    "lock_path",
    "lock_problems",
    "read_lock",
    "retired_claims",
    "tolerance_tables",
    "tolerances",
    "write_lock",
]
LOCK_NAME = "claims.lock.json"
HISTORY = ("tolerance_since", "revisions")  # the keys of a claim's table that are not its tolerance


@dataclass(frozen=True)
class Revision:
    """One change of a claim's tolerance: when, the values before, and why."""

    date: str
    old: dict[str, Any]
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"date": self.date, "old": dict(self.old), "reason": self.reason}


@dataclass(frozen=True)
class Tolerance:
    """A claim's tolerance as its spec states it.

    Attributes
    ----------
    claim_id : the claim ("1", "NT-3", …).
    spec : the shipped spec holding its table ("figure4", "noise-threshold", …).
    values : what passes (the table less ``tolerance_since`` and ``revisions``).
    since : the date (ISO) the values were set.
    revisions : its changes, oldest first.
    """

    claim_id: str
    spec: str
    values: dict[str, Any]
    since: str
    revisions: tuple[Revision, ...]


def _tolerance(claim_id: str, spec: str, table: Mapping[str, Any]) -> Tolerance:
    where = f"{spec}.toml [claims.{claim_id}]"
    since = table.get("tolerance_since")
    if not isinstance(since, str):
        raise ValueError(f"{where}: tolerance_since must be an ISO date string, got {since!r}")
    revisions = []
    for i, raw in enumerate(table.get("revisions", [])):
        if set(raw) != {"date", "old", "reason"} or not isinstance(raw["old"], dict):
            raise ValueError(f"{where}: revisions[{i}] needs date, old (a table) and reason")
        revisions.append(Revision(str(raw["date"]), dict(raw["old"]), str(raw["reason"])))
    values = {k: v for k, v in table.items() if k not in HISTORY}
    return Tolerance(claim_id, spec, values, since, tuple(revisions))


@functools.cache
def tolerance_tables() -> dict[str, Tolerance]:
    """Every claim's tolerance in the shipped specs, by claim id.

    Raises
    ------
    ValueError
        If two specs hold a table for the same claim, or a table lacks its history.
    """
    found: dict[str, Tolerance] = {}
    for spec, path in sorted(shipped_specs().items()):
        for claim_id, table in load_toml(path).get("claims", {}).items():
            if claim_id in found:
                raise ValueError(f"claim {claim_id!r}: tables in {found[claim_id].spec} and {spec}")
            found[claim_id] = _tolerance(claim_id, spec, table)
    return found


@dataclass(frozen=True)
class Retired:
    """A claim moved to a test: when, its tolerance as last locked, why, and the test's node id."""

    claim_id: str
    spec: str
    date: str
    old: dict[str, Any]
    reason: str
    test: str


@functools.cache
def retired_claims() -> dict[str, Retired]:
    """Every ``[retired.ID]`` table of the shipped specs, by claim id.

    Raises
    ------
    ValueError
        If a table lacks one of date, old (a table), reason and test.
    """
    found = {}
    for spec, path in sorted(shipped_specs().items()):
        for claim_id, raw in load_toml(path).get("retired", {}).items():
            if set(raw) != {"date", "old", "reason", "test"} or not isinstance(raw["old"], dict):
                raise ValueError(f"{spec}.toml [retired.{claim_id}]: needs date, old, reason, test")
            found[claim_id] = Retired(
                claim_id, spec, str(raw["date"]), dict(raw["old"]), str(raw["reason"]), raw["test"]
            )
    return found


def claim_tolerance(claim_id: str) -> Tolerance:
    """The tolerance of ``claim_id`` as its spec states it (KeyError if no spec has one)."""
    return tolerance_tables()[claim_id]


def tolerances(claim_id: str) -> dict[str, Any]:
    """What passes for ``claim_id``: its ``[claims.ID]`` table less its history (a copy). The one
    reader of the claims' tolerances."""
    return dict(claim_tolerance(claim_id).values)


def lock_path() -> Path:
    """``specs/claims.lock.json`` of the installed package."""
    return shipped_specs()["figure1"].parent / LOCK_NAME  # assocmem/specs, beside the paper's


def read_lock(path: Path | None = None) -> dict[str, dict[str, Any]]:
    """The lock: claim id → {"tolerance": values, "since": date} (empty if there is none)."""
    path = path or lock_path()
    if not path.exists():
        return {}
    locked: dict[str, dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))
    return locked


def lock_problems(
    tables: Mapping[str, Tolerance] | None = None,
    lock: Mapping[str, Any] | None = None,
    *,
    unlocked: bool = True,
) -> list[str]:
    """One line per claim whose tolerance breaks the lock: changed without a revision whose
    ``old`` is the locked tolerance, a last revision not dated ``tolerance_since``, a lock entry
    without a table (unless retired with the locked value as its ``old``), a retired claim that
    still has a table, and (``unlocked``) a table not yet locked. Default: the shipped specs and
    lock."""
    tables = tolerance_tables() if tables is None else tables
    lock = read_lock() if lock is None else lock
    retired = retired_claims()
    problems = []
    for cid in sorted(set(lock) - set(tables)):
        if cid not in retired:
            problems.append(f"{cid}: locked, but no spec has its table")
        elif retired[cid].old != lock[cid]["tolerance"]:
            problems.append(
                f"{cid}: retired, but its old {retired[cid].old} is not the locked value"
            )
    problems += [
        f"{cid}: retired, and still has a table" for cid in sorted(set(retired) & set(tables))
    ]
    for cid, tol in sorted(tables.items()):
        last = tol.revisions[-1] if tol.revisions else None
        if last is not None and last.date != tol.since:
            problems.append(f"{cid}: tolerance_since {tol.since} is not its last revision's date")
        if cid not in lock:
            problems += [f"{cid}: not locked (run `assocmem claims --lock`)"] if unlocked else []
        elif tol.values != lock[cid]["tolerance"] and (
            last is None or last.old != lock[cid]["tolerance"]
        ):
            problems.append(
                f"{cid}: tolerance {tol.values} differs from the locked "
                f"{lock[cid]['tolerance']} and its last revision's old is not the locked value"
            )
    return problems


def write_lock(path: Path | None = None) -> Path:
    """Lock every claim's tolerance as its spec states it now (``assocmem claims --lock``),
    atomically; the lock's path.

    Raises
    ------
    ConfigError
        If a tolerance changed without its revision (:func:`lock_problems`): nothing written.
    """
    path = path or lock_path()
    problems = lock_problems(lock=read_lock(path), unlocked=False)
    if problems:
        raise ConfigError("claims", "; ".join(problems))
    lock = {
        cid: {"tolerance": tol.values, "since": tol.since}
        for cid, tol in sorted(tolerance_tables().items())
    }
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(lock, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    tmp.replace(path)
    return path

"""What a kind of run must say for a sweep to plan, execute, store and read it back.

A :class:`RunKind` is stateless: one instance per kind sits in the registry
(:mod:`assocmem.sweep.kinds`). The sweep machinery (spec, plan, execute, results) only ever calls
these methods; it never looks at a kind's name beyond finding it in the registry.
"""

import math
from abc import ABC, abstractmethod
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import fields
from typing import Any, ClassVar

from assocmem.config.errors import ConfigError, unknown_name
from assocmem.sweep.identity import SCHEMA, canonical_json, config_values

Outcome = tuple[dict[str, Any] | None, str]  # a run's metrics document and its status


class RunKind(ABC):
    """One kind of run: a config type, how its runs are identified, batched, computed and read.

    A *point* is one validated config (one cell of a spec's grid, one seed); a *run* is one
    stored record: a point and, for kinds with :attr:`has_trials`, one trial index.
    """

    name: ClassVar[str]  # the spec's ``kind`` and the database's ``kind`` column
    # Fields that change how a run is computed, not what it computes: left out of its hash.
    operational: ClassVar[tuple[str, ...]] = ("device",)
    # Fields added after the kind's records were first stored: left out of the hash at these
    # defaults, so runs stored before the field existed keep their identity.
    added_fields: ClassVar[Mapping[str, Any]] = {}
    # Fields renamed after the kind's records were first stored: field → the old name, which
    # the hash keeps (a database written before resumes) and stored records may hold.
    renamed: ClassVar[Mapping[str, str]] = {}
    has_trials: ClassVar[bool] = False  # a spec's top-level ``trials`` gives runs per point
    # Long runs that keep partial results: ``execute`` is called with a keyword ``journals``,
    # one mapping per run (:class:`assocmem.sweep.journal.Journal`) that survives a kill.
    journaled: ClassVar[bool] = False
    default_runs_per_batch: ClassVar[int] = 1

    @abstractmethod
    def build(self, values: Mapping[str, Any]) -> Any:
        """The validated point config of plain TOML ``values`` (a frozen dataclass).

        Raises
        ------
        ConfigError
            Naming the field at fault (``err.field``), so a spec can place the problem.
        """

    @abstractmethod
    def execute(self, configs: Sequence[Any], trials: Sequence[int | None]) -> list[Outcome]:
        """Compute one batch: ``configs[i]`` at trial ``trials[i]`` (None without trials).

        Returns one ``(metrics, status)`` per run, in order; status is ``ok`` or ``diverged``
        (a non-finite output). Raising marks every run of the batch ``failed``.

        A kind with :attr:`journaled` takes a third, keyword argument ``journals``: one
        ``MutableMapping[str, Any]`` per run (JSON-able values; entries set by an earlier,
        interrupted attempt at the same run are there), or None when called without a
        database; see :mod:`assocmem.sweep.journal`.
        """

    @abstractmethod
    def rows(self, row: Mapping[str, Any]) -> list[dict[str, Any]]:
        """The tidy result rows of one stored run (:func:`assocmem.sweep.store.read_rows`)."""

    @abstractmethod
    def work(self, config: Any) -> float:
        """A rough count of multiply-adds for one run (for the dry run's estimate only)."""

    def curves(self, row: Mapping[str, Any]) -> list[dict[str, Any]]:
        """The error along training of one stored run, one row per step (none by default)."""
        return []

    def trials(self, n_trials: int) -> list[int | None]:
        r"""The trial indices of one point: :math:`0, \dots, n_{\mathrm{trials}} - 1`, or one run
        without trials."""
        return list(range(n_trials)) if self.has_trials else [None]

    def identity(self, config: Any, trial: int | None) -> dict[str, Any]:
        """What a run's hash is taken of: schema, kind, non-operational fields, trial."""
        values = config_values(config)
        values = {self.renamed.get(name, name): value for name, value in values.items()}
        for name in self.operational:
            values.pop(name, None)
        for name, default in self.added_fields.items():
            if name in values and values[name] == default:
                values.pop(name)
        identity: dict[str, Any] = {"schema": SCHEMA, "kind": self.name, "config": values}
        if trial is not None:
            identity["trial"] = trial
        return identity

    def record(self, config: Any, trial: int | None) -> dict[str, Any]:
        """The config as stored with a run (JSON-ready), with its trial when it has one."""
        values = config_values(config)
        if trial is not None:
            values["trial"] = trial
        return values

    def group_key(self, config: Any) -> Hashable:
        """Runs with equal keys share one batch (default: the same point)."""
        return canonical_json(config_values(config))

    def batch_limit(self, config: Any, runs_per_batch: int | None) -> int:
        """The most runs of this point's group computed together."""
        return runs_per_batch or self.default_runs_per_batch

    def device(self, config: Any) -> str:
        """The device a run computes on (for provenance)."""
        return str(getattr(config, "device", "cpu"))


def config_fields(
    cls: type, values: Mapping[str, Any], tuples: Sequence[str] = (), what: str = "a list"
) -> dict[str, Any]:
    """Plain TOML values for the config dataclass ``cls``: ``trials`` belongs to the sweep, an
    unknown key is refused (one ConfigError naming it), the ``tuples`` fields become tuples."""
    if "trials" in values:
        raise ConfigError("trials", "set trials at the top level of a sweep spec")
    allowed = [f.name for f in fields(cls) if f.init]
    unknown = sorted(set(values) - set(allowed))
    if unknown:
        raise unknown_name(unknown[0], "key", unknown[0], allowed)
    clean = dict(values)
    for key in tuples:
        if key in clean:
            if not isinstance(clean[key], list | tuple):
                raise ConfigError(key, f"must be {what}, got {clean[key]!r}")
            clean[key] = tuple(clean[key])
    return clean


def ints_as_floats(clean: dict[str, Any], keys: Sequence[str]) -> dict[str, Any]:
    """``clean`` with the integers of ``keys`` as floats (not bools): 2 and 2.0 are one point,
    one run hash."""
    for key in keys:
        if isinstance(clean.get(key), int) and not isinstance(clean[key], bool):
            clean[key] = float(clean[key])
    return clean


def hashable(value: Any) -> Any:
    """Lists as tuples, so config columns of a DataFrame can be grouped on."""
    return tuple(hashable(v) for v in value) if isinstance(value, list) else value


def as_float(value: Any) -> float:
    """A stored number, NaN for JSON null (a non-finite value) or a missing one."""
    return math.nan if value is None else float(value)


def base_row(row: Mapping[str, Any]) -> dict[str, Any]:
    """The bookkeeping columns every result row of a stored run starts with."""
    prov = row["provenance"]
    return {
        "hash": row["hash"],
        "sweep": row["sweep"],
        "status": row["status"],
        "message": row["message"],
        "wall_seconds": prov.get("wall_seconds"),
        "host": prov.get("host"),
        "git": prov.get("git"),
        "created": row["created"],
    }


def config_columns(
    row: Mapping[str, Any], skip: Sequence[str] = (), renamed: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """A stored run's config fields as DataFrame cells (lists as tuples), less ``skip``; a
    field stored under its old name (``renamed``: field → old name) under its field's."""
    current = {old: new for new, old in (renamed or {}).items()}
    return {current.get(k, k): hashable(v) for k, v in row["config"].items() if k not in skip}

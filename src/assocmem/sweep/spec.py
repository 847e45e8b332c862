"""Sweep specs: a TOML grid of runs over one base configuration, validated in full up front.

A spec file::

    name = "figure4"              # names the sweep in the results database
    kind = "closed_form"          # a run kind: "closed_form" or "train" (sweep/kinds)
    seeds = 1                     # a count k (seeds 0..k-1) or a list of seeds
    trials = 100                  # kinds with trials only: trial indices 0..trials-1 per point
    runs_per_batch = 10           # optional: at most this many runs per batch

    [base]                        # fields of the config, shared by every run
    n_inputs = 1000
    dims = ["log:10:1000:20"]

    [axes]                        # their product: each value makes one point
    alpha = [1.5, 2.0]

    [zip]                         # equal-length lists varied together (one joint axis)
    lr = [0.1, 1.0]
    batch_size = [16, 64]

    [claims.ID]                   # optional: the tolerances of a study's judged claims,
    tolerance = 0.1               # fixed before the runs (read by the experiment, not the sweep)

Every problem (unknown keys, wrong types, impossible values, impossible combinations) is
collected with its location (``axes.dims[2]``, ``base.alpha``) and reported at once, as one
line, in a :class:`SpecError` (a :class:`ConfigError`, so the CLI exits with code 2).
"""

import contextlib
import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from importlib import resources
from pathlib import Path
from typing import Any

from assocmem.closed_form.config import ClosedFormConfig
from assocmem.config.checks import is_int
from assocmem.config.errors import ConfigError, unknown_name
from assocmem.config.files import load_toml
from assocmem.config.memory import DEFAULT_MEMORY_GB, check_budget
from assocmem.sweep.kinds import RUN_KINDS, RunKind, get_kind
from assocmem.sweep.kinds.closed_form import build_closed_form
from assocmem.sweep.kinds.train import build_train

__all__ = [
    "SpecError",
    "SweepSpec",
    "build_closed_form",
    "build_train",
    "check_spec_memory",
    "load_spec",
    "parse_spec",
]

TOP_KEYS = (
    "name",
    "description",
    "kind",
    "seeds",
    "trials",
    "runs_per_batch",
    "base",
    "axes",
    "zip",
    "claims",
    "retired",  # claims moved to tests (read by assocmem.experiments.tolerances)
)
MAX_SHOWN = 8  # problems listed in the one-line error before "… and K more"
SEEDS_MAX = 100_000
Config = Any  # a point config: the frozen dataclass its run kind builds


class SpecError(ConfigError):
    """Every problem of a spec, joined into one line: ``SOURCE: K problems: loc: msg | …``."""

    def __init__(self, source: str, problems: Sequence[str]) -> None:
        self.problems = list(problems)
        shown = self.problems[:MAX_SHOWN]
        more = len(self.problems) - len(shown)
        text = " | ".join(shown) + (f" | … and {more} more" if more else "")
        count = "1 problem" if len(self.problems) == 1 else f"{len(self.problems)} problems"
        super().__init__(source, f"{count}: {text}")


@dataclass(frozen=True)
class SweepSpec:
    """A validated sweep: ``points()`` × ``seeds`` × ``range(trials)`` is its list of runs.

    Build one with :func:`load_spec` (a TOML file or a shipped spec by name) or
    :func:`parse_spec` (a mapping); run it with :func:`run_sweep`.

    Attributes
    ----------
    name : str
        The sweep's name in the results database.
    kind : str
        A registered run kind (``"closed_form"``, ``"train"``, ...).
    base : dict
        The config values every run shares.
    axes : dict of str to list
        Each axis's values: the points are their product.
    zipped : dict of str to list
        Values that vary together (one point per index).
    seeds : list of int or None
        The seeds of every point (None: the seed of the base config).
    trials : int
        Trial indices per point for kinds with trials; else 1.
    runs_per_batch : int or None
        The most runs per batch (None: the kind's default).
    source, description : str
    claims : dict of str to dict
        The ``[claims.ID]`` tables: what a study's judged claim ``ID`` accepts (its tolerances),
        fixed in the spec before the runs. Not part of any run's identity.
    """

    name: str
    kind: str  # a registered run kind (:mod:`assocmem.sweep.kinds`)
    base: dict[str, Any]
    axes: dict[str, list[Any]]
    zipped: dict[str, list[Any]]
    seeds: list[int] | None  # None: the seed of the base config
    trials: int  # trial indices per point for kinds with trials; else 1
    runs_per_batch: int | None
    source: str = ""
    description: str = ""
    claims: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def run_kind(self) -> RunKind:
        return get_kind(self.kind)

    def point_values(self) -> list[dict[str, Any]]:
        """The raw field values of every point: axes product × zipped rows × seeds."""
        names = list(self.axes)
        zip_names = list(self.zipped)
        zip_rows = list(zip(*self.zipped.values(), strict=True)) if zip_names else [()]
        seeds: list[int | None] = list(self.seeds) if self.seeds is not None else [None]
        out = []
        for combo in itertools.product(*(self.axes[n] for n in names)):
            for row in zip_rows:
                for seed in seeds:
                    values = {**self.base, **dict(zip(names, combo, strict=True))}
                    values.update(zip(zip_names, row, strict=True))
                    if seed is not None:
                        values["seed"] = seed
                    out.append(values)
        return out

    def points(self) -> list[Config]:
        """Every point's validated config; values valid one at a time may still clash (e.g.
        batch_size > n_samples): all such points are reported in one :class:`SpecError`."""
        build = self.run_kind.build
        varied = [*self.axes, *self.zipped]
        configs, problems = [], []
        for values in self.point_values():
            try:
                configs.append(build(values))
            except ConfigError as err:
                point = ", ".join(f"{k}={values[k]!r}" for k in varied)
                problems.append(f"point ({point}): {err}")
        if problems:
            raise SpecError(self.source or self.name, problems)
        return configs

    @property
    def n_points(self) -> int:
        count = math.prod(len(v) for v in self.axes.values())
        count *= len(next(iter(self.zipped.values()))) if self.zipped else 1
        return count * (len(self.seeds) if self.seeds is not None else 1)

    @property
    def n_runs(self) -> int:
        return self.n_points * self.trials


class _Problems:
    def __init__(self) -> None:
        self.items: list[str] = []

    def add(self, location: str, message: str) -> None:
        self.items.append(f"{location}: {message}")


def _parse_seeds(value: Any, problems: _Problems) -> list[int] | None:
    if value is None:
        return None
    if is_int(value) and 1 <= value <= SEEDS_MAX:
        return list(range(value))
    if isinstance(value, list) and value:
        bad = [i for i, s in enumerate(value) if not (is_int(s) and s >= 0)]
        for i in bad:
            problems.add(f"seeds[{i}]", f"must be an integer ≥ 0, got {value[i]!r}")
        if not bad and len(set(value)) != len(value):
            problems.add("seeds", "seeds must be distinct")
        return None if bad else list(value)
    problems.add(
        "seeds", f"must be a count 1…{SEEDS_MAX} or a non-empty list of integers, got {value!r}"
    )
    return None


def _check_value(
    build: Callable[[Mapping[str, Any]], Config],
    base: dict[str, Any],
    key: str,
    value: Any,
    location: str,
    problems: _Problems,
) -> None:
    """Build ``base`` with ``key = value``; report a problem with that key at ``location``."""
    try:
        build({**base, key: value})
    except ConfigError as err:
        where = location if err.field in (key, "config") else f"{location} ({err.field})"
        problems.add(where, err.message)


def _keys(table: Any) -> list[str]:
    return list(table) if isinstance(table, dict) else []


def _check_table(
    name: str,
    table: Any,
    build: Callable[[Mapping[str, Any]], Config],
    base: dict[str, Any],
    problems: _Problems,
    check_values: bool,
) -> dict[str, list[Any]]:
    """Check an ``[axes]`` or ``[zip]`` table: lists of values, each valid on the base."""
    if table is None:
        return {}
    if not isinstance(table, dict):
        problems.add(name, f"must be a table of lists, got {table!r}")
        return {}
    out: dict[str, list[Any]] = {}
    for key, values in table.items():
        where = f"{name}.{key}"
        if key in base:
            problems.add(where, "also set in [base]; set it in one place")
        if not isinstance(values, list) or not values:
            problems.add(where, f"must be a non-empty list of values, got {values!r}")
            continue
        for i, value in enumerate(values if check_values else []):
            _check_value(build, base, key, value, f"{where}[{i}]", problems)
        out[key] = values
    return out


def _check_base(kind: RunKind, raw: Mapping[str, Any], problems: _Problems) -> dict[str, Any]:
    """The ``[base]`` table, each of its bad fields reported.

    Every bad field is reported: a field the config rejects is set aside and the rest is built
    again, until it builds or a rejection names no field of the table still there (a varied
    field, whose value may be what makes the base valid, is not reported here).
    """
    base = raw.get("base", {})
    if not isinstance(base, dict):
        problems.add("base", f"must be a table of config fields, got {base!r}")
        return {}
    varied = {*_keys(raw.get("axes")), *_keys(raw.get("zip"))}
    left = dict(base)
    while True:
        try:
            kind.build(left)
            break
        except ConfigError as err:
            if err.field in varied or (err.field in base and err.field not in left):
                break  # a varied field, or a field already reported: nothing new to say
            problems.add(f"base.{err.field}", err.message)
            if err.field not in left:
                break  # not one field of the table (e.g. a combination)
            del left[err.field]
    return dict(base)


def _check_trials(kind: RunKind, raw: Mapping[str, Any], problems: _Problems) -> int:
    trials = raw.get("trials", 1)
    if not kind.has_trials and "trials" in raw:
        with_trials = ", ".join(name for name, k in RUN_KINDS.items() if k.has_trials)
        problems.add("trials", f"only {with_trials} sweeps have trials; use seeds")
    elif not (is_int(trials) and 1 <= trials <= SEEDS_MAX):
        problems.add("trials", f"must be an integer in 1…{SEEDS_MAX}, got {trials!r}")
    return trials if is_int(trials) and trials >= 1 else 1


def _unknown_top_keys(keys: Sequence[str], stem: str) -> str:
    """The message for top-level keys a sweep spec does not have, said once: a closed-form
    config (its fields at the top) is pointed to ``closed-form --config`` and to the shipped
    spec of its name, if any."""
    allowed = f"allowed: {', '.join(TOP_KEYS)}"
    if set(keys) <= {f.name for f in fields(ClosedFormConfig)}:
        shipped = (
            f"the shipped spec: `assocmem sweep run {stem}`"
            if stem in shipped_specs()
            else "shipped specs: `assocmem sweep specs`"
        )
        return (f"unknown keys; this looks like a closed-form config: run it with `assocmem "
                f"closed-form --config FILE`, or {shipped} (a sweep spec puts them under "
                f"[base]); {allowed}")  # fmt: skip
    if len(keys) == 1:
        return unknown_name(keys[0], "key", keys[0], TOP_KEYS).message
    return f"unknown keys; {allowed}"


def _check_named(raw: Mapping[str, Any], source: str, problems: _Problems) -> tuple[str, str]:
    """The top-level keys, the sweep's name and description."""
    unknown = [str(key) for key in raw if key not in TOP_KEYS]
    if unknown:
        problems.add(", ".join(unknown), _unknown_top_keys(unknown, Path(source).stem))
    name = raw.get("name", Path(source).stem)
    if not isinstance(name, str) or not name.strip():
        problems.add("name", f"must be a non-empty string, got {name!r}")
    description = raw.get("description", "")
    if not isinstance(description, str):
        problems.add("description", "must be a string")
    return str(name), str(description)


def _check_claims(value: Any, problems: _Problems) -> dict[str, dict[str, Any]]:
    """``[claims.ID]`` tables of numbers, strings or booleans, or lists of them (a claim's
    tolerance), and the tolerance's history ``revisions`` (checked where the tolerances are
    read: :mod:`assocmem.experiments.tolerances`)."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        problems.add("claims", "must be a table of [claims.ID] tables")
        return {}
    out: dict[str, dict[str, Any]] = {}
    for claim, table in value.items():
        if not isinstance(table, Mapping):
            problems.add(f"claims.{claim}", "must be a table (e.g. tolerance = 0.1)")
            continue
        for key, item in table.items():
            items = item if isinstance(item, list) else [item]
            if key != "revisions" and not all(
                isinstance(x, int | float | str | bool) for x in items
            ):
                problems.add(
                    f"claims.{claim}.{key}",
                    "must be a number, string or boolean, or a list of them",
                )
        out[str(claim)] = dict(table)
    return out


def _check_zip(axes: dict[str, Any], zipped: dict[str, list[Any]], problems: _Problems) -> None:
    for key in set(axes) & set(zipped):
        problems.add(f"zip.{key}", "also an axis in [axes]; vary it in one place")
    lengths = {len(v) for v in zipped.values()}
    if len(lengths) > 1:
        sizes = ", ".join(f"{k} has {len(v)}" for k, v in zipped.items())
        problems.add("zip", f"lists must have equal lengths ({sizes})")


def parse_spec(raw: Mapping[str, Any], source: str = "spec") -> SweepSpec:
    """Validate a sweep spec given as a mapping (the TOML layout).

    Parameters
    ----------
    raw : mapping
        Keys ``name``, ``kind``, ``base``, ``axes``, and optionally ``description``, ``seeds``,
        ``trials``, ``runs_per_batch``, ``zip``, ``claims``.
    source : str, default "spec"
        Where it came from, for messages.

    Returns
    -------
    SweepSpec

    Raises
    ------
    SpecError
        A :class:`ConfigError` listing every problem found, one per line.
    """
    problems = _Problems()
    name, description = _check_named(raw, source, problems)
    kind_name = raw.get("kind")
    if isinstance(kind_name, str) and kind_name not in RUN_KINDS:
        with contextlib.suppress(ConfigError):
            get_kind(kind_name)  # a study's kind: registered when its module is imported
    if not isinstance(kind_name, str) or kind_name not in RUN_KINDS:
        problems.add("kind", f"must be one of {', '.join(RUN_KINDS)}, got {kind_name!r}")
        raise SpecError(source, problems.items)
    kind = RUN_KINDS[kind_name]
    base = _check_base(kind, raw, problems)
    base_ok = not problems.items  # values are checked one by one on a valid base only
    axes = _check_table("axes", raw.get("axes"), kind.build, base, problems, base_ok)
    zipped = _check_table("zip", raw.get("zip"), kind.build, base, problems, base_ok)
    _check_zip(axes, zipped, problems)
    seeds = _parse_seeds(raw.get("seeds"), problems)
    if "seeds" in raw and ("seed" in base or "seed" in axes or "seed" in zipped):
        problems.add("seeds", "seed is also set in base/axes/zip; give the seeds in one place")
    trials = _check_trials(kind, raw, problems)
    claims = _check_claims(raw.get("claims"), problems)
    runs_per_batch = raw.get("runs_per_batch")
    if runs_per_batch is not None and not (is_int(runs_per_batch) and runs_per_batch >= 1):
        problems.add("runs_per_batch", f"must be an integer ≥ 1, got {runs_per_batch!r}")
    if problems.items:
        raise SpecError(source, problems.items)
    return SweepSpec(
        name=name,
        kind=kind_name,
        base=base,
        axes=axes,
        zipped=zipped,
        seeds=seeds,
        trials=trials,
        runs_per_batch=runs_per_batch,
        source=source,
        description=description,
        claims=claims,
    )


RUN_BYTES = 4096  # one planned run held in memory: its config, identity, batch and record


def check_spec_memory(spec: SweepSpec, memory_gb: float = DEFAULT_MEMORY_GB) -> None:
    """Refuse, before its runs are built, a sweep whose plan alone (``RUN_BYTES`` per run)
    exceeds ``memory_gb``; each batch's own working set is bounded by its run kind."""
    check_budget(
        spec.n_runs * RUN_BYTES,
        memory_gb,
        f"planning the {spec.n_runs} runs of sweep {spec.name!r}",
        "lower seeds, trials or axes",
    )


def shipped_specs() -> dict[str, Path]:
    """The specs shipped with the package, by name (file stem): ``assocmem/specs/*.toml`` and
    each study folder's ``assocmem/studies/*/*.toml``."""
    root = resources.files("assocmem")
    folders = [root / "specs"]
    studies = root / "studies"
    if studies.is_dir():
        folders += [entry for entry in studies.iterdir() if entry.is_dir()]
    return {
        Path(str(entry)).stem: Path(str(entry))
        for folder in folders
        for entry in folder.iterdir()
        if str(entry).endswith(".toml")
    }


def resolve_spec_path(spec: str) -> Path:
    """A path to a spec file, or the name of a shipped spec (e.g. ``figure4``)."""
    path = Path(spec)
    if path.exists() or path.suffix == ".toml":
        return path
    shipped = shipped_specs()
    if spec in shipped:
        return shipped[spec]
    names = ", ".join(sorted(shipped))
    raise ConfigError(
        "spec", f"no file {spec!r} and no shipped spec of that name; shipped: {names}"
    )


def load_spec(spec: str | Path) -> SweepSpec:
    """Read and validate a sweep spec file, or a shipped spec by name (e.g. ``"figure4"``).

    Parameters
    ----------
    spec : str or pathlib.Path
        A TOML file, or the name of a spec shipped in ``assocmem/specs``.

    Returns
    -------
    SweepSpec
        Validated; combinations of values are checked when its points are built, before
        anything runs.

    Raises
    ------
    ConfigError
        For a missing file, bad TOML or an invalid spec (:func:`parse_spec`).

    Notes
    -----
    The shipped specs hold the settings of the figures of Cabannes et al. (2024); see the docs:
    science/figures.md.
    """
    path = resolve_spec_path(str(spec))
    return parse_spec(load_toml(path, field="spec"), source=str(path))

"""The checks of a sweep spec's tables, for :func:`assocmem.sweep.spec.parse_spec`.

Each check reports every problem it finds into one :class:`Problems` list, with its location
(``axes.dims[2]``, ``base.alpha``), so that a spec's problems are all reported at once.
"""

from collections.abc import Callable, Mapping
from typing import Any

from assocmem.config.checks import is_int
from assocmem.config.errors import ConfigError
from assocmem.sweep.kinds import RunKind, all_kinds

SEEDS_MAX = 100_000


class Problems:
    """The problems found so far, each as ``"location: message"``."""

    def __init__(self) -> None:
        self.items: list[str] = []

    def add(self, location: str, message: str) -> None:
        """Record one problem at ``location``."""
        self.items.append(f"{location}: {message}")


def parse_seeds(value: Any, problems: Problems) -> list[int] | None:
    """The ``seeds`` key as a list of seeds (a count k means 0..k-1); None if absent or bad."""
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
    build: Callable[[Mapping[str, Any]], Any],
    base: dict[str, Any],
    key: str,
    value: Any,
    location: str,
    problems: Problems,
) -> None:
    """Build ``base`` with ``key = value``; report a problem with that key at ``location``."""
    try:
        build({**base, key: value})
    except ConfigError as err:
        where = location if err.field in (key, "config") else f"{location} ({err.field})"
        problems.add(where, err.message)


def _keys(table: Any) -> list[str]:
    return list(table) if isinstance(table, dict) else []


def check_table(
    name: str,
    table: Any,
    build: Callable[[Mapping[str, Any]], Any],
    base: dict[str, Any],
    problems: Problems,
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


def check_base(kind: RunKind, raw: Mapping[str, Any], problems: Problems) -> dict[str, Any]:
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


def check_trials(kind: RunKind, raw: Mapping[str, Any], problems: Problems) -> int:
    """The ``trials`` key (kinds with trials only), 1 when absent or bad."""
    trials = raw.get("trials", 1)
    if not kind.has_trials and "trials" in raw:
        with_trials = ", ".join(name for name, k in all_kinds().items() if k.has_trials)
        problems.add("trials", f"only {with_trials} sweeps have trials; use seeds")
    elif not (is_int(trials) and 1 <= trials <= SEEDS_MAX):
        problems.add("trials", f"must be an integer in 1…{SEEDS_MAX}, got {trials!r}")
    return trials if is_int(trials) and trials >= 1 else 1


def check_claims(value: Any, problems: Problems) -> dict[str, dict[str, Any]]:
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


def check_zip(axes: dict[str, Any], zipped: dict[str, list[Any]], problems: Problems) -> None:
    """``[zip]`` lists of equal lengths, none of them also an axis."""
    for key in set(axes) & set(zipped):
        problems.add(f"zip.{key}", "also an axis in [axes]; vary it in one place")
    lengths = {len(v) for v in zipped.values()}
    if len(lengths) > 1:
        sizes = ", ".join(f"{k} has {len(v)}" for k, v in zipped.items())
        problems.add("zip", f"lists must have equal lengths ({sizes})")

"""The versioned JSON schemas of every command's ``--format json`` output, one file a command
(``closed-form.json``, ``sweep-run.json``; ``study.json`` for every study command), and the
small validator that checks a payload against one.

The schemas use a subset of JSON Schema (draft 2020-12) that :func:`problems` checks with the
standard library alone: ``type`` (one or a list), ``enum``, ``required``, ``properties``,
``items``, ``minItems``, ``minProperties`` and ``anyOf``. Each holds a ``version``: a change that
removes or retypes a key is a new version.
"""

import json
from importlib import resources
from typing import Any

__all__ = ["problems", "schema", "schema_name"]

TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "null": (type(None),),
}


def schema_name(words: list[str], study: bool = False) -> str:
    """The schema file stem of a command: ``["sweep", "run"]`` → ``sweep-run``; any study
    command → ``study``."""
    return "study" if study else "-".join(words)


def schema(name: str) -> dict[str, Any]:
    """The schema called ``name`` (see :func:`schema_name`)."""
    text = (resources.files("assocmem.cli.schemas") / f"{name}.json").read_text("utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def _is(value: Any, kind: str) -> bool:
    if isinstance(value, bool) and kind in ("integer", "number"):
        return False
    return isinstance(value, TYPES[kind])


def problems(value: Any, rules: dict[str, Any], where: str = "$") -> list[str]:
    """Where ``value`` breaks ``rules`` (a schema or a part of one): ``["$.records: fewer than
    1 items"]``; empty when it validates."""
    kinds = rules.get("type")
    if kinds is not None:
        kinds = [kinds] if isinstance(kinds, str) else kinds
        if not any(_is(value, k) for k in kinds):
            return [f"{where}: {type(value).__name__}, not {' or '.join(kinds)}"]
    if "enum" in rules and value not in rules["enum"]:
        return [f"{where}: {value!r} not one of {rules['enum']}"]
    found = []
    if isinstance(value, dict):
        missing = [key for key in rules.get("required", ()) if key not in value]
        found += [f"{where}: no key {key!r}" for key in missing]
        if len(value) < rules.get("minProperties", 0):
            found.append(f"{where}: fewer than {rules['minProperties']} keys")
        for key, part in rules.get("properties", {}).items():
            if key in value:
                found += problems(value[key], part, f"{where}.{key}")
    if isinstance(value, list):
        if len(value) < rules.get("minItems", 0):
            found.append(f"{where}: fewer than {rules['minItems']} items")
        if "items" in rules:
            for i, item in enumerate(value):
                found += problems(item, rules["items"], f"{where}[{i}]")
    if "anyOf" in rules and all(problems(value, option, where) for option in rules["anyOf"]):
        found.append(f"{where}: matches none of anyOf")
    return found

"""Command-line flags derived from the configuration's field declarations.

A field declared with :func:`~assocmem.config.problem.described` (the fields of
:class:`~assocmem.config.problem.Problem`, of :class:`~assocmem.config.hyper.HyperParameters`,
of the run declarations :class:`~assocmem.config.training.TrainingRun` and
:class:`~assocmem.config.closed_form.ClosedFormRun`) gets its flag from its declaration: the name
(``n_inputs`` → ``--n-inputs``, plus its ``short`` spelling), the type (an integer at least
``low``, a finite number, a string among ``choices``, a list for a tuple), the help (its
documentation and the setup's default). So a new field of the problem or of a run, or a new
optimiser hyper-parameter, needs no edit here or in the commands. The declarations import
nothing heavy: ``--help`` stays torch-free.
"""

import argparse
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import Field
from typing import Any

from assocmem.cli.common import LazyChoices, finite_float, int_at_least, positive_float
from assocmem.config.problem import DOC, FLAG, value_type


def flag_name(name: str) -> str:
    """The long flag of a field: ``n_inputs`` → ``--n-inputs``."""
    return "--" + name.replace("_", "-")


def spec_key(item: Field[Any]) -> str:
    """The spec key a declared field's flag sets: its ``key`` (a grid axis: ``dims``), else its
    name."""
    return str(item.metadata[FLAG].get("key", item.name))


def _parser_of(kind: Any, flag: Mapping[str, Any]) -> Callable[[str], Any] | None:
    """How the flag parses one value: an integer at least ``low``, a finite number (> 0 where
    ``positive``), else the text as given (a string, or ``text``: the configuration parses it)."""
    if flag.get("text"):
        return None
    if kind is int:
        low = flag.get("low")
        return int_at_least(low if low is not None else 0)
    if kind is float:
        return positive_float if flag.get("positive") else finite_float
    return None


def _shown(value: Any) -> str:
    """A default as the help shows it: ``2.0`` → ``2``, ``(0.0, 0.0)`` → ``0 0``."""
    if isinstance(value, tuple):
        return " ".join(_shown(v) for v in value)
    if isinstance(value, float):  # 1e-08 as 1e-8
        return f"{value:g}".replace("e-0", "e-").replace("e+0", "e+")
    return str(value)


def field_flag_options(
    item: Field[Any], default: Any, flag: Mapping[str, Any], *, axis: bool = False
) -> tuple[list[str], dict[str, Any]]:
    """The option strings and ``add_argument`` keywords of the declared field ``item``.

    Parameters
    ----------
    item : dataclasses.Field
        A field declared with :func:`~assocmem.config.problem.described`.
    default : object
        The default this command's setup gives it (shown in the help; the flag's own default
        is None, "not given").
    flag : mapping
        Its command-line spelling (the declaration's ``flag`` metadata, maybe updated): besides
        :func:`~assocmem.config.problem.described`'s, ``key`` (the spec key and flag when they
        differ from the field's name: a grid axis, ``dim`` → ``--dims``, one or more values
        unless ``single``), ``shown`` (the default the help states; None: none), ``text`` (the
        value is passed on as text, for the configuration to parse) and ``positive`` (a
        number > 0).
    axis : bool, default False
        A grid axis: the flag takes one or more values.
    """
    kind, many = value_type(item.type)
    axis = axis or ("key" in flag and not flag.get("single"))  # a grid axis's plural key
    long = flag_name(flag.get("key", item.name))
    doc = str(item.metadata[DOC])
    options: dict[str, Any] = {"help": doc}
    default = flag.get("shown", default)  # what the help says a flag not given means
    if default not in (None, ()) or axis:
        said = [] if default in (None, ()) else [f"default {_shown(default)}"]
        options["help"] += f" ({'; '.join(['an axis'] * axis + said)})"
    if kind is bool and "choices" not in flag:
        return [long], {**options, "action": "store_true", "default": None}
    if flag.get("path"):  # the flag names a file the command reads
        return [long], {**options, "metavar": flag.get("metavar", "FILE")}
    parse = _parser_of(kind, flag)
    if parse is not None:
        options["type"] = parse
    choices = flag.get("choices")
    if isinstance(choices, str):
        module, _, attribute = choices.partition(":")
        choices = LazyChoices(module, attribute)
    if choices is not None:
        options["choices"] = choices
    if "metavar" in flag:
        options["metavar"] = flag["metavar"]
        if isinstance(choices, tuple):  # the metavar hides them: the help lists them
            listed = ", ".join(choices[:-1]) + f" or {choices[-1]}" if len(choices) > 1 else ""
            options["help"] = options["help"].replace(doc, f"{doc}: {listed}", 1)
    if "nargs" in flag:
        options["nargs"] = flag["nargs"]
    elif many or axis:
        options["nargs"] = "+"
    short = [flag["short"]] if "short" in flag else []
    return [*short, long], options


def add_field_flags(
    parser: argparse.ArgumentParser,
    items: Iterable[Field[Any]],
    *,
    defaults: Callable[[str], Any],
    flags: Callable[[str], Mapping[str, Any]] | None = None,
    axes: Sequence[str] = (),
    aliases: Mapping[str, Sequence[str]] | None = None,
) -> list[str]:
    """Add one flag per declared field (but those declared ``spec_only``); return the keys the
    flags set (a field's ``key``, else its name).

    Parameters
    ----------
    parser : argparse.ArgumentParser
    items : iterable of dataclasses.Field
        The fields, in the order the help lists them.
    defaults : callable
        A field's default in this command's setup (for the help).
    flags : callable, optional
        A field's command-line spelling (default: its declaration's ``flag`` metadata).
    axes : sequence of str
        The fields that are grid axes here (one or more values).
    aliases : mapping of str to sequence of str, optional
        Further option strings of a field (an old spelling).
    """
    names = []
    for item in items:
        flag = flags(item.name) if flags is not None else item.metadata[FLAG]
        if flag.get("spec_only"):  # set in a spec or TOML file only
            continue
        strings, options = field_flag_options(
            item, defaults(item.name), flag, axis=item.name in axes
        )
        strings += list((aliases or {}).get(item.name, ()))
        key = str(flag.get("key", item.name))
        parser.add_argument(*strings, dest=key, **options)
        names.append(key)
    return names

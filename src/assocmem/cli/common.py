"""Helpers shared by subcommands: argument types that raise one-line errors, choices read from
the library's registries only when needed, output formats, progress and memory flags.

This module imports nothing heavy: ``assocmem --help`` and every ``assocmem CMD --help`` are
built from it without importing torch, pandas or matplotlib (the command handlers import the
library when they run).
"""

import argparse
import importlib
import json
import math
import shutil
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from assocmem.config.files import load_toml
from assocmem.config.memory import DEFAULT_MEMORY_GB
from assocmem.progress import wanted

__all__ = [
    "DEFAULT_MEMORY_GB",
    "HelpFormatter",
    "LazyChoices",
    "RawHelpFormatter",
    "add_format_argument",
    "add_memory_argument",
    "add_quiet_argument",
    "finite_float",
    "format_table",
    "int_at_least",
    "load_toml",
    "print_json",
    "show_progress",
]


class LazyChoices(Sequence[str]):
    """The allowed values of an option, read from ``module.attribute`` (a registry, a tuple, or
    a function returning one) the first time they are needed: when a value is checked, never
    to build ``--help``."""

    def __init__(self, module: str, attribute: str) -> None:
        self.module, self.attribute = module, attribute
        self._values: tuple[str, ...] | None = None

    @property
    def values(self) -> tuple[str, ...]:
        if self._values is None:
            source = getattr(importlib.import_module(self.module), self.attribute)
            self._values = tuple(source() if callable(source) else source)
        return self._values

    def __getitem__(self, index: Any) -> Any:
        return self.values[index]

    def __len__(self) -> int:
        return len(self.values)

    def __iter__(self) -> Iterator[str]:
        return iter(self.values)

    def __contains__(self, value: object) -> bool:
        return value in self.values


class HelpFormatter(argparse.HelpFormatter):
    """Never reads lazy choices to build ``--help`` (give such an option a metavar)."""

    def _expand_help(self, action: argparse.Action) -> str:
        if isinstance(action.choices, LazyChoices):
            action = argparse.Action(
                action.option_strings, action.dest, help=action.help, metavar=action.metavar
            )
        return super()._expand_help(action)


class RawHelpFormatter(HelpFormatter):
    """:class:`HelpFormatter` that keeps the line breaks of a text written on several lines
    (an epilog of examples) and wraps a one-line text (a description)."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if "\n" in text.strip():
            return "".join(indent + line for line in text.splitlines(keepends=True))
        return super()._fill_text(text, width, indent)


def int_at_least(low: int) -> Callable[[str], int]:
    """An argparse type: an integer ≥ ``low`` (else a one-line usage error, exit 2)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be an integer ≥ {low}, got {text!r}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"must be an integer ≥ {low}, got {value}")
        return value

    parse.__name__ = f"integer ≥ {low}"
    return parse


def finite_float(text: str) -> float:
    """An argparse type: a finite number (no nan or inf)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number, got {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be a finite number, got {text!r}")
    return value


def positive_float(text: str) -> float:
    """An argparse type: a finite number > 0."""
    value = finite_float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a number > 0, got {text!r}")
    return value


def add_format_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--format",
        choices=("table", "json"),
        default="table",
        help="table: readable text (default); json: machine-readable records on stdout",
    )


def add_quiet_argument(parser: Any, what: str = "no progress bar") -> None:
    parser.add_argument(
        "--quiet", action="store_true", help=f"{what} (bars show only on a terminal)"
    )


def add_memory_argument(parser: Any) -> None:
    parser.add_argument(
        "--memory-gb",
        type=positive_float,
        default=None,
        metavar="GB",
        help=f"refuse, before starting, work whose estimated memory exceeds GB "
        f"(default {DEFAULT_MEMORY_GB:g}; not part of any run's identity)",
    )


def show_progress(args: argparse.Namespace) -> bool:
    """Progress bars for this command: on a terminal, unless ``--quiet``."""
    return wanted(bool(getattr(args, "quiet", False)))


def _json_default(value: Any) -> Any:
    if hasattr(value, "tolist"):
        return value.tolist()
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def _finite(value: Any) -> Any:
    """Replace non-finite floats by None so the output is strict JSON."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def print_json(payload: Any) -> None:
    json.dump(_finite(payload), sys.stdout, default=_json_default, allow_nan=False)
    sys.stdout.write("\n")


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return "inf" if value == math.inf else f"{value:.4g}"
    return "" if value is None else str(value)


def _terminal_width() -> int | None:
    """The columns of the terminal stdout writes to, or None when it is piped or redirected
    (then a table is printed whole, however wide)."""
    if not sys.stdout.isatty():
        return None
    return shutil.get_terminal_size().columns


def format_table(headers: list[str], rows: list[list[Any]], width: int | None = None) -> str:
    """A plain aligned text table; floats in compact scientific-friendly form. Nothing is ever
    cut: wider than ``width`` (default: the terminal's columns on a terminal, no limit when
    piped), it is printed one record a line (``header: value`` pairs) instead.

    Parameters
    ----------
    headers : list of str
        The column names, (C,).
    rows : list of list
        The rows, (R, C).
    width : int, optional
        The widest line allowed before switching to records.
    """
    text = [[_cell(v) for v in row] for row in rows]
    widths = [max([len(h), *(len(r[i]) for r in text)]) for i, h in enumerate(headers)]
    limit = _terminal_width() if width is None else width
    if limit is not None and sum(widths) + 2 * (len(widths) - 1) > limit:
        return "\n".join(_record(headers, cells) for cells in text)

    def line(cells: Sequence[str]) -> str:
        return "  ".join(c.rjust(w) for c, w in zip(cells, widths, strict=True))

    lines = [line(headers), "  ".join("-" * w for w in widths)]
    lines += [line(r) for r in text]
    return "\n".join(lines)


def _record(headers: list[str], cells: list[str]) -> str:
    """One row as one line of ``header: value`` pairs (the terminal wraps a long one)."""
    return " | ".join(f"{h}: {c}" for h, c in zip(headers, cells, strict=True) if c != "")

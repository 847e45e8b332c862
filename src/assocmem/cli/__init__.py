"""The ``assocmem`` command. Each subcommand lives in its own module of this package and exposes
``register(subparsers)``; the CLI holds no science, only parsing and printing. Building the parsers
imports no torch, pandas or matplotlib: each handler imports the library when it runs."""

import argparse
import contextlib
import importlib
import io
import os
import re
import sys
import warnings
from typing import Any, NoReturn

from assocmem import __version__
from assocmem.cli.common import HelpFormatter
from assocmem.config.errors import ConfigError, did_you_mean

# Subcommand modules, in the order ``assocmem --help`` lists them.
COMMANDS = (
    "reproduce",
    "closed_form",
    "claims",
    "words",
    "capacity",
    "figure",
    "theory",
    "fit",
    "predict",
    "train",
    "compare_trained",
    "sweep",
    "study",  # one subcommand per study (experiments/commands.py)
)


class OneLineParser(argparse.ArgumentParser):
    """Usage errors (unknown flag, bad choice) as one line and exit code 2, like ConfigError."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"assocmem: error: {_field_first(message)}{help_hint(self.prog)}\n")


def help_hint(prog: str) -> str:
    """The end of every error line: where to read what the command accepts."""
    return f" (see {prog} --help)"


def _field_first(message: str) -> str:
    """argparse's ``argument -N/--n-inputs: …`` as ``n_inputs: …``, the field as a config or
    :class:`ConfigError` names it; an invalid choice says the nearest allowed one."""
    match = re.match(r"argument (\S+): (.*)", message, flags=re.DOTALL)
    if match is None:
        return " ".join(message.split())
    field = match.group(1).split("/")[-1].lstrip("-").replace("-", "_")
    return f"{field}: {_near_choice(' '.join(match.group(2).split()))}"


def _near_choice(message: str) -> str:
    """``invalid choice: 'x' (choose from 'a', 'b')`` with ``did you mean a?`` before the list."""
    match = re.match(r"invalid choice: '(.*)' \(choose from (.*)\)$", message)
    if match is None:
        return message
    allowed = re.findall(r"'([^']*)'", match.group(2))
    hint = did_you_mean(match.group(1), allowed)
    return f"invalid choice: {match.group(1)!r}; {hint}allowed: {', '.join(allowed)}"


def _set_help_hints(parser: argparse.ArgumentParser) -> None:
    """Each (sub)command's parser records its own name, for the hint of a handler's error."""
    parser.set_defaults(prog=parser.prog)
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):
                _set_help_hints(sub)


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="assocmem", description="Scaling laws for associative memories.")
    parser.add_argument("--version", action="version", version=f"assocmem {__version__}")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module(f"assocmem.cli.{name}").register(subparsers)
    _set_help_hints(parser)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as done:  # --help, --version (0) or a usage error (2, one line printed)
        return done.code if isinstance(done.code, int) else 2
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("once", FutureWarning)  # a deprecated spelling: one line
            warnings.showwarning = _one_line
            return int(args.handler(args) or 0)
    except ConfigError as err:
        print(f"assocmem: error: {err}{help_hint(args.prog)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("assocmem: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader left (``assocmem … | head``): stop quietly
        _silence_stdout()
        return 141


def _one_line(message: Warning | str, category: type[Warning], *args: object, **kw: object) -> None:
    """Print a warning as the command line does: ``assocmem: warning: …``, one line."""
    print(f"assocmem: warning: {message}", file=sys.stderr)


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so that flushing it at exit raises no second BrokenPipeError."""
    with contextlib.suppress(OSError, ValueError, io.UnsupportedOperation):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())

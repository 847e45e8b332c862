"""The ``assocmem`` command. Each subcommand lives in its own module of this package and exposes
``register(subparsers)``; the CLI holds no science, only parsing and printing. Building the parsers
imports no torch, pandas or matplotlib: each handler imports the library when it runs."""

import argparse
import importlib
import re
import sys
from typing import Any, NoReturn

from assocmem import __version__
from assocmem.cli.common import HelpFormatter
from assocmem.config.errors import ConfigError

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
        self.exit(2, f"assocmem: error: {_field_first(message)} (see {self.prog} --help)\n")


def _field_first(message: str) -> str:
    """argparse's ``argument -N/--n-inputs: …`` as ``n_inputs: …``, the field as a config or
    :class:`ConfigError` names it."""
    match = re.match(r"argument (\S+): (.*)", message, flags=re.DOTALL)
    if match is None:
        return " ".join(message.split())
    field = match.group(1).split("/")[-1].lstrip("-").replace("-", "_")
    return f"{field}: {' '.join(match.group(2).split())}"


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="assocmem", description="Scaling laws for associative memories.")
    parser.add_argument("--version", action="version", version=f"assocmem {__version__}")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module(f"assocmem.cli.{name}").register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as done:  # --help, --version (0) or a usage error (2, one line printed)
        return done.code if isinstance(done.code, int) else 2
    try:
        return int(args.handler(args) or 0)
    except ConfigError as err:
        print(f"assocmem: error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("assocmem: interrupted", file=sys.stderr)
        return 130

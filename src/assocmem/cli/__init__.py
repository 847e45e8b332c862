"""The ``assocmem`` command. Each subcommand lives in its own module of this package and exposes
``register(subparsers)``; the CLI holds no science, only parsing, validation and printing."""

import argparse
import importlib
import sys
from typing import NoReturn

from assocmem import __version__
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
)


class OneLineParser(argparse.ArgumentParser):
    """Usage errors (unknown flag, bad choice) as one line and exit code 2, like ConfigError."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"assocmem: error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="assocmem", description="Scaling laws for associative memories.")
    parser.add_argument("--version", action="version", version=f"assocmem {__version__}")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module(f"assocmem.cli.{name}").register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.handler(args) or 0)
    except ConfigError as err:
        print(f"assocmem: error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("assocmem: interrupted", file=sys.stderr)
        return 130

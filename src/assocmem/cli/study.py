"""``assocmem STUDY``: one subcommand per study of the registry (``experiments/commands.py``).

Each runs :func:`assocmem.run_study` and prints the study's table and judged claims (or, with
``--format json``, everything it measured). Built from the declarations alone: no torch, pandas
or matplotlib until a study runs.
"""

import argparse
import textwrap
from typing import Any

from assocmem.cli.common import (
    add_format_argument,
    add_memory_argument,
    add_quiet_argument,
    finite_float,
    format_table,
    int_at_least,
    print_json,
    show_progress,
)
from assocmem.experiments.commands import STUDY_COMMANDS, Option, StudyCommand, load_studies


def number_at_least(low: float) -> Any:
    """An argparse type: a finite number ≥ ``low``."""

    def parse(text: str) -> float:
        value = finite_float(text)
        if value < low:
            raise argparse.ArgumentTypeError(f"must be a number ≥ {low:g}, got {text!r}")
        return value

    parse.__name__ = f"number ≥ {low:g}"
    return parse


def _type(option: Option) -> Any:
    if option.type == "int":
        return int_at_least(int(option.low if option.low is not None else -(2**63)))
    if option.type == "float":
        return finite_float if option.low is None else number_at_least(option.low)
    return str


def _add_option(parser: argparse.ArgumentParser, option: Option) -> None:
    parser.add_argument(
        option.flag,
        dest=option.field,
        type=_type(option),
        nargs="+" if option.many else None,
        choices=option.choices,
        metavar=option.field.upper() if option.choices is None else None,
        help=option.help + " (default: the scale's spec)",
    )


def register_study(subparsers: Any, command: StudyCommand) -> None:
    parser = subparsers.add_parser(command.name, help=command.help, description=command.description)
    parser.add_argument(
        "--scale",
        choices=("quick", "full", "tiny"),
        default="quick",
        help="quick (default: minutes on 2 cores), full (the study's whole grid) or tiny "
        "(seconds: a few points of every part, to try options; measured, not judged)",
    )
    for option in command.options:
        _add_option(parser, option)
    parser.add_argument(
        "--out",
        help="keep the runs in OUT/runs.db (resumed, shared with reproduce --out OUT) and the "
        "figure in OUT/figures; default: a temporary database, nothing kept",
    )
    parser.add_argument("--device", default="cpu", help="cpu, cuda or cuda:K (default cpu)")
    add_memory_argument(parser)
    add_quiet_argument(parser)
    add_format_argument(parser)
    parser.set_defaults(handler=run, study=command.name)


def register(subparsers: Any) -> None:
    load_studies()  # the studies of other packages (entry points "assocmem.studies")
    for command in STUDY_COMMANDS.values():
        register_study(subparsers, command)


def run(args: argparse.Namespace) -> int:
    from assocmem.experiments.study import run_study
    from assocmem.report import format_measured

    command = STUDY_COMMANDS[args.study]
    settings = {
        o.field: getattr(args, o.field)
        for o in command.options
        if getattr(args, o.field) is not None
    }
    result = run_study(
        command.name,
        scale=args.scale,
        settings=settings,
        out=args.out,
        device=args.device,
        memory_gb=args.memory_gb,
        progress=show_progress(args),
    )
    if args.format == "json":
        print_json(result.to_dict())
        return 0
    if result.table is not None:
        print(result.table.title)
        print(format_table(result.table.headers, result.table.rows))
        if result.table.note:
            print(textwrap.fill(result.table.note, 100))
        print()
    rows = [
        [c.id, "shown" if c.passed is None else c.verdict, format_measured(c.measured)]
        for c in result.claims
    ]
    print(format_table(["claim", "result", "measured"], rows))
    for c in result.claims:
        print(textwrap.fill(f"{c.id}: {c.statement}", 100, initial_indent="  ",
                            subsequent_indent="    "))  # fmt: skip
        if c.note:
            print(textwrap.fill(f"note: {c.note}", 100, initial_indent="    ",
                                subsequent_indent="    "))  # fmt: skip
    return 0

"""``assocmem claims``: measure the closed-form claims of the paper and judge them."""

import argparse
from typing import Any

from assocmem.cli.common import add_format_argument, format_table, print_json
from assocmem.config.errors import ConfigError
from assocmem.experiments.claims import CLAIMS, check_claims
from assocmem.report import format_measured


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "claims",
        help="check the paper's claims on closed-form memories",
        description="Run the experiments behind the paper's closed-form claims and print measured "
        "values with pass/fail. Exit code 1 when a claim fails.",
    )
    parser.add_argument(
        "--only", nargs="+", metavar="ID", help=f"claim ids (default all: {' '.join(CLAIMS)})"
    )
    parser.add_argument("--trials", type=int, default=100, help="trials per setting (default 100)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    add_format_argument(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    unknown = [i for i in args.only or [] if i not in CLAIMS]
    if unknown:
        raise ConfigError("only", f"unknown claim {unknown[0]!r}; allowed: {', '.join(CLAIMS)}")
    claims = check_claims(
        args.only, trials=args.trials, seed=args.seed, device=args.device, progress=not args.quiet
    )
    if args.format == "json":
        print_json([c.to_dict() for c in claims])
    else:
        rows = [[c.id, "pass" if c.passed else "FAIL", format_measured(c.measured)] for c in claims]
        print(format_table(["claim", "result", "measured"], rows))
        for c in claims:
            print(f"  {c.id}: {c.statement}")
    return 0 if all(c.passed for c in claims) else 1

"""``assocmem claims``: measure the closed-form claims of the paper and judge them."""

import argparse
import textwrap
from typing import Any

from assocmem.cli.common import (
    DEFAULT_MEMORY_GB,
    LazyChoices,
    add_format_argument,
    add_memory_argument,
    add_quiet_argument,
    format_table,
    int_at_least,
    print_json,
    show_progress,
)


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "claims",
        help="check the paper's claims on closed-form memories",
        description="Run the experiments behind the paper's closed-form claims and print measured "
        "values with pass/fail. Exit code 1 when a claim fails. With --lock, lock every claim's "
        "tolerance as the specs state it now instead (specs/claims.lock.json).",
    )
    parser.add_argument(
        "--lock",
        action="store_true",
        help="write the lock of the claims' tolerances (refused when a tolerance changed without "
        "a revision whose old value is the locked one); runs nothing",
    )
    parser.add_argument(
        "--only",
        nargs="+",
        metavar="ID",
        choices=LazyChoices("assocmem.experiments.claims", "CLAIMS"),
        help="claim ids, as `assocmem claims` lists them (default: all)",
    )
    parser.add_argument(
        "--trials", type=int_at_least(1), default=100, help="trials per setting (default 100)"
    )
    parser.add_argument("--seed", type=int_at_least(0), default=0, help="base seed (default 0)")
    parser.add_argument("--device", default="cpu", help="cpu, cuda or cuda:K (default cpu)")
    add_memory_argument(parser)
    add_quiet_argument(parser)
    add_format_argument(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    if args.lock:
        return lock()
    from assocmem.analysis.memory import check_claims_memory
    from assocmem.experiments.claims import SWEEPS, check_claims, claim_config
    from assocmem.report import FRAGILE_MEANS, MARGIN_MEANS, margin_text, measured_text

    # every sweep counts, as the sweeps a subset of claims reads are known only once judged
    configs = [claim_config(name, args.trials, args.seed, args.device) for name in SWEEPS]
    check_claims_memory(configs, args.memory_gb or DEFAULT_MEMORY_GB)
    claims = check_claims(
        args.only, trials=args.trials, seed=args.seed, device=args.device,
        progress=show_progress(args),
    )  # fmt: skip
    if args.format == "json":
        print_json([c.to_dict() for c in claims])
    else:
        rows = [[c.id, c.verdict, margin_text(c), measured_text(c)] for c in claims]
        print(format_table(["claim", "result", "margin", "measured"], rows))
        print(textwrap.fill(f"{MARGIN_MEANS}; {FRAGILE_MEANS}.", 100))
        for c in claims:
            print(textwrap.fill(f"{c.id}: {c.statement}", 100, initial_indent="  ",
                                subsequent_indent="    "))  # fmt: skip
    return 0 if all(c.passed for c in claims) else 1


def lock() -> int:
    from assocmem.experiments.tolerances import tolerance_tables, write_lock

    path = write_lock()
    print(f"locked the tolerances of {len(tolerance_tables())} claims in {path}")
    return 0

"""``assocmem reproduce``: the paper's figures, Table 1 and claims into one report."""

import argparse
from typing import Any

from assocmem.experiments.reproduce import ONLY_CHOICES, PAPER_ITEMS, reproduce


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "reproduce",
        help="reproduce the paper's figures, Table 1 and claims into OUT/report.html",
        description="Run (or resume) every experiment as a sweep into OUT/runs.db, then draw the "
        "figures (OUT/figures/*.png, *.svg) and write OUT/report.html and OUT/claims.json (every "
        "judged claim). A second run reuses the stored results and only redraws.",
    )
    scale = parser.add_mutually_exclusive_group()
    scale.add_argument(
        "--quick",
        dest="scale",
        action="store_const",
        const="quick",
        help="fewer trials and a thinned grid: minutes on 2 cores (default)",
    )
    scale.add_argument(
        "--full",
        dest="scale",
        action="store_const",
        const="full",
        help="the paper's settings (100 trials, full grids)",
    )
    parser.add_argument(
        "--only",
        nargs="+",
        choices=ONLY_CHOICES,
        metavar="ITEM",
        help=f"a subset of: {', '.join(ONLY_CHOICES)}",
    )
    parser.add_argument(
        "--beyond",
        action="store_true",
        help="also the experiments beyond the paper (capacity frontiers, label noise, a real "
        "word law; needs the words extra)",
    )
    parser.add_argument(
        "--out", default="reproduction", help="output folder (default reproduction)"
    )
    parser.add_argument("--executor", choices=("local", "dask"), default="local")
    parser.add_argument("--workers", type=int, help="Dask local workers")
    parser.add_argument("--device", default="cpu", help="cpu, cuda or cuda:K")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    parser.set_defaults(handler=run, scale="quick")


def run(args: argparse.Namespace) -> int:
    done = reproduce(
        args.out,
        scale=args.scale,
        only=[*(args.only or PAPER_ITEMS), "beyond"] if args.beyond else args.only,
        executor=args.executor,
        workers=args.workers,
        device=args.device,
        progress=not args.quiet,
    )
    print(done.summary())
    return 0

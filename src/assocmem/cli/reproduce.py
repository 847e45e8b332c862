"""``assocmem reproduce``: the paper's figures, Table 1 and claims into one report."""

import argparse
from typing import Any

from assocmem.cli.common import add_quiet_argument, int_at_least, show_progress


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "reproduce",
        help="reproduce the paper's figures, Table 1 and claims into OUT/report.html",
        description="Run (or resume) every experiment as a sweep into OUT/runs.db, then draw the "
        "figures (OUT/figures/*.png, *.svg) and write OUT/report.html and OUT/claims.json (every "
        "judged claim). A second run reuses the stored results and only redraws; the report "
        "shows every result OUT holds, so runs with --only add to it. Ends with a summary: "
        "claims passed of those checked, figures written, time, the report's path.",
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
        metavar="ITEM",
        help="a subset. Items: figure numbers (1, 3, 4, 5, 6, 7, 8; each judges its own claims), "
        "table1, memory, claims (every paper claim), beyond (every study beyond the paper). "
        "Experiments, by the name the report shows (figure-4, rho, beyond-capacity, ...): that "
        "experiment alone, its figure, table and claims. An unknown one lists them all",
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
    parser.add_argument(
        "--executor",
        choices=("local", "dask"),
        default="local",
        help="local (default) or dask (needs the sweep extra)",
    )
    parser.add_argument("--workers", type=int_at_least(1), help="Dask local workers")
    parser.add_argument("--device", default="cpu", help="cpu, cuda or cuda:K")
    parser.add_argument(
        "--seed",
        type=int_at_least(0),
        default=0,
        help="the reproduction's seed S (default 0, the runs as written): each sweep's seeds "
        "are derived from S and its name, so no run is shared between two seeds",
    )
    add_quiet_argument(parser, "no progress bars")
    parser.set_defaults(handler=run, scale="quick")


def run(args: argparse.Namespace) -> int:
    from assocmem.experiments.registry import paper_items
    from assocmem.experiments.reproduce import reproduce

    done = reproduce(
        args.out,
        scale=args.scale,
        only=[*(args.only or paper_items()), "beyond"] if args.beyond else args.only,
        executor=args.executor,
        workers=args.workers,
        device=args.device,
        progress=show_progress(args),
        seed=args.seed,
    )
    print(done.summary())
    return 0

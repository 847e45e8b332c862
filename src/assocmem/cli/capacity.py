"""``assocmem capacity``: the capacity frontier N*(d) of the outer-product or a trained memory.

Parsing and printing only: the search is the facts study's
:func:`assocmem.studies.facts.frontier_search.capacity_frontier`, the fit
:func:`assocmem.analysis.frontier.fit_frontier`. Not a study command (``assocmem STUDY``): it
runs one search with its own settings rather than an experiment's sweeps.
"""

import argparse
import sys
from typing import Any

from assocmem.cli.common import (
    DEFAULT_MEMORY_GB,
    LazyChoices,
    add_format_argument,
    add_memory_argument,
    add_quiet_argument,
    finite_float,
    format_table,
    int_at_least,
    print_json,
    show_progress,
)
from assocmem.config.errors import ConfigError


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "capacity",
        help="capacity frontier: most associations stored at accuracy ≥ τ, vs d",
        description="For each d, the largest N whose memory retrieves a fraction ≥ τ of N "
        "uniformly weighted associations (search over N, repeated with independent seeds), and "
        "the fitted constants d²/(N log N), d/N and the exponent of N* in d. Memories: hebbian "
        "(outer product, closed form) or trained (W by full-batch Adam on the cross-entropy, "
        "fixed Gaussian E and U, W = 0 at the start, early stopping at τ).",
    )
    _add_search_arguments(parser)
    _add_trained_arguments(parser.add_argument_group("trained memory"))
    add_memory_argument(parser)
    add_quiet_argument(parser)
    add_format_argument(parser)
    parser.set_defaults(handler=run)


def _add_search_arguments(parser: argparse.ArgumentParser) -> None:
    """The settings of either memory's search."""
    parser.add_argument(
        "--memory",
        choices=LazyChoices("assocmem.studies.facts.frontier_search", "MEMORIES"),
        default="hebbian",
        metavar="MEMORY",
        help="hebbian (outer product, default) or trained",
    )
    parser.add_argument(
        "--dims",
        nargs="+",
        type=int_at_least(1),
        default=[16, 32, 64, 128, 256],
        metavar="D",
        help="distinct dimensions d (default 16 32 64 128 256)",
    )
    parser.add_argument(
        "--tau", type=finite_float, default=0.99, help="accuracy threshold (default 0.99)"
    )
    parser.add_argument(
        "--outputs", default="N", help="N: each input its own output (default); or a number M"
    )
    parser.add_argument(
        "--trials",
        type=int_at_least(1),
        help="draws averaged per accuracy (default 5 hebbian, 2 trained)",
    )
    parser.add_argument(
        "--repeats",
        type=int_at_least(1),
        help="independent searches per d (default 5 hebbian, 3 trained)",
    )
    parser.add_argument("--seed", type=int_at_least(0), default=0, help="base seed (default 0)")
    parser.add_argument("--device", default="cpu", help="cpu, cuda or cuda:K (default cpu)")


def _add_trained_arguments(group: Any) -> None:
    """The trained memory's optimiser and search settings."""
    group.add_argument(
        "--lr", type=finite_float, default=1.0, help="Adam learning rate (default 1)"
    )
    group.add_argument(
        "--max-steps", type=int_at_least(1), default=1000, help="step budget (default 1000)"
    )
    group.add_argument(
        "--rel-tol", type=finite_float, default=0.02, help="relative precision of N* (default 0.02)"
    )
    group.add_argument(
        "--factor",
        type=finite_float,
        default=1.25,
        help="bracketing step of the search (default 1.25)",
    )
    group.add_argument(
        "--first-guess", type=int_at_least(2), help="starting N at the first d (default: theory)"
    )
    group.add_argument("--verbose", action="store_true", help="log every training run (stderr)")


def _outputs(text: str) -> int | None:
    if text == "N":
        return None
    if text.isdigit() and int(text) >= 1:
        return int(text)
    raise ConfigError("outputs", f"must be N or an integer ≥ 1, got {text!r}")


def run(args: argparse.Namespace) -> int:
    from assocmem.analysis.frontier import fit_frontier
    from assocmem.studies.facts.frontier_search import (
        REFERENCE_CONSTANTS,
        REPLICATES,
        capacity_frontier,
    )

    trials, repeats = REPLICATES[args.memory]
    common = {
        "tau": args.tau,
        "n_outputs": _outputs(args.outputs),
        "trials": args.trials or trials,
        "repeats": args.repeats or repeats,
        "seed": args.seed,
        "device": args.device,
        "memory_gb": args.memory_gb or DEFAULT_MEMORY_GB,
    }
    log = (lambda line: print(line, file=sys.stderr, flush=True)) if args.verbose else None
    points = capacity_frontier(
        args.memory, args.dims, **common, **_trained(args, every=True), log=log,
        progress=show_progress(args),
    )  # fmt: skip
    fit = fit_frontier(points)
    if args.format == "json":
        print_json({"memory": args.memory, "points": [p.__dict__ for p in points],
                    "fit": fit.__dict__, "settings": common | _trained(args)})  # fmt: skip
        return 0
    print(_table(points, fit))
    lo, hi = fit.exponent_ci
    print(
        f"\n{args.memory}: N* ∝ d^{fit.exponent:.3f}  (95% CI [{lo:.3f}, {hi:.3f}]), τ = {args.tau}"
    )
    refs = "; ".join(f"{name}: d² ≈ {c} N log N" for name, c in REFERENCE_CONSTANTS.items())
    print(f"references: {refs}")
    return 0


def _trained(args: argparse.Namespace, every: bool = False) -> dict[str, Any]:
    """The trained memory's settings (for the JSON: only when the memory is trained)."""
    if args.memory != "trained" and not every:
        return {}
    return {"lr": args.lr, "max_steps": args.max_steps, "rel_tol": args.rel_tol,
            "factor": args.factor, "first_guess": args.first_guess}  # fmt: skip


def _table(points: list[Any], fit: Any) -> str:
    rows = [
        [d, list(p.n_star), n, c, f"[{lo:.3g}, {hi:.3g}]", r, f"[{rlo:.3g}, {rhi:.3g}]"]
        for d, p, n, c, (lo, hi), r, (rlo, rhi) in zip(
            fit.dims, points, fit.n_star, fit.constant, fit.constant_ci, fit.d_over_n,
            fit.d_over_n_ci, strict=True,
        )
    ]  # fmt: skip
    headers = ["d", "N* per repeat", "N* median", "d²/(N log N)", "95% CI", "d/N", "95% CI"]
    return format_table(headers, rows)

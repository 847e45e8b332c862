"""``assocmem capacity``: the capacity frontier N*(d) of the outer-product memory."""

import argparse
from typing import Any

from assocmem.capacity import fit_frontier, hebbian_frontier
from assocmem.cli.common import add_format_argument, format_table, print_json
from assocmem.errors import ConfigError


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "capacity",
        help="capacity frontier: most associations stored at accuracy ≥ τ, vs d",
        description="For each d, the largest N whose outer-product memory retrieves a fraction "
        "≥ τ of N uniformly weighted associations (search over N, repeated with independent "
        "seeds), and the fitted constants d²/(N log N), d/N and the exponent of N* in d.",
    )
    parser.add_argument("--dims", nargs="+", type=int, default=[16, 32, 64, 128, 256])
    parser.add_argument("--tau", type=float, default=0.99, help="accuracy threshold (default 0.99)")
    parser.add_argument(
        "--outputs", default="N", help="N: each input its own output (default); or a number M"
    )
    parser.add_argument("--trials", type=int, default=5, help="draws averaged per accuracy")
    parser.add_argument("--repeats", type=int, default=5, help="independent searches per d")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--device", default="cpu")
    add_format_argument(parser)
    parser.set_defaults(handler=run)


def _outputs(text: str) -> int | None:
    if text == "N":
        return None
    if text.isdigit() and int(text) >= 1:
        return int(text)
    raise ConfigError("outputs", f"must be N or an integer ≥ 1, got {text!r}")


def run(args: argparse.Namespace) -> int:
    if any(d < 1 for d in args.dims):
        raise ConfigError("dims", "must be integers ≥ 1")
    for name in ("trials", "repeats"):
        if getattr(args, name) < 1:
            raise ConfigError(name, f"must be an integer ≥ 1, got {getattr(args, name)}")
    points = hebbian_frontier(
        args.dims,
        tau=args.tau,
        n_outputs=_outputs(args.outputs),
        trials=args.trials,
        repeats=args.repeats,
        seed=args.seed,
        device=args.device,
    )
    fit = fit_frontier(points)
    if args.format == "json":
        print_json({"points": [p.__dict__ for p in points], "fit": fit.__dict__})
        return 0
    rows = [
        [d, list(p.n_star), n, c, f"[{lo:.3g}, {hi:.3g}]", r]
        for d, p, n, c, (lo, hi), r in zip(
            fit.dims, points, fit.n_star, fit.constant, fit.constant_ci, fit.d_over_n, strict=True
        )
    ]
    headers = ["d", "N* per repeat", "N* median", "d²/(N log N)", "95% CI", "d/N"]
    print(format_table(headers, rows))
    lo, hi = fit.exponent_ci
    print(f"\nN* ∝ d^{fit.exponent:.3f}  (95% CI [{lo:.3f}, {hi:.3f}]), τ = {args.tau}")
    print(
        "references: trained linear memories d² ≈ 1.3 N log N; conjectured threshold d² ≈ 2 N log N"
    )
    return 0

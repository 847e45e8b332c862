"""``assocmem theory``: the asymptotic laws of every scheme at a given α, Table 1, compute-optimal
allocation and the exact finite-data floor (Cabannes et al. 2024, §3; docs/theory.md)."""

import argparse
import math
from typing import Any

from assocmem.cli.common import (
    DEFAULT_MEMORY_GB,
    add_format_argument,
    add_memory_argument,
    finite_float,
    format_table,
    int_at_least,
    print_json,
)
from assocmem.config.errors import ConfigError
from assocmem.config.memory import check_budget


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "theory",
        help="theory table: exponents of every scheme, Table 1, compute-optimal d, data floor",
        description="Asymptotic scaling laws of associative memories (Cabannes et al. 2024, §3; "
        "docs/theory.md) at a given α: "
        "each scheme's exponents in d and T, the paper's Table 1, the compute-optimal "
        "d*(T) ≍ T^{1/α} and T*(d) ≍ d^α, and the exact finite-data floor Σ p(1−p)^T.",
    )
    add = parser.add_argument
    add("--alpha", type=finite_float, default=2.0, help="Zipf exponent α > 1 (default 2)")
    add(
        "--rho",
        type=finite_float,
        nargs="+",
        default=[1.0, 0.75, 0.5],
        help="ρ values for q = p^ρ (default 1 0.75 0.5)",
    )
    add("--schemes", nargs="+", metavar="SCHEME", help="scheme specs (default: one of each)")
    add(
        "-N",
        "--n-inputs",
        type=int_at_least(1),
        default=1000,
        help="N for the finite-data floor (default 1000)",
    )
    add(
        "--n-samples",
        type=finite_float,
        nargs="+",
        default=[10, 100, 1000, 10000],
        metavar="T",
        help="sample sizes T of the finite-data table (default 10 100 1000 10000)",
    )
    add(
        "--dims",
        type=finite_float,
        nargs="+",
        default=[10, 100, 1000],
        metavar="D",
        help="capacities d of the T*(d) table (default 10 100 1000)",
    )
    add_memory_argument(parser)
    add_format_argument(parser)
    parser.set_defaults(handler=run)


def _law_row(law: Any) -> list[Any]:
    def slope(value: float | None) -> str:
        return "—" if value is None else f"{value:.4g}"

    power = law.optimal_dim_power
    return [
        law.scheme,
        law.weighting,
        slope(law.dim_slope),
        slope(law.data_slope),
        "—" if power is None else f"T^{power:.4g}",
        law.note,
    ]


def law_dict(law: Any) -> dict[str, Any]:
    """A law for JSON: its fields, its slopes (negative) and the d*(T) power."""
    slopes = {"dim_slope": law.dim_slope, "data_slope": law.data_slope}
    return vars(law) | slopes | {"optimal_dim_power": law.optimal_dim_power}


def _validate(args: argparse.Namespace) -> None:
    if not math.isfinite(args.alpha) or args.alpha <= 1:
        raise ConfigError("alpha", f"the asymptotic laws need α > 1, got {args.alpha}")
    if args.n_inputs < 1:
        raise ConfigError("n_inputs", f"must be an integer ≥ 1, got {args.n_inputs}")
    if any(not (math.isfinite(t) and t >= 0) for t in args.n_samples):
        raise ConfigError("n_samples", "must be finite sample sizes T ≥ 0")
    if any(not (math.isfinite(d) and d > 0) for d in args.dims):
        raise ConfigError("dims", "must be finite dimensions d > 0")
    # the finite-data floor holds a few length-N vectors of float64 per sample size T
    need = 8 * args.n_inputs * (len(args.n_samples) + 3)
    check_budget(need, args.memory_gb or DEFAULT_MEMORY_GB, f"N = {args.n_inputs}", "lower N")


def run(args: argparse.Namespace) -> int:
    import numpy as np

    from assocmem.analysis.theory import (
        compute_optimal_samples,
        finite_data_table,
        scheme_law,
        table1,
        theory_table,
    )

    _validate(args)
    if args.schemes:
        laws = [scheme_law(spec, args.alpha) for spec in args.schemes]
    else:
        laws = theory_table(args.alpha, tuple(args.rho))
    rows = finite_data_table(args.n_inputs, args.alpha, args.n_samples)
    dims = np.asarray(args.dims, dtype=np.float64)
    optimal_samples = compute_optimal_samples(dims, args.alpha).tolist()
    if args.format == "json":
        print_json(
            {
                "kind": "theory",
                "alpha": args.alpha,
                "n_inputs": args.n_inputs,
                "schemes": [law_dict(law) for law in laws],
                "table1": [law_dict(law) for law in table1(args.alpha)],
                "finite_data": rows,
                "optimal_samples": [
                    {"dim": float(d), "optimal_n_samples": t}
                    for d, t in zip(dims, optimal_samples, strict=True)
                ],
            }
        )
        return 0
    headers = ["scheme", "weighting", "slope in d", "slope in T", "d*(T)", "note"]
    print(
        f"Asymptotic laws at α = {args.alpha:g}: E ≍ d^(slope in d) + T^(slope in T), constants "
        "free\n(in Python SchemeLaw.dim_slope and .data_slope: −dim_exponent, −data_exponent)\n"
    )
    print(format_table(headers, [_law_row(law) for law in laws]))
    print("\nTable 1 of the paper at this α:\n")
    print(format_table(headers, [_law_row(law) for law in table1(args.alpha)]))
    print(f"\nFinite data, perfect memory: exact Σ p(1−p)^T with N = {args.n_inputs}\n")
    table = [
        [r["n_samples"], r["finite_data_error"], r["asymptotic_shape"], r["optimal_dim"]]
        for r in rows
    ]
    print(format_table(["T", "Σ p(1−p)^T", "T^-(α-1)/α", "d*(T) = T^(1/α)"], table))
    print("\nData worth having for capacity d: T*(d) = d^α\n")
    print(
        format_table(
            ["d", "T*(d)"], [[float(d), t] for d, t in zip(dims, optimal_samples, strict=True)]
        )
    )
    return 0

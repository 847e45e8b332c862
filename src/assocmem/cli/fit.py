"""``assocmem fit``: measured scaling exponents, with trial-bootstrap intervals, next to theory.

Reads the JSON of ``assocmem closed-form --format json`` (a path, or ``-`` for stdin) and fits
the slope of the mean error in d (per scheme and T) and in T (per scheme and d).
"""

import argparse
import math
from typing import Any

from assocmem.cli.common import (
    DEFAULT_MEMORY_GB,
    LazyChoices,
    RawHelpFormatter,
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
from assocmem.config.files import load_json

EPILOG = """\
verdicts: consistent (the interval holds the asymptotic slope); finite-size miss (steeper or
shallower: the interval excludes the asymptotic slope — at finite N and d the curves bend, see
docs/theory.md); no theory (the scheme has no power law in that variable); no decay (the
automatic window found no decaying regime).
automatic window: points resolved from noise (mean > 2 sem), end segments flatter than 2/3 of
the curve's typical slope trimmed (plateaus at small x, floors at large x).
"""


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "fit",
        help="fit scaling exponents (with bootstrap intervals) to closed-form results",
        description="Fit E ≈ A·x^slope to the mean error in d (per scheme and T) and in T "
        "(per scheme and d), with percentile intervals from resampling trials, next to the "
        "theory slope (Cabannes et al. 2024; docs/theory.md).",
        epilog=EPILOG,
        formatter_class=RawHelpFormatter,
    )
    add = parser.add_argument
    add("results", help="JSON from `assocmem closed-form --format json` (path, or - for stdin)")
    add("--d-window", default="auto", metavar="LO:HI", help="fit window in d (default auto)")
    add("--t-window", default="auto", metavar="LO:HI", help="fit window in T (default auto)")
    add(
        "--loss",
        choices=LazyChoices("assocmem.analysis.fit", "LOSSES"),
        default="linear",
        metavar="LOSS",
        help="linear (least squares, default), soft_l1 or huber (robust)",
    )
    add(
        "--n-boot",
        type=int_at_least(10),
        default=1000,
        help="bootstrap resamples of the trials (default 1000)",
    )
    add("--level", type=finite_float, default=0.95, help="interval level (default 0.95)")
    add("--seed", type=int_at_least(0), default=0, help="bootstrap seed (default 0)")
    add("--schemes", nargs="+", metavar="SCHEME", help="fit only these schemes (spec strings)")
    add("--joint", action="store_true", help="also fit E ≈ A d^-a + B T^-b per scheme")
    add("--alpha", type=finite_float, help="α for the theory (default: the config's alpha)")
    add_memory_argument(parser)
    add_quiet_argument(parser)
    add_format_argument(parser)
    parser.set_defaults(handler=run)


def parse_window(field: str, text: str) -> tuple[float, float] | None:
    """``auto`` → None; ``LO:HI`` → (LO, HI) with 0 < LO < HI (either side may be empty)."""
    if text.strip().lower() == "auto":
        return None
    lo, sep, hi = text.partition(":")
    try:
        window = (float(lo) if lo.strip() else 0.0, float(hi) if hi.strip() else math.inf)
    except ValueError:
        window = (math.nan, math.nan)
    if not sep or not (0 <= window[0] < window[1]):
        raise ConfigError(field, f"bad window {text!r}; use auto or LO:HI with 0 ≤ LO < HI")
    return window


def load_results(path: str) -> dict[str, Any]:
    """The closed-form JSON payload; every problem is a one-line :class:`ConfigError`."""
    payload = load_json(path, "results")
    if not isinstance(payload, dict) or payload.get("kind") != "closed_form":
        raise ConfigError("results", "expected the JSON of `assocmem closed-form --format json`")
    records = payload.get("records")
    if not isinstance(records, list) or not records:
        raise ConfigError("results", "the file holds no records")
    needed = {"scheme", "dim", "n_samples", "errors"}
    if not all(isinstance(r, dict) and needed <= r.keys() for r in records):
        raise ConfigError("results", f"every record needs the keys {', '.join(sorted(needed))}")
    return payload


def fit_options(args: argparse.Namespace) -> Any:
    """The fit options given on the command line (a
    :class:`~assocmem.analysis.record_fits.FitOptions`)."""
    from assocmem.analysis.record_fits import FitOptions

    return FitOptions(
        d_window=parse_window("d_window", args.d_window),
        t_window=parse_window("t_window", args.t_window),
        loss=args.loss, n_boot=args.n_boot, level=args.level, seed=args.seed,
        schemes=args.schemes, joint=args.joint, alpha=args.alpha,
    )  # fmt: skip


def _fmt(value: float | None) -> str:
    return "—" if value is None else f"{value:+.3f}"


def print_tables(result: dict[str, Any], level: float) -> None:
    rows = []
    for f in result["fits"]:
        window = f"{f['window'][0]:g}–{f['window'][1]:g}" if "window" in f else ""
        interval = f"[{f['ci_low']:+.3f}, {f['ci_high']:+.3f}]" if "ci_low" in f else ""
        slope = _fmt(f.get("slope"))
        rows.append(
            [f["scheme"], f["variable"], f["at"], window, f.get("n_points", ""), slope, interval,
             _fmt(f["theory_slope"]), f["verdict"]]
        )  # fmt: skip
    pct = f"{100 * level:g}% CI"
    headers = ["scheme", "fit in", "at", "window", "points", "slope", pct, "theory", "verdict"]
    print(format_table(headers, rows))
    for j in result["joint"]:
        print(
            f"\njoint fit {j['scheme']}: E ≈ {j['prefactor_d']:.3g}·d^-{j['a']:.3f} "
            f"+ {j['prefactor_t']:.3g}·T^-{j['b']:.3f}; "
            f"a ∈ [{j['a_ci'][0]:.3f}, {j['a_ci'][1]:.3f}] "
            f"(theory {j['theory_a']}: {j['verdicts'][0]}), b ∈ [{j['b_ci'][0]:.3f}, "
            f"{j['b_ci'][1]:.3f}] (theory {j['theory_b']}: {j['verdicts'][1]})"
        )
    if any(f["verdict"].startswith("finite-size miss") for f in result["fits"]):
        print(
            "\nfinite-size miss: the interval excludes the asymptotic slope. The laws are "
            "N, d, T → ∞ statements: at finite N and d the curves bend (the head of p is stored "
            "first, classes are finite), and at fixed T (or d) the other term of the joint law "
            "is a floor once d ≳ T^(1/α) (or T ≳ d^α); use --d-window/--t-window to fit the "
            "regime a law describes."
        )


def run(args: argparse.Namespace) -> int:
    from assocmem.analysis.memory import check_bootstrap_memory
    from assocmem.analysis.record_fits import fit_records

    if not 0 < args.level < 1:
        raise ConfigError("level", f"must be in (0, 1), got {args.level}")
    payload = load_results(args.results)
    check_bootstrap_memory(payload["records"], args.n_boot, args.memory_gb or DEFAULT_MEMORY_GB)
    result = fit_records(payload, fit_options(args), progress=show_progress(args))
    if args.format == "json":
        print_json(result)
    else:
        print_tables(result, args.level)
    return 0

"""``assocmem closed-form``: closed-form memories, exact population error, from flags or TOML."""

import argparse
from dataclasses import fields
from typing import Any

from assocmem.cli.common import add_format_argument, format_table, load_toml, print_json
from assocmem.closed_form import run_closed_form, summary_rows
from assocmem.closed_form.config import ClosedFormConfig, config_from_mapping
from assocmem.closed_form.cost import CHOICES
from assocmem.config.files import load_probabilities
from assocmem.embeddings import EMBEDDING_KINDS, NESTED_CONVENTIONS
from assocmem.schemes import REGISTRY

EPILOG = """\
schemes (NAME or NAME:key=value,...): {schemes}
  e.g. population, power via population:rho=0.5, uniform, threshold:P=d/8, threshold:P=100,
  empirical, seen_once, empirical_threshold:P=d/12, empirical_threshold:P=d/12,rho=1
lists accept log:LOW:HIGH:COUNT (log-spaced integers); sample sizes accept inf (infinite data).
Flags override the values of --config.
"""


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "closed-form",
        help="closed-form memories W_q: exact error vs d and T, many trials",
        description="Closed-form associative memories W_q = Σ_x q(x) u_f(x) e_xᵀ: exact population "
        "error for every scheme × d × T, averaged over independent trials.",
        epilog=EPILOG.format(schemes=", ".join(sorted(REGISTRY))),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--config", metavar="TOML", help="a TOML file with any of the fields below")
    add = parser.add_argument
    add("-N", "--n-inputs", type=int, help="number of input tokens N (default 1000)")
    add("-M", "--n-outputs", type=int, help="number of outputs M (default 5)")
    add("--alpha", type=float, help="Zipf exponent α, p(x) ∝ (x+1)^-α (default 2)")
    add("--probabilities", metavar="FILE", help="a file of probabilities (any law; sets N)")
    add("--words", metavar="LANG", help="p = frequencies of the N most frequent words of LANG")
    add("--distribution", metavar="LAW", help="token law: zipf, zipf:ALPHA or words:LANG")
    add("--target", choices=("mod", "random"), help="f*(x) = x mod M, or a seeded random map")
    add("--label-noise", type=float, help="ε: a label is f*(x) w.p. 1-ε, else another output")
    add("--embedding", choices=EMBEDDING_KINDS, help="input embeddings (default gaussian)")
    add("--output-embedding", choices=EMBEDDING_KINDS, help="output embeddings (default spherical)")
    add("--nested", choices=NESTED_CONVENTIONS, help="nested-d convention (default truncate)")
    add("--schemes", nargs="+", metavar="SCHEME", help="memory schemes (see below)")
    add("--dims", nargs="+", metavar="D", help="dimensions d, e.g. 10 100 1000 or log:10:1000:20")
    add(
        "--n-samples",
        nargs="+",
        metavar="T",
        help="sample sizes T, e.g. inf 10 100 or log:10:10000:4",
    )
    add("--trials", type=int, help="independent trials (default 10)")
    add("--seed", type=int, help="base seed (default 0)")
    add("--device", help="cpu, cuda or cuda:K (default cpu)")
    add("--dtype", choices=("float32", "float64"), help="working precision (default float32)")
    add("--memory-gb", type=float, help="refuse runs whose working set exceeds this (default 4)")
    add("--readout", action="store_true", default=None, help="also softmax readout metrics")
    add("--sampler", choices=CHOICES, help="explicit E, exact-in-law draws, or auto (default)")
    add("--quiet", action="store_true", help="no progress bar")
    add_format_argument(parser)
    parser.set_defaults(handler=run)


def config_from_args(args: argparse.Namespace) -> ClosedFormConfig:
    """The TOML file's values, overridden by every flag given on the command line."""
    values: dict[str, Any] = load_toml(args.config) if args.config else {}
    flags = [f.name for f in fields(ClosedFormConfig) if f.name != "probabilities"]
    values.update({k: getattr(args, k) for k in flags if getattr(args, k, None) is not None})
    if args.distribution is not None:
        values["distribution"] = args.distribution
    if args.probabilities:
        values["probabilities"] = load_probabilities(args.probabilities)
        values.setdefault("n_inputs", len(values["probabilities"]))
    return config_from_mapping(values)


def run(args: argparse.Namespace) -> int:
    cfg = config_from_args(args)
    result = run_closed_form(cfg, progress=not args.quiet)
    if args.format == "json":
        print_json(result.to_json())
        return 0
    headers = ["scheme", "d", "T", "error", "sem", "head", "tail"]
    print(format_table(headers, summary_rows(result.records)))
    wall = result.provenance["wall_seconds"]
    print(
        f"\n{cfg.trials} trials, N = {cfg.n_inputs}, M = {cfg.n_outputs}, "
        f"{wall:.2f} s on {cfg.device}, {cfg.resolved_sampler} sampler"
    )
    return 0

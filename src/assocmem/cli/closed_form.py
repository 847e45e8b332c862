"""``assocmem closed-form``: closed-form memories, exact population error, from flags or TOML."""

import argparse
from dataclasses import fields
from typing import Any

from assocmem.cli.common import (
    LazyChoices,
    RawHelpFormatter,
    add_format_argument,
    add_memory_argument,
    add_quiet_argument,
    finite_float,
    format_table,
    int_at_least,
    load_toml,
    print_json,
    show_progress,
)
from assocmem.cli.fields import add_field_flags
from assocmem.config import problem
from assocmem.config.files import load_probabilities

EPILOG = """\
schemes: NAME or NAME:key=value,... (an unknown name lists the registered ones), e.g.
  population, power via population:rho=0.5, uniform, threshold:P=d/8, threshold:P=100,
  empirical, seen_once, empirical_threshold:P=d/12, empirical_threshold:P=d/12,rho=1
lists accept log:LOW:HIGH:COUNT (log-spaced integers); sample sizes accept inf (infinite data).
Flags override the values of --config. Model and memory: Cabannes et al. (2024), docs/.
"""
EMBEDDINGS = LazyChoices("assocmem.embeddings", "EMBEDDING_KINDS")  # also assocmem predict's
NESTED = LazyChoices("assocmem.embeddings", "NESTED_CONVENTIONS")
SAMPLERS = LazyChoices("assocmem.closed_form.cost", "CHOICES")


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "closed-form",
        help="closed-form memories W_q: exact error vs d and T, many trials",
        description="Closed-form associative memories W_q = Σ_x q(x) u_f(x) e_xᵀ: exact population "
        "error for every scheme × d × T, averaged over independent trials.",
        epilog=EPILOG,
        formatter_class=RawHelpFormatter,
    )
    parser.add_argument("--config", metavar="TOML", help="a TOML file with any of the fields below")
    _add_problem_arguments(parser)
    _add_embedding_arguments(parser)
    _add_run_arguments(parser)
    add_quiet_argument(parser)
    add_format_argument(parser)
    parser.set_defaults(handler=run)


def _add_problem_arguments(parser: argparse.ArgumentParser) -> None:
    """What is memorised: a flag per field of :class:`~assocmem.config.problem.Problem`, derived
    from its declaration; the token law's other spelling; the label rule."""
    add_field_flags(
        parser,
        fields(problem.Problem),
        defaults=problem.CLOSED_FORM.default,
        flags=problem.CLOSED_FORM.flag,
    )
    add_field_flags(parser, fields(problem.LawSpelling), defaults=lambda name: None)
    add = parser.add_argument
    add(
        "--label-rule",
        choices=("soft", "majority"),
        help="store each token's label law n(x,y)/n(x) (soft, default) or its majority label",
    )


def _add_embedding_arguments(parser: argparse.ArgumentParser) -> None:
    """The groups of similar tokens (clustered embeddings, group targets) and nested d."""
    add = parser.add_argument
    add("--n-groups", type=int_at_least(1), help="G groups of clustered embeddings / group targets")
    add("--similarity", type=finite_float, help="ρ: correlation within a group (clustered)")
    add("--grouping", choices=("random", "banded"), help="groups: random balanced or banded")
    add(
        "--nested",
        choices=NESTED,
        metavar="RULE",
        help="nested-d convention: truncate (default) or renormalize",
    )


def _add_run_arguments(parser: argparse.ArgumentParser) -> None:
    """Schemes, the (d, T) grid, trials and how the runs are computed."""
    add = parser.add_argument
    add("--schemes", nargs="+", metavar="SCHEME", help="memory schemes (see below)")
    add("--dims", nargs="+", metavar="D", help="dimensions d, e.g. 10 100 1000 or log:10:1000:20")
    add(
        "--n-samples",
        nargs="+",
        metavar="T",
        help="sample sizes T, e.g. inf 10 100 or log:10:10000:4",
    )
    add("--trials", type=int_at_least(1), help="independent trials (default 10)")
    add("--seed", type=int_at_least(0), help="base seed (default 0)")
    add("--device", help="cpu, cuda or cuda:K (default cpu)")
    add("--dtype", choices=("float32", "float64"), help="working precision (default float32)")
    add_memory_argument(parser)
    add("--readout", action="store_true", default=None, help="also softmax readout metrics")
    add(
        "--sampler",
        choices=SAMPLERS,
        metavar="SAMPLER",
        help="explicit (draw E), in_law (exact-in-law draws) or auto (default: by the cost model)",
    )
    add(
        "--counts",
        choices=("tokens", "multinomial"),
        help="finite-T counts: tokens (draw T samples; default) or multinomial (the count vector)",
    )


def config_from_args(args: argparse.Namespace) -> Any:
    """The TOML file's values, overridden by every flag given on the command line: a
    :class:`~assocmem.closed_form.config.ClosedFormConfig`."""
    from assocmem.closed_form.config import ClosedFormConfig, config_from_mapping

    values: dict[str, Any] = load_toml(args.config) if args.config is not None else {}
    flags = [f.name for f in fields(ClosedFormConfig) if f.name != "probabilities"]
    values.update({k: getattr(args, k) for k in flags if getattr(args, k, None) is not None})
    if args.distribution is not None:
        values["distribution"] = args.distribution
    if args.probabilities is not None:
        values["probabilities"] = load_probabilities(args.probabilities)
        values.setdefault("n_inputs", len(values["probabilities"]))
    return config_from_mapping(values)


def run(args: argparse.Namespace) -> int:
    from assocmem.analysis.memory import check_closed_form_memory
    from assocmem.closed_form import run_closed_form, summary_rows

    cfg = config_from_args(args)
    check_closed_form_memory(cfg)
    result = run_closed_form(cfg, progress=show_progress(args))
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
    free = dict.fromkeys(r["scheme"] for r in result.records if r["n_samples"] is None)
    if free and any(t is not None for t in cfg.n_samples):
        print(f"T = inf for {', '.join(free)}: sample-free schemes, whatever --n-samples")
    return 0

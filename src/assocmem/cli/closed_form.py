"""``assocmem closed-form``: closed-form memories, exact population error, from flags or TOML."""

import argparse
import math
from dataclasses import fields
from typing import Any

from assocmem.cli.common import (
    LazyChoices,
    RawHelpFormatter,
    add_format_argument,
    add_quiet_argument,
    format_table,
    load_toml,
    print_json,
    show_progress,
)
from assocmem.cli.fields import add_field_flags, spec_key
from assocmem.config import closed_form, problem
from assocmem.config.files import load_probabilities

EPILOG = """\
columns: error, the population error (the probability of a wrong answer for x drawn from p),
  mean over the trials; sem, its standard error; head and tail, its parts on the most probable
  tokens (the first tenth, head_fraction in --config) and on the others (error = head + tail).
schemes: NAME or NAME:key=value,... (an unknown name lists the registered ones), e.g.
  population, power via population:rho=0.5, uniform, threshold:P=d/8, threshold:P=100,
  empirical, seen_once, empirical_threshold:P=d/12, empirical_threshold:P=d/12,rho=1
lists accept log:LOW:HIGH:COUNT (log-spaced integers); sample sizes accept inf (infinite data).
Flags override the values of --config. Model and memory: Cabannes et al. (2024), docs/.
"""
# the choices of assocmem predict's flags (still written in cli/predict.py)
EMBEDDINGS = LazyChoices("assocmem.embeddings", "EMBEDDING_KINDS")
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
    _add_run_arguments(parser)
    add_quiet_argument(parser)
    add_format_argument(parser)
    parser.set_defaults(handler=run)


def _add_problem_arguments(parser: argparse.ArgumentParser) -> None:
    """What is memorised: a flag per field of :class:`~assocmem.config.problem.Problem`, derived
    from its declaration, and the token law's other spelling."""
    add_field_flags(
        parser,
        fields(problem.Problem),
        defaults=problem.CLOSED_FORM.default,
        flags=problem.CLOSED_FORM.flag,
    )
    add_field_flags(parser, fields(problem.LawSpelling), defaults=lambda name: None)


def _add_run_arguments(parser: argparse.ArgumentParser) -> None:
    """How the experiment runs (nested d, schemes, the (d, T) grid, trials, sampler, groups of
    similar tokens…): a flag per field of :class:`~assocmem.config.closed_form.ClosedFormRun`,
    derived from its declaration."""
    run_items = closed_form.run_fields()
    add_field_flags(parser, run_items.values(), defaults=lambda name: run_items[name].default)


def flag_keys() -> tuple[str, ...]:
    """The configuration keys the flags set, each from its declaration: the problem fields, the
    token law, then the run fields (``probabilities`` names a file: read by
    :func:`config_from_args`)."""
    declared = (*fields(problem.Problem), *fields(problem.LawSpelling))
    run_items = closed_form.run_fields().values()
    return tuple(spec_key(item) for item in (*declared, *run_items) if item.name != "probabilities")


def values_from_args(args: argparse.Namespace) -> dict[str, Any]:
    """The TOML file's values, overridden by every flag given on the command line: the mapping
    :func:`~assocmem.closed_form.config.config_from_mapping` reads."""
    values: dict[str, Any] = load_toml(args.config) if args.config is not None else {}
    values.update({k: getattr(args, k) for k in flag_keys() if getattr(args, k, None) is not None})
    if args.probabilities is not None:
        values["probabilities"] = load_probabilities(args.probabilities)
        values.setdefault("n_inputs", len(values["probabilities"]))
    return values


def config_from_args(args: argparse.Namespace) -> Any:
    """The TOML file's values, overridden by every flag given on the command line: a
    :class:`~assocmem.closed_form.config.ClosedFormConfig`."""
    from assocmem.closed_form.config import config_from_mapping

    return config_from_mapping(values_from_args(args))


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
        f"{wall:.2f} s on {cfg.device}, {cfg.resolved_sampler} sampler\n"
        "error: probability of a wrong answer, mean over trials; sem: its standard error;\n"
        f"head, tail: its parts on the {math.ceil(cfg.head_fraction * cfg.n_inputs)} most "
        "probable tokens and the others"
    )
    sampled = {r["scheme"] for r in result.records if r["n_samples"] is not None}
    free = [s for s in dict.fromkeys(r["scheme"] for r in result.records) if s not in sampled]
    if free and any(t is not None for t in cfg.n_samples):
        print(f"T = inf for {', '.join(free)}: sample-free schemes, whatever --n-samples")
    return 0

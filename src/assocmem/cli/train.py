"""``assocmem train``: train memories by SGD / Adam, one config or a small grid, from flags or
TOML; prints seed-averaged exact population errors (or every run with ``--format json``)."""

import argparse
from dataclasses import fields
from typing import Any

from assocmem.cli.common import (
    DEFAULT_MEMORY_GB,
    RawHelpFormatter,
    add_format_argument,
    add_memory_argument,
    add_quiet_argument,
    format_table,
    load_toml,
    print_json,
    show_progress,
)
from assocmem.cli.fields import add_field_flags, flag_name, spec_key
from assocmem.config import problem, training
from assocmem.config.hyper import hyper_parameter_fields

EPILOG = """\
Every list flag is a grid axis; the runs are the product of all axes. Runs that differ only in
seed and lr are trained together in one batched tensor program.
lr convention "paper" (default): Adam moves W by lr/d and embeddings by lr/sqrt(d) (the
authors' grid); SGD uses lr as given. Adam's default betas are (0, 0), the paper's sign-like Adam.
e.g.  assocmem train --optimizers sgd adam --dims 10 100 1000 --lrs 0.1 1 10 100 --seeds 10
Flags override the values of --config (a TOML file with the same names, lists for axes).
"""


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "train",
        help="trained memories (SGD, Adam): exact error after one pass, batched over runs",
        description="Train associative memories by gradient descent on the cross-entropy "
        "(one pass over T fresh Zipf samples, or full batch) and report the exact population "
        "error, averaged over seeds. Token laws: Zipf or real word frequencies (--distribution); "
        "noisy labels (--label-noise): also the error against noisy labels, the Bayes error ε and "
        "the excess error.",
        epilog=EPILOG,
        formatter_class=RawHelpFormatter,
    )
    parser.add_argument(
        "--config", metavar="TOML", help="a TOML file with any of the settings below"
    )
    _add_problem_arguments(parser)
    _add_run_arguments(parser)
    add_memory_argument(parser)
    add_quiet_argument(parser)
    add_format_argument(parser)
    parser.set_defaults(handler=run)


def _add_problem_arguments(parser: argparse.ArgumentParser) -> None:
    """What is memorised: a flag per problem field of the training setup, derived from its
    declaration (:data:`~assocmem.config.problem.TRAINING`); the token laws as an axis."""
    setup = problem.TRAINING
    declared = problem.problem_fields()
    add_field_flags(
        parser,
        [declared[name] for name in setup.names],
        defaults=setup.default,
        flags=setup.flag,
        axes=("label_noise",),
        aliases={name: [flag_name(name) + "s"] for name in RENAMED_FIELDS},
    )
    law = fields(problem.LawSpelling)
    add_field_flags(parser, law, defaults=lambda name: None, axes=[item.name for item in law])


def _add_run_arguments(parser: argparse.ArgumentParser) -> None:
    """How the runs train (the grid's axes, training, schedule, recording, device) and the
    optimisers' hyper-parameters: a flag each, derived from the declarations
    (:class:`~assocmem.config.training.TrainingRun`, :mod:`assocmem.config.hyper`)."""
    run_items = training.run_fields()
    add_field_flags(parser, run_items.values(), defaults=lambda name: run_items[name].default)
    hyper = hyper_parameter_fields()
    add_field_flags(parser, hyper.values(), defaults=lambda name: hyper[name].default)
    parser.add_argument(
        "--best-lr",
        action="store_true",
        help="table: keep, per setting, the lr with the lowest seed-averaged error",
    )


RENAMED_FIELDS = ("embedding", "output_embedding")  # read as FLAG + "s" too (before 0.2)


def flag_keys() -> tuple[str, ...]:
    """The spec keys the flags set, each from its declaration: the problem fields of the training
    setup, the optimisers' hyper-parameters, the token law, then the run fields (their grid
    axes in the order the runs are nested: the order of the runs a grid expands to)."""
    law = fields(problem.LawSpelling)
    run_items = training.run_fields().values()
    return (*problem.TRAINING.names, *hyper_parameter_fields(), *map(spec_key, law),
            *map(spec_key, run_items))  # fmt: skip


def spec_from_args(args: argparse.Namespace) -> dict[str, Any]:
    """The TOML file's settings, overridden by every flag given on the command line."""
    spec: dict[str, Any] = load_toml(args.config) if args.config is not None else {}
    spec.update({k: getattr(args, k) for k in flag_keys() if getattr(args, k, None) is not None})
    if args.layer_norm is not None:
        spec["layer_norm"] = [value == "on" for value in args.layer_norm]
    return spec


def run(args: argparse.Namespace) -> int:
    from assocmem.analysis.memory import check_train_grid_memory
    from assocmem.ops.lr_selection import best_lr_records
    from assocmem.training.engine import train
    from assocmem.training.grid import SETTING_COLUMNS, expand_grid, summarize, summary_headers

    spec = spec_from_args(args)
    check_train_grid_memory(spec, args.memory_gb or DEFAULT_MEMORY_GB)
    configs = expand_grid(spec)
    results = train(configs, progress=show_progress(args))
    if args.format == "json":
        print_json({"runs": [r.to_dict() for r in results], "summary": summarize(results)})
        return 0
    rows = summarize(results)
    if args.best_lr:
        rows = best_lr_records(rows, [c for c in SETTING_COLUMNS if any(c in r for r in rows)])
    headers = summary_headers(rows)
    print(format_table(headers, [[row[h] for h in headers] for row in rows]))
    return 0

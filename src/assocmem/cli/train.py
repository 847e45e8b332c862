"""``assocmem train``: train memories by SGD / Adam, one config or a small grid, from flags or
TOML; prints seed-averaged exact population errors (or every run with ``--format json``)."""

import argparse
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
    load_toml,
    print_json,
    show_progress,
)
from assocmem.cli.fields import add_field_flags, flag_name
from assocmem.config import problem
from assocmem.config.hyper import hyper_parameter_fields

CONFIG = "assocmem.training.config"

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
    _add_axis_arguments(parser)
    _add_training_arguments(parser)
    _add_optimizer_arguments(parser)
    _add_output_arguments(parser)
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
    parser.add_argument(
        "--distribution",
        nargs="+",
        metavar="LAW",
        help="token laws (zipf, zipf:ALPHA or words:LANG; an axis; default zipf at --alpha)",
    )


def _add_axis_arguments(parser: argparse.ArgumentParser) -> None:
    """The axes of the grid: models, optimisers, d, T, batch sizes, learning rates, seeds."""
    add = parser.add_argument
    add(
        "--models",
        nargs="+",
        choices=LazyChoices(CONFIG, "MODELS"),
        metavar="MODEL",
        help="matrix (default) | learned | relu | qupdate",
    )
    add(
        "--optimizers",
        nargs="+",
        choices=LazyChoices("assocmem.training.optimizers", "OPTIMIZERS"),
        metavar="OPT",
        help="registered optimisers, e.g. sgd (default), adam",
    )
    add("--layer-norm", nargs="+", choices=("off", "on"), help="L2-normalise W e_x (default off)")
    add("--dims", nargs="+", type=int_at_least(1), metavar="D", help="dimensions d (default 100)")
    add(
        "--n-samples",
        nargs="+",
        type=int_at_least(1),
        metavar="T",
        help="sample sizes T (default 10240)",
    )
    add(
        "--batch-sizes",
        nargs="+",
        type=int_at_least(1),
        metavar="B",
        help="batch sizes B (default 64)",
    )
    add("--lrs", nargs="+", type=finite_float, metavar="LR", help="learning rates (default 1)")
    add("--seeds", type=int_at_least(1), help="number of seeds 0..k-1 (default 1)")


def _add_training_arguments(parser: argparse.ArgumentParser) -> None:
    """How a run trains: full batch, initialisation, the lr convention."""
    add = parser.add_argument
    add("--full-batch", action="store_true", default=None, help="population-gradient training")
    add("--n-steps", type=int_at_least(1), help="steps of full-batch training")
    add(
        "--init",
        choices=LazyChoices(CONFIG, "INITS"),
        metavar="INIT",
        help="initial W: gaussian N(0, 1/d) (default) or zero",
    )
    add(
        "--lr-scaling",
        choices=LazyChoices(CONFIG, "LR_SCALINGS"),
        metavar="RULE",
        help="learning-rate convention: paper (default) or none",
    )


def _add_optimizer_arguments(parser: argparse.ArgumentParser) -> None:
    """The optimisers' hyper-parameters and the learning-rate schedule."""
    add = parser.add_argument
    hyper = hyper_parameter_fields()  # a flag each, derived from its declaration
    add_field_flags(parser, hyper.values(), defaults=lambda name: hyper[name].default)
    add(
        "--schedule",
        choices=LazyChoices(CONFIG, "SCHEDULES"),
        metavar="SCHEDULE",
        help="lr schedule: constant (default) or step",
    )
    add(
        "--decay-steps",
        nargs="+",
        type=int_at_least(0),
        help="steps at which the step schedule decays",
    )
    add("--decay-factor", type=finite_float, help="multiplier at each decay step (default 0.1)")


def _add_output_arguments(parser: argparse.ArgumentParser) -> None:
    """What is recorded, where it runs and how the table is shown."""
    add = parser.add_argument
    add("--eval-every", type=int_at_least(0), help="record the error every k steps (JSON output)")
    add(
        "--snapshot-steps",
        nargs="+",
        type=int_at_least(0),
        help="record softmax scores after these steps",
    )
    add("--device", help="cpu, cuda or cuda:K (default cpu)")
    add(
        "--best-lr",
        action="store_true",
        help="table: keep, per setting, the lr with the lowest seed-averaged error",
    )


OTHER_KEYS = (
    "distribution", "models", "optimizers", "dims", "n_samples", "batch_sizes", "lrs", "seeds",
    "full_batch", "n_steps", "init", "lr_scaling", "schedule", "decay_steps", "decay_factor",
    "eval_every", "snapshot_steps", "device",
)  # fmt: skip
RENAMED_FIELDS = ("embedding", "output_embedding")  # read as FLAG + "s" too (before 0.2)


def flag_keys() -> tuple[str, ...]:
    """The spec keys the flags set: the problem fields of the training setup, the optimisers'
    hyper-parameters (both derived from their declarations), then :data:`OTHER_KEYS`."""
    return (*problem.TRAINING.names, *hyper_parameter_fields(), *OTHER_KEYS)


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

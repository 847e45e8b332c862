"""``assocmem train``: train memories by SGD / Adam, one config or a small grid, from flags or
TOML; prints seed-averaged exact population errors (or every run with ``--format json``)."""

import argparse
from typing import Any

from assocmem.analysis.lr_selection import best_lr_records
from assocmem.cli.common import add_format_argument, format_table, load_toml, print_json
from assocmem.laws.words import DISTRIBUTION_SPELLINGS
from assocmem.training.config import EMBEDDING_KINDS, INITS, LR_SCALINGS, MODELS, SCHEDULES
from assocmem.training.engine import train
from assocmem.training.grid import SETTING_COLUMNS, expand_grid, summarize, summary_headers
from assocmem.training.optimizers import OPTIMIZERS

EPILOG = """\
Every list flag is a grid axis; the runs are the product of all axes. Runs that differ only in
seed and lr are trained together in one batched tensor program.
lr convention "paper" (default): Adam moves W by lr/d and embeddings by lr/sqrt(d) (the
authors' grid); SGD uses lr as given. Adam's default betas are (0, 0), the paper's sign-like Adam.
e.g.  assocmem train --optimizers sgd adam --dims 10 100 1000 --lrs 0.1 1 10 100 --seeds 10
Flags override the values of --config (a TOML file with the same names, lists for axes).
"""


def register(subparsers: Any) -> None:
    # One declaration per flag (every TrainConfig field and grid axis): long, but flat.
    parser = subparsers.add_parser(
        "train",
        help="trained memories (SGD, Adam): exact error after one pass, batched over runs",
        description="Train associative memories by gradient descent on the cross-entropy "
        "(one pass over T fresh Zipf samples, or full batch) and report the exact population "
        "error, averaged over seeds. Token laws: Zipf or real word frequencies (--distribution); "
        "noisy labels (--label-noise): also the error against noisy labels, the Bayes error ε and "
        "the excess error.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add = parser.add_argument
    add("--config", metavar="TOML", help="a TOML file with any of the settings below")
    add("-N", "--n-inputs", type=int, help="number of input tokens N (default 100)")
    add("-M", "--n-outputs", type=int, help="number of outputs M (default 5)")
    add("--alpha", type=float, help="Zipf exponent α (default 2)")
    add(
        "--distribution",
        nargs="+",
        metavar="LAW",
        help=f"token laws ({DISTRIBUTION_SPELLINGS}; an axis; default zipf at --alpha)",
    )
    add("--words", metavar="LANG", help="p = frequencies of the N most frequent words of LANG")
    add(
        "--label-noise",
        nargs="+",
        type=float,
        metavar="EPS",
        help="ε: a sample's label is f*(x) w.p. 1-ε, else another output (an axis; default 0)",
    )
    add("--models", nargs="+", choices=MODELS, help="matrix | learned | relu | qupdate")
    add("--optimizers", nargs="+", choices=list(OPTIMIZERS), help="default sgd")
    add("--layer-norm", nargs="+", choices=("off", "on"), help="L2-normalise W e_x (default off)")
    add("--dims", nargs="+", type=int, help="dimensions d (default 100)")
    add("--n-samples", nargs="+", type=int, help="sample sizes T (default 10240)")
    add("--batch-sizes", nargs="+", type=int, help="batch sizes B (default 64)")
    add("--lrs", nargs="+", type=float, help="learning rates (default 1)")
    add("--seeds", type=int, help="number of seeds 0..k-1 (default 1)")
    add("--full-batch", action="store_true", default=None, help="population-gradient training")
    add("--n-steps", type=int, help="steps of full-batch training")
    add("--init", choices=INITS, help="initial W (default gaussian N(0, 1/d))")
    add("--embeddings", choices=EMBEDDING_KINDS, help="input embeddings (default gaussian)")
    add("--output-embeddings", choices=EMBEDDING_KINDS, help="output embeddings (default gaussian)")
    add("--lr-scaling", choices=LR_SCALINGS, help="learning-rate convention (default paper)")
    add("--momentum", type=float, help="SGD momentum (default 0; nesterov: 0.9)")
    add("--weight-decay", type=float, help="L2 weight decay (default 0)")
    add("--betas", nargs=2, type=float, help="Adam betas (default 0 0)")
    add("--eps", type=float, help="Adam eps (default 1e-8)")
    add("--schedule", choices=SCHEDULES, help="lr schedule (default constant)")
    add("--decay-steps", nargs="+", type=int, help="steps at which the step schedule decays")
    add("--decay-factor", type=float, help="multiplier at each decay step (default 0.1)")
    add("--eval-every", type=int, help="record the error every k steps (JSON output)")
    add("--snapshot-steps", nargs="+", type=int, help="record softmax scores after these steps")
    add("--device", choices=("cpu", "cuda"), help="default cpu")
    add(
        "--best-lr",
        action="store_true",
        help="table: keep, per setting, the lr with the lowest seed-averaged error",
    )
    add("--quiet", action="store_true", help="no progress bar")
    add_format_argument(parser)
    parser.set_defaults(handler=run)


FLAG_KEYS = (
    "n_inputs", "n_outputs", "alpha", "distribution", "words", "label_noise", "models",
    "optimizers", "dims", "n_samples",
    "batch_sizes", "lrs", "seeds", "full_batch", "n_steps", "init", "embeddings",
    "output_embeddings", "lr_scaling", "momentum", "weight_decay", "betas", "eps", "schedule",
    "decay_steps", "decay_factor", "eval_every", "snapshot_steps", "device",
)  # fmt: skip


def spec_from_args(args: argparse.Namespace) -> dict[str, Any]:
    """The TOML file's settings, overridden by every flag given on the command line."""
    spec: dict[str, Any] = load_toml(args.config) if args.config else {}
    spec.update({k: getattr(args, k) for k in FLAG_KEYS if getattr(args, k) is not None})
    if args.layer_norm is not None:
        spec["layer_norm"] = [value == "on" for value in args.layer_norm]
    return spec


def run(args: argparse.Namespace) -> int:
    configs = expand_grid(spec_from_args(args))
    results = train(configs, progress=not args.quiet)
    if args.format == "json":
        print_json({"runs": [r.to_dict() for r in results], "summary": summarize(results)})
        return 0
    rows = summarize(results)
    if args.best_lr:
        rows = best_lr_records(rows, [c for c in SETTING_COLUMNS if any(c in r for r in rows)])
    headers = summary_headers(rows)
    print(format_table(headers, [[row[h] for h in headers] for row in rows]))
    return 0

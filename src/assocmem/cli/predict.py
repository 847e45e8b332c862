"""``assocmem predict``: predicted error curves (interference model) against Monte Carlo."""

import argparse
from typing import Any

from assocmem.analysis.predict import compare_records, predict_config, summarise_comparison
from assocmem.cli.common import add_format_argument, format_table, print_json
from assocmem.closed_form import run_closed_form
from assocmem.closed_form.config import ClosedFormConfig, config_from_mapping
from assocmem.closed_form.cost import CHOICES
from assocmem.config.errors import ConfigError
from assocmem.config.files import load_probabilities, load_toml
from assocmem.embeddings import EMBEDDING_KINDS, NESTED_CONVENTIONS
from assocmem.experiments.claims import FIG1_DIMS, FIG1_SAMPLES, FIG4_DIMS

SETTINGS: dict[str, dict[str, Any]] = {
    "fig4": {
        "n_inputs": 1000,
        "schemes": ("uniform", "population", "threshold:P=d/8"),
        "dims": FIG4_DIMS,
        "trials": 100,
    },
    "fig1": {
        "n_inputs": 1000,
        "schemes": ("empirical_threshold:P=d/12",),
        "dims": FIG1_DIMS,
        "n_samples": FIG1_SAMPLES,
        "trials": 100,
    },
}
FLAGS = (
    "n_inputs", "n_outputs", "alpha", "target", "embedding", "output_embedding", "nested",
    "schemes", "dims", "n_samples", "trials", "seed", "device", "dtype", "memory_gb", "sampler",
)  # fmt: skip


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "predict",
        help="predicted error curves from the interference model, against Monte Carlo",
        description="Predict the mean population error at every d from the interference "
        "picture of Theorem 1 (Gaussian scores; see assocmem.analysis.predict) and compare it "
        "with the closed-form Monte Carlo engine. Same experiment flags as closed-form.",
    )
    add = parser.add_argument
    add("--setting", choices=sorted(SETTINGS), help="a paper setting (flags override it)")
    add("--config", metavar="TOML", help="a TOML file with closed-form fields")
    add("-N", "--n-inputs", type=int, help="number of input tokens N")
    add("-M", "--n-outputs", type=int, help="number of outputs M")
    add("--alpha", type=float, help="Zipf exponent α")
    add("--probabilities", metavar="FILE", help="a file of probabilities (any law; sets N)")
    add("--target", choices=("mod", "random"), help="f*(x) = x mod M, or a seeded random map")
    add("--embedding", choices=EMBEDDING_KINDS, help="input embeddings (default gaussian)")
    add("--output-embedding", choices=EMBEDDING_KINDS, help="output embeddings (default spherical)")
    add("--nested", choices=NESTED_CONVENTIONS, help="nested-d convention (default truncate)")
    add("--schemes", nargs="+", metavar="SCHEME", help="memory schemes")
    add("--dims", nargs="+", metavar="D", help="dimensions d (log:LOW:HIGH:COUNT allowed)")
    add("--n-samples", nargs="+", metavar="T", help="sample sizes T (inf allowed)")
    add("--trials", type=int, help="Monte Carlo trials")
    add("--seed", type=int, help="base seed")
    add("--device", help="cpu, cuda or cuda:K for the Monte Carlo run")
    add("--dtype", choices=("float32", "float64"), help="Monte Carlo precision")
    add("--memory-gb", type=float, help="Monte Carlo memory budget")
    add("--sampler", choices=CHOICES, help="Monte Carlo sampler: explicit, in_law or auto")
    add("--n-draws", type=int, help="sampled count vectors averaged at finite T (default: trials)")
    add("--no-mc", action="store_true", help="print the prediction only")
    add("--min-dim", type=int, default=30, help="summaries also over d ≥ this (default 30)")
    add_format_argument(parser)
    parser.set_defaults(handler=run)


def config_from_args(args: argparse.Namespace) -> ClosedFormConfig:
    """Setting, then TOML, then flags (later wins)."""
    values: dict[str, Any] = dict(SETTINGS[args.setting]) if args.setting else {}
    if args.config:
        values.update(load_toml(args.config))
    values.update({k: getattr(args, k) for k in FLAGS if getattr(args, k) is not None})
    if args.probabilities:
        values["probabilities"] = load_probabilities(args.probabilities)
        values.setdefault("n_inputs", len(values["probabilities"]))
    return config_from_mapping(values)


def run(args: argparse.Namespace) -> int:
    cfg = config_from_args(args)
    n_draws = cfg.trials if args.n_draws is None else args.n_draws
    if n_draws < 1:
        raise ConfigError("n_draws", f"must be an integer ≥ 1, got {n_draws}")
    predictions = predict_config(cfg, n_draws=n_draws)
    if args.no_mc:
        if args.format == "json":
            print_json({"kind": "prediction", "config": cfg.to_dict(), "records": predictions})
        else:
            table = [
                [p["scheme"], p["n_samples"] or "inf", p["dim"], p["predicted"]]
                for p in predictions
            ]
            print(format_table(["scheme", "T", "d", "predicted"], table))
        return 0
    rows = compare_records(predictions, run_closed_form(cfg).records)
    summary = summarise_comparison(rows, args.min_dim)
    if args.format == "json":
        payload = {"kind": "prediction_vs_mc", "config": cfg.to_dict(), "n_draws": n_draws}
        print_json(payload | {"records": rows, "summary": summary})
        return 0
    compared = [
        [r["scheme"], r["n_samples"] or "inf", r["dim"], r["predicted"], r["mc_mean"], r["mc_sem"],
         f"{100 * r['rel_error']:+.1f}%", f"{r['z']:+.1f}"]
        for r in rows
    ]  # fmt: skip
    headers = ["scheme", "T", "d", "predicted", "MC mean", "MC sem", "rel. error", "z"]
    print(format_table(headers, compared))
    print(f"\n|relative error| of the predicted mean ({cfg.trials} MC trials):\n")
    summary_rows = [
        [s["scheme"], s["n_samples"] or "inf", _pct(s["median_abs_rel"]), _pct(s["max_abs_rel"]),
         _pct(s["median_abs_rel_large_d"]), _pct(s["max_abs_rel_large_d"]), s["max_abs_error"]]
        for s in summary
    ]  # fmt: skip
    d = args.min_dim
    headers = ["scheme", "T", "median", "max", f"median d≥{d}", f"max d≥{d}", "max |abs|"]
    print(format_table(headers, summary_rows))
    if any(t is not None for t in cfg.n_samples):
        print(f"\nfinite T: prediction averaged over the sampled counts of {n_draws} trials")
    return 0


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f}%"

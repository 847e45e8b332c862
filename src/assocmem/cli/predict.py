"""``assocmem predict``: predicted error curves (interference model) against Monte Carlo."""

import argparse
from typing import Any

from assocmem.cli.closed_form import EMBEDDINGS, NESTED, SAMPLERS
from assocmem.cli.common import (
    add_format_argument,
    add_memory_argument,
    add_quiet_argument,
    finite_float,
    format_table,
    int_at_least,
    print_json,
    show_progress,
)
from assocmem.config.files import load_probabilities, load_toml

SETTINGS = ("fig1", "fig4")  # the paper's settings of Figures 1 and 4 (see settings())


def settings(name: str) -> dict[str, Any]:
    """The closed-form fields of a paper setting: ``fig4`` or ``fig1``."""
    from assocmem.experiments.figure1 import FIG1_DIMS, FIG1_SAMPLES
    from assocmem.experiments.figure4 import FIG4_DIMS

    if name == "fig4":
        schemes: tuple[str, ...] = ("uniform", "population", "threshold:P=d/8")
        return {"n_inputs": 1000, "schemes": schemes, "dims": FIG4_DIMS, "trials": 100}
    return {"n_inputs": 1000, "schemes": ("empirical_threshold:P=d/12",), "dims": FIG1_DIMS,
            "n_samples": FIG1_SAMPLES, "trials": 100}  # fmt: skip


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
    add("--setting", choices=SETTINGS, help="a paper setting (flags override it)")
    add("--config", metavar="TOML", help="a TOML file with closed-form fields")
    add("-N", "--n-inputs", type=int_at_least(1), help="number of input tokens N (default 1000)")
    add("-M", "--n-outputs", type=int_at_least(1), help="number of outputs M (default 5)")
    add("--alpha", type=finite_float, help="Zipf exponent α (default 2)")
    add("--probabilities", metavar="FILE", help="a file of probabilities (any law; sets N)")
    add("--target", choices=("mod", "random"), help="f*(x) = x mod M, or a seeded random map")
    add("--embedding", choices=EMBEDDINGS, metavar="KIND", help="input embeddings (gaussian)")
    add("--output-embedding", choices=EMBEDDINGS, metavar="KIND", help="output embeddings")
    add("--nested", choices=NESTED, metavar="RULE", help="nested-d convention (truncate)")
    add("--schemes", nargs="+", metavar="SCHEME", help="memory schemes")
    add("--dims", nargs="+", metavar="D", help="dimensions d (log:LOW:HIGH:COUNT allowed)")
    add("--n-samples", nargs="+", metavar="T", help="sample sizes T (inf allowed)")
    add("--trials", type=int_at_least(1), help="Monte Carlo trials (default 10)")
    add("--seed", type=int_at_least(0), help="base seed (default 0)")
    add("--device", help="cpu, cuda or cuda:K for the Monte Carlo run")
    add("--dtype", choices=("float32", "float64"), help="Monte Carlo precision")
    add_memory_argument(parser)
    add(
        "--sampler",
        choices=SAMPLERS,
        metavar="SAMPLER",
        help=(
            "Monte Carlo sampler: explicit (draw E), in_law (exact-in-law draws) or auto "
            "(default: by the cost model)"
        ),
    )
    add(
        "--n-draws",
        type=int_at_least(1),
        help="sampled count vectors averaged at finite T (default: trials)",
    )
    add("--no-mc", action="store_true", help="print the prediction only")
    add(
        "--min-dim",
        type=int_at_least(1),
        default=30,
        help="summaries also over d ≥ this (default 30)",
    )
    add_quiet_argument(parser)
    add_format_argument(parser)
    parser.set_defaults(handler=run)


def config_from_args(args: argparse.Namespace) -> Any:
    """Setting, then TOML, then flags (later wins): a closed-form config."""
    from assocmem.closed_form.config import config_from_mapping

    values: dict[str, Any] = settings(args.setting) if args.setting else {}
    if args.config is not None:
        values.update(load_toml(args.config))
    values.update({k: getattr(args, k) for k in FLAGS if getattr(args, k) is not None})
    if args.probabilities is not None:
        values["probabilities"] = load_probabilities(args.probabilities)
        values.setdefault("n_inputs", len(values["probabilities"]))
    return config_from_mapping(values)


def run(args: argparse.Namespace) -> int:
    from assocmem.analysis.memory import check_closed_form_memory
    from assocmem.analysis.predict import (
        check_min_dim,
        compare_records,
        predict_config,
        summarise_comparison,
    )
    from assocmem.closed_form import run_closed_form

    cfg = config_from_args(args)
    check_min_dim(args.min_dim)
    if not args.no_mc:
        check_closed_form_memory(cfg)
    n_draws = cfg.trials if args.n_draws is None else args.n_draws
    progress = show_progress(args)
    predictions = predict_config(cfg, n_draws=n_draws, progress=progress)
    if args.no_mc:
        if args.format == "json":
            print_json({"kind": "prediction", "config": cfg.to_dict(), "records": predictions})
        else:
            table = [
                [p["scheme"], _size(p["n_samples"]), p["dim"], p["predicted"]] for p in predictions
            ]
            print(format_table(["scheme", "T", "d", "predicted"], table))
        return 0
    rows = compare_records(predictions, run_closed_form(cfg, progress=progress).records)
    summary = summarise_comparison(rows, args.min_dim)
    if args.format == "json":
        payload = {"kind": "prediction_vs_mc", "config": cfg.to_dict(), "n_draws": n_draws}
        print_json(payload | {"records": rows, "summary": summary})
        return 0
    compared = [
        [r["scheme"], _size(r["n_samples"]), r["dim"], r["predicted"], r["mc_mean"], r["mc_sem"],
         f"{100 * r['rel_error']:+.1f}%", f"{r['z']:+.1f}"]
        for r in rows
    ]  # fmt: skip
    headers = ["scheme", "T", "d", "predicted", "MC mean", "MC sem", "rel. error", "z"]
    print(format_table(headers, compared))
    print(f"\n|relative error| of the predicted mean ({cfg.trials} MC trials):\n")
    summary_rows = [
        [s["scheme"], _size(s["n_samples"]), _pct(s["median_abs_rel"]), _pct(s["max_abs_rel"]),
         _pct(s["median_abs_rel_large_d"]), _pct(s["max_abs_rel_large_d"]), s["max_abs_error"]]
        for s in summary
    ]  # fmt: skip
    d = args.min_dim
    headers = ["scheme", "T", "median", "max", f"median d≥{d}", f"max d≥{d}", "max |abs|"]
    print(format_table(headers, summary_rows))
    if any(t is not None for t in cfg.n_samples):
        print(f"\nfinite T: prediction averaged over the sampled counts of {n_draws} trials")
    return 0


def _size(n_samples: int | None) -> Any:
    """A sample size T as shown: None (infinite data) as inf, T = 0 as 0."""
    return "inf" if n_samples is None else n_samples


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f}%"

"""``assocmem compare-trained``: trained memories on real word laws vs Zipf(α̂), and under label
noise: error (or excess error) vs d, seed-averaged, with the fitted slope in d."""

import argparse
from typing import Any

from assocmem.cli.common import (
    DEFAULT_MEMORY_GB,
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
from assocmem.config.errors import ConfigError

DEFAULTS: dict[str, Any] = {  # the paper's Adam setting (finding 4): B = 256, T = 10240
    "n_outputs": 5,
    "dims": [10, 20, 50, 100, 200, 500, 1000],
    "optimizers": ["adam"],
    "lrs": [1.0, 10.0],
    "batch_sizes": [256],
    "n_samples": [10240],
    "seeds": 5,
}


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "compare-trained",
        help="trained memories: real word laws vs Zipf(α̂); label noise ε (excess error vs d)",
        description="laws LANG...: train the same grid on words:LANG and on the Zipf law over "
        "the same N closest in KL (α̂); noise: train it at each ε of --label-noise. Prints the "
        "seed-averaged error (laws) or excess error over the Bayes error ε (noise) per d, and "
        "its log-log slope in d with a 95 % seed-bootstrap interval. With several --lrs, each "
        "(law or ε, d) keeps the lr of lowest seed-averaged error. Defaults: M = 5, sign-like "
        "Adam, B = 256, T = 10240, lr ∈ {1, 10}, 5 seeds, d = 10…1000.",
    )
    parser.add_argument(
        "mode", choices=("laws", "noise"), help="laws: real word laws vs Zipf; noise: label noise"
    )
    parser.add_argument("languages", nargs="*", metavar="LANG", help="laws: language codes")
    add = parser.add_argument
    add("--config", metavar="TOML", help="a training grid (as `assocmem train --config`)")
    add("-N", "--n-inputs", type=int_at_least(1), help="N (default 1000 for laws, 100 for noise)")
    add("-M", "--n-outputs", type=int_at_least(2), help="M (default 5)")
    add("--alpha", type=finite_float, help="noise: Zipf exponent α (default 2)")
    add("--distribution", metavar="LAW", help="noise: token law (zipf:ALPHA or words:LANG)")
    add(
        "--label-noise",
        nargs="+",
        type=finite_float,
        default=[0.0, 0.1, 0.3],
        metavar="EPS",
        help="noise: ε values (default 0 0.1 0.3)",
    )
    add("--dims", nargs="+", type=int_at_least(1), metavar="D", help="dimensions d")
    add("--optimizers", nargs="+", metavar="OPT", help="optimisers (default adam)")
    add("--lrs", nargs="+", type=finite_float, metavar="LR", help="learning rates (default 1 10)")
    add("--batch-sizes", nargs="+", type=int_at_least(1), metavar="B", help="batch sizes")
    add("--n-samples", nargs="+", type=int_at_least(1), metavar="T", help="sample sizes T")
    add("--seeds", type=int_at_least(1), help="number of seeds 0..k-1 (default 5)")
    add("--full-batch", action="store_true", default=None, help="population-gradient training")
    add("--n-steps", type=int_at_least(1), help="steps of full-batch training")
    add_memory_argument(parser)
    add_quiet_argument(parser)
    add_format_argument(parser)
    parser.set_defaults(handler=run)


FLAGS = ("n_inputs", "n_outputs", "alpha", "distribution", "dims", "optimizers", "lrs",
         "batch_sizes", "n_samples", "seeds", "full_batch", "n_steps")  # fmt: skip


def spec_from_args(args: argparse.Namespace) -> dict[str, Any]:
    spec = {**DEFAULTS, "n_inputs": 1000 if args.mode == "laws" else 100}
    if args.config is not None:
        spec.update(load_toml(args.config))
    spec.update({k: getattr(args, k) for k in FLAGS if getattr(args, k) is not None})
    if spec.get("full_batch"):
        spec = {k: v for k, v in spec.items() if k not in ("batch_sizes", "n_samples")}
        spec.setdefault("n_steps", 1000)
    return spec


def _rows(curves: list[Any], name: str) -> list[list[Any]]:
    rows = []
    for c in curves:
        for i, dim in enumerate(c.dims):
            extra = c.extra
            rows.append([c.label, dim, c.lr[i], extra["error"][i], extra["noisy_error"][i],
                         extra["bayes_error"][i], extra["excess_error"][i],
                         extra["p_correct"][i]])  # fmt: skip
    return rows


def _slopes(curves: list[Any]) -> list[list[Any]]:
    return [
        [c.label, c.metric, None if c.fit is None else c.fit.slope,
         "" if c.fit is None else f"[{c.fit.ci_low:.3f}, {c.fit.ci_high:.3f}]",
         "" if c.fit is None else f"{c.fit.window[0]:g}–{c.fit.window[1]:g}"]
        for c in curves
    ]  # fmt: skip


def run(args: argparse.Namespace) -> int:
    from assocmem.analysis.memory import check_train_grid_memory
    from assocmem.laws.words import CREDITS
    from assocmem.studies.real_data.trained import compare_trained_laws, noise_curves

    spec = spec_from_args(args)
    if args.mode == "laws" and not args.languages:
        raise ConfigError("languages", "give at least one language code, e.g. en")
    if args.mode == "noise" and args.languages:
        raise ConfigError("languages", "noise mode takes no languages (use --distribution)")
    budget = args.memory_gb or DEFAULT_MEMORY_GB
    if args.mode == "noise":
        check_train_grid_memory({**spec, "label_noise": args.label_noise}, budget)
    else:
        check_train_grid_memory(spec, budget)
    progress = show_progress(args)
    results: list[dict[str, Any]] = []
    if args.mode == "laws":
        for lang in args.languages:
            alpha, records, curves = compare_trained_laws(lang, spec, progress=progress)
            results.append({"language": lang, "alpha": alpha, "records": records,
                            "curves": curves})  # fmt: skip
    else:
        records, curves = noise_curves(spec, args.label_noise, progress=progress)
        results.append({"records": records, "curves": curves})
    if args.format == "json":
        print_json({"mode": args.mode, "spec": spec, "results": [_jsonable(r) for r in results]})
        return 0
    headers = ["curve", "d", "lr", "error", "noisy", "bayes", "excess", "p_correct"]
    for result in results:
        if "language" in result:
            print(
                f"{result['language']}: N = {spec['n_inputs']}, Zipf fit α̂ = {result['alpha']:.3f}"
            )
        print(format_table(headers, _rows(result["curves"], "error")))
        print()
        print(format_table(["curve", "fitted", "slope in d", "95% CI", "window"],
                           _slopes(result["curves"])))  # fmt: skip
        print()
    if args.mode == "laws":
        print(CREDITS)
    return 0


def _jsonable(result: dict[str, Any]) -> dict[str, Any]:
    out = dict(result)
    out["curves"] = [
        {**{k: v for k, v in c.__dict__.items() if k != "fit"},
         "fit": None if c.fit is None else c.fit.__dict__}
        for c in result["curves"]
    ]  # fmt: skip
    return out

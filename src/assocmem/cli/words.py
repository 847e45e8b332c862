"""``assocmem words``: real word-frequency laws (wordfreq), their Zipf α, and scaling on them."""

import argparse
from collections.abc import Callable
from typing import Any

from assocmem.cli.common import (
    add_format_argument,
    add_quiet_argument,
    format_table,
    int_at_least,
    print_json,
    show_progress,
)


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "words",
        help="real word-frequency laws: truncated mass, estimated α, scaling vs Zipf",
        description="Word-frequency laws of real languages (the optional wordfreq package) as "
        "input distributions. Without --compare: the estimated Zipf α and the truncated mass. "
        "With --compare: closed-form error slopes in d on the real law next to Zipf(α̂).",
    )
    parser.add_argument(
        "languages", nargs="+", metavar="LANG", help="language codes, e.g. en fr zh"
    )
    parser.add_argument(
        "-N",
        "--n-inputs",
        type=_top_words,
        default=1000,
        help="top N words (default 1000), or 'all': every word of each language's list",
    )
    parser.add_argument("--compare", action="store_true", help="run closed-form on real vs Zipf(α̂)")
    parser.add_argument(
        "--schemes",
        nargs="+",
        default=["population", "threshold:P=d/8"],
        metavar="SCHEME",
        help="--compare: memory schemes (default population threshold:P=d/8)",
    )
    parser.add_argument(
        "--dims",
        nargs="+",
        default=["log:10:1000:8"],
        metavar="D",
        help="--compare: dimensions d (default log:10:1000:8)",
    )
    parser.add_argument(
        "--n-samples",
        nargs="+",
        default=["inf"],
        metavar="T",
        help="--compare: sample sizes T (default inf)",
    )
    parser.add_argument(
        "--trials", type=int_at_least(1), default=20, help="--compare: trials (default 20)"
    )
    parser.add_argument(
        "--seed", type=int_at_least(0), default=0, help="--compare: base seed (default 0)"
    )
    add_quiet_argument(parser, "--compare: no progress bar")
    add_format_argument(parser)
    parser.set_defaults(handler=run)


def _top_words(text: str) -> int | str:
    """-N: an integer ≥ 2, or ``all`` (the whole list: 321,180 English words)."""
    return "all" if text.strip().lower() == "all" else int_at_least(2)(text)


def _ci(ci: tuple[float, float] | None) -> str:
    return "" if ci is None else f"[{ci[0]:.3f}, {ci[1]:.3f}]"


def run(args: argparse.Namespace) -> int:
    from assocmem.analysis.memory import check_closed_form_memory
    from assocmem.closed_form.config import config_from_mapping
    from assocmem.laws.words import CREDITS, vocabulary_size

    def size(language: str) -> int:
        return vocabulary_size(language) if args.n_inputs == "all" else int(args.n_inputs)

    values = {
        "schemes": args.schemes,
        "dims": args.dims,
        "n_samples": args.n_samples,
        "trials": args.trials,
        "seed": args.seed,
    }
    # the --compare settings are checked in either case (N per language with -N all)
    configs = {
        lang: config_from_mapping({**values, "n_inputs": size(lang)}) for lang in args.languages
    }
    if not args.compare:
        return _show_laws(args, size)
    from assocmem.studies.real_data.closed_form import compare_with_zipf

    for config in configs.values():
        check_closed_form_memory(config)
    progress = show_progress(args)
    comparisons = [
        compare_with_zipf(lang, progress=progress, **configs[lang].to_dict())
        for lang in args.languages
    ]
    if args.format == "json":
        print_json({"comparisons": [c.__dict__ for c in comparisons], "credits": CREDITS})
        return 0
    for comp in comparisons:
        print(f"{comp.language}: N = {size(comp.language)}, Zipf fit α̂ = {comp.alpha:.3f}")
        print(format_table(COMPARISON_HEADERS, _comparison_rows(comp)) + "\n")
    print(CREDITS)
    return 0


def _show_laws(args: argparse.Namespace, size: Callable[[str], int]) -> int:
    """Without --compare: each language's word law, its mass left out and its fitted α."""
    from assocmem.laws.words import CREDITS, word_distribution

    laws = [word_distribution(lang, size(lang)) for lang in args.languages]
    rows = [
        [w.language, " ".join(w.words[:5]), w.truncated_mass, w.alpha_kl, w.alpha_slope]
        for w in laws
    ]
    if args.format == "json":
        keys = ["language", "top_words", "truncated_mass", "alpha_kl", "alpha_slope"]
        print_json({"laws": [dict(zip(keys, r, strict=True)) for r in rows], "credits": CREDITS})
    else:
        print(format_table(["lang", "top words", "mass left out", "α (KL)", "α (slope)"], rows))
        print(f"\n{CREDITS}")
    return 0


COMPARISON_HEADERS = [
    "scheme",
    "T",
    "slope real",
    "95% CI",
    "slope Zipf",
    "95% CI",
    "err real",
    "err Zipf",
]


def _comparison_rows(comp: Any) -> list[list[Any]]:
    """One row per (scheme, T) of a real-law against Zipf comparison."""
    return [
        [
            r["scheme"],
            "inf" if r["n_samples"] is None else r["n_samples"],
            r["slope_real"],
            _ci(r["ci_real"]),
            r["slope_zipf"],
            _ci(r["ci_zipf"]),
            r["error_real_dmax"],
            r["error_zipf_dmax"],
        ]
        for r in comp.rows
    ]

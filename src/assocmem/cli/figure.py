"""``assocmem figure``: draw a paper figure from stored closed-form records (never recomputes)."""

import argparse
from typing import Any

from assocmem.cli.common import LazyChoices
from assocmem.config.errors import ConfigError
from assocmem.config.files import check_output_file, load_json


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "figure",
        help="draw a paper figure (1, 3, 4) from closed-form JSON records",
        description="Draw a paper figure from the records of `assocmem closed-form --format json` "
        "(a file, or - for standard input); writes OUT.png and OUT.svg. The records must hold "
        "what the figure plots: figure 1 finite sample sizes T (two or more) at two or more d; "
        "figure 3 the same for each scheme; figure 4 infinite data at two or more d.",
    )
    parser.add_argument(
        "figure",
        choices=LazyChoices("assocmem.figures", "FIGURES"),
        metavar="FIGURE",
        help="paper figure number: 1, 3 or 4",
    )
    parser.add_argument(
        "--from", dest="source", required=True, metavar="JSON", help="records file or -"
    )
    parser.add_argument(
        "--out", required=True, metavar="STEM", help="output path without extension"
    )
    parser.set_defaults(handler=run)


def load_records(source: str) -> list[dict[str, Any]]:
    """The records of a closed-form JSON payload (a file, or ``-`` for standard input)."""
    payload = load_json(source, "from")
    if not isinstance(payload, dict) or payload.get("kind") != "closed_form":
        raise ConfigError("from", "expected the output of `assocmem closed-form --format json`")
    records = payload.get("records")
    needed = {"scheme", "dim", "n_samples", "errors"}
    if not isinstance(records, list) or not records:
        raise ConfigError("from", "the file holds no records")
    if not all(isinstance(r, dict) and needed <= r.keys() for r in records):
        raise ConfigError("from", f"every record needs the keys {', '.join(sorted(needed))}")
    return records


def run(args: argparse.Namespace) -> int:
    from assocmem.figures import FIGURES, check_figure_frame, frame_from_records, save

    for suffix in (".png", ".svg"):
        check_output_file("out", f"{args.out}{suffix}")
    records = load_records(args.source)  # not found, not JSON: its own message
    try:
        frame = frame_from_records(records)
    except (KeyError, TypeError, ValueError) as err:
        raise ConfigError("from", f"malformed records: {type(err).__name__} {err}") from None
    check_figure_frame(args.figure, frame)
    for path in save(FIGURES[args.figure](frame), args.out):
        print(path)
    return 0

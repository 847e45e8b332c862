"""``assocmem figure``: draw a paper figure from stored closed-form records (never recomputes)."""

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from assocmem.config.errors import ConfigError
from assocmem.figures import FIGURES, frame_from_records, save


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "figure",
        help="draw a paper figure (1, 3, 4) from closed-form JSON records",
        description="Draw a paper figure from the records of `assocmem closed-form --format json` "
        "(a file, or - for standard input); writes OUT.png and OUT.svg.",
    )
    parser.add_argument("figure", choices=sorted(FIGURES), help="paper figure number")
    parser.add_argument(
        "--from", dest="source", required=True, metavar="JSON", help="records file or -"
    )
    parser.add_argument(
        "--out", required=True, metavar="STEM", help="output path without extension"
    )
    parser.set_defaults(handler=run)


def _load(source: str) -> list[dict[str, Any]]:
    try:
        text = sys.stdin.read() if source == "-" else Path(source).read_text()
        payload = json.loads(text)
    except OSError as err:
        raise ConfigError("from", f"cannot read {source!r}: {err.strerror}") from None
    except json.JSONDecodeError as err:
        raise ConfigError(
            "from", f"{source!r} is not JSON: {err.msg} (line {err.lineno})"
        ) from None
    if not isinstance(payload, dict) or payload.get("kind") != "closed_form":
        raise ConfigError("from", "expected the output of `assocmem closed-form --format json`")
    return payload["records"]


def run(args: argparse.Namespace) -> int:
    frame = frame_from_records(_load(args.source))
    if frame.empty:
        raise ConfigError("from", "the records are empty")
    for path in save(FIGURES[args.figure](frame), args.out):
        print(path)
    return 0

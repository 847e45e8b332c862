"""Helpers shared by subcommands: argument types that raise one-line errors, output formats."""

import argparse
import json
import math
import sys
from typing import Any

from assocmem.config.files import load_toml

__all__ = ["add_format_argument", "format_table", "load_toml", "print_json"]


def add_format_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--format",
        choices=("table", "json"),
        default="table",
        help="table: readable text (default); json: machine-readable records on stdout",
    )


def _json_default(value: Any) -> Any:
    if hasattr(value, "tolist"):
        return value.tolist()
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def _finite(value: Any) -> Any:
    """Replace non-finite floats by None so the output is strict JSON."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def print_json(payload: Any) -> None:
    json.dump(_finite(payload), sys.stdout, default=_json_default, allow_nan=False)
    sys.stdout.write("\n")


def format_table(headers: list[str], rows: list[list[Any]]) -> str:
    """A plain aligned text table; floats in compact scientific-friendly form."""

    def cell(value: Any) -> str:
        if isinstance(value, float):
            return "inf" if value == math.inf else f"{value:.4g}"
        return "" if value is None else str(value)

    text = [[cell(v) for v in row] for row in rows]
    widths = [
        max(len(h), *(len(r[i]) for r in text)) if text else len(h) for i, h in enumerate(headers)
    ]
    lines = ["  ".join(h.rjust(w) for h, w in zip(headers, widths, strict=True))]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)) for r in text]
    return "\n".join(lines)

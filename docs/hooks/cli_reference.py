"""mkdocs hook: the CLI reference is rendered from the argparse parsers at build time.

A page holding the marker ``<!-- cli-reference -->`` gets, in its place, one section per command
and subcommand of ``assocmem`` (walked from :func:`assocmem.cli.build_parser`) with its
``--help`` text, so the reference cannot drift from the code.
"""

import argparse
import os
from collections.abc import Iterator
from typing import Any

MARKER = "<!-- cli-reference -->"
WIDTH = "100"  # columns argparse wraps the help text to


def _subcommands(parser: argparse.ArgumentParser) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    for action in parser._actions:  # argparse keeps subparsers only here
        if isinstance(action, argparse._SubParsersAction):
            yield from action.choices.items()


def _sections(parser: argparse.ArgumentParser, level: int) -> Iterator[str]:
    anchor = parser.prog.replace(" ", "-")
    yield f"{'#' * level} `{parser.prog}` {{#{anchor}}}\n\n```text\n{parser.format_help()}```\n"
    for _, sub in _subcommands(parser):
        yield from _sections(sub, min(level + 1, 4))


def render() -> str:
    """Markdown of every command's help, the top-level command first."""
    from assocmem.cli import build_parser

    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = WIDTH
    try:
        return "\n".join(_sections(build_parser(), 2))
    finally:
        if old is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = old


def on_page_markdown(markdown: str, **kwargs: Any) -> str:
    if MARKER not in markdown:
        return markdown
    return markdown.replace(MARKER, render())

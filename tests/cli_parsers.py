"""The leaf commands of ``assocmem`` read from its argument parsers (for the CLI property tests)."""

import argparse

from assocmem.cli import build_parser


def leaf_commands() -> list[tuple[list[str], argparse.ArgumentParser]]:
    """Every leaf command as (words, parser): ``["sweep", "run"]`` etc."""
    out = []

    def walk(words: list[str], parser: argparse.ArgumentParser) -> None:
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not subs:
            out.append((words, parser))
            return
        for name, sub in subs[0].choices.items():
            walk([*words, name], sub)

    walk([], build_parser())
    return out

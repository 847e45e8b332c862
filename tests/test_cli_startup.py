"""The command line starts fast: building the parsers and printing any ``--help`` imports no
torch, pandas or matplotlib (the timings themselves are in benchmarks/startup.py), and every
help text fits a 100-column terminal."""

import json
import os
import subprocess
import sys

import pytest

HEAVY = ["torch", "pandas", "matplotlib", "scipy"]

SCRIPT = """
import argparse, contextlib, io, json, sys
from assocmem.cli import build_parser, main

parser = build_parser()
sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
commands = [[]]
for name, child in sub.choices.items():
    commands.append([name])
    nested = [a for a in child._actions if isinstance(a, argparse._SubParsersAction)]
    commands += [[name, leaf] for leaf in (nested[0].choices if nested else ())]
widest = {}
for words in commands:
    with contextlib.redirect_stdout(io.StringIO()) as out:
        assert main([*words, "--help"]) == 0, words
    assert "usage: assocmem" in out.getvalue(), words
    widest[" ".join(words)] = max(len(line) for line in out.getvalue().splitlines())
heavy = [m for m in %r if m in sys.modules]
print(json.dumps({"widest": widest, "heavy": heavy}))
"""


@pytest.fixture(scope="module")
def helps() -> dict:
    """Every command's --help printed in one fresh interpreter at a 100-column terminal."""
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT % (HEAVY,)],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "COLUMNS": "100"},
    )
    return json.loads(proc.stdout)


def test_help_of_every_command_imports_nothing_heavy(helps: dict):
    assert len(helps["widest"]) >= 13
    assert helps["heavy"] == [], f"--help imported {helps['heavy']}"


def test_help_fits_100_columns(helps: dict):
    wide = {cmd: width for cmd, width in helps["widest"].items() if width > 100}
    assert wide == {}

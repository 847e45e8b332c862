"""Property-based test of the command line: malformed values for every option of every command.

The strategies are built from the argument parsers themselves (subcommands, their options, each
option's type, choices and nargs), so a new command or option is covered with no edit here.
Each example takes one command, fills its required arguments with harmless valid values, then
gives ONE option a malformed value (a wrong type, a value outside its range, a choice that does
not exist, a missing value, a path that is not a usable file). Such a command must be refused
before it starts: exit code 2, exactly one line on stderr naming the problem, no traceback, and
nothing written in the working folder.

The values are chosen so that no example is valid work, let alone huge work: a value the
option's type accepts is never thrown (so no count is ever large), and free text (paths,
devices, names) gets only what no path or name can be (empty, or holding a NUL byte). Runs
in-process (``main``), each example in a new empty working folder; ``derandomize=True`` keeps
CI deterministic (150 examples, about 10 s).
"""

import argparse
import contextlib
import io
import os
import tempfile
from pathlib import Path

from cli_parsers import leaf_commands
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assocmem.cli import main
from assocmem.cli.common import LazyChoices

SAFE_POSITIONALS = {  # a harmless valid value for required positionals (by dest)
    "figure": "4",
    "mode": "noise",
    "spec": "figure4",
    "languages": "en",
    "results": "missing.json",
    "target": "merged.db",
    "sources": "missing.db",
}
SAFE_REQUIRED = {"source": "missing.json", "out": "out", "db": "missing.db"}
BAD_TEXT = ["", " ", "-", "nan", "inf", "-inf", "-1", "0", "1e999", "x" * 300, "a:b", "/", "1.5"]
# free text (paths, devices, names, specs): only what no path or name can be
BAD_FREE_TEXT = ["", "\x00", "a\x00b"]


COMMANDS = leaf_commands()


def _options(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    return [
        a
        for a in parser._actions
        if a.option_strings and not isinstance(a, argparse._HelpAction | argparse._VersionAction)
    ]


def _required(parser: argparse.ArgumentParser) -> list[str]:
    """Valid values for the positionals and the required options."""
    words: list[str] = []
    for action in parser._actions:
        if not action.option_strings and not isinstance(action, argparse._SubParsersAction):
            words.append(SAFE_POSITIONALS[action.dest])
        elif action.option_strings and action.required:
            words += [action.option_strings[-1], SAFE_REQUIRED[action.dest]]
    return words


def _bad_values(action: argparse.Action) -> st.SearchStrategy[list[str]]:
    """Malformed values for one option, from its type, choices and nargs."""
    if action.nargs == 0:  # a flag: give it a value it cannot take
        return st.just(["=oops"])
    if action.choices is not None:
        choices = list(action.choices)
        bad = st.text(min_size=1, max_size=12).filter(lambda t: t not in choices)
    elif action.type is not None and getattr(action.type, "__name__", "") != "str":
        bad = st.one_of(
            st.sampled_from(BAD_TEXT), st.integers(max_value=0).map(str), st.text(max_size=8)
        ).filter(lambda t: not _valid_number(action, t))
    else:
        bad = st.sampled_from(BAD_FREE_TEXT)
    count = action.nargs if isinstance(action.nargs, int) else 1
    missing = st.just([])  # the option with no value at all
    return st.one_of(st.lists(bad, min_size=count, max_size=count), missing)


def _valid_number(action: argparse.Action, text: str) -> bool:
    """Whether ``text`` is accepted by the option's type (then it is not a malformed value)."""
    try:
        action.type(text)  # type: ignore[misc]
    except Exception:
        return False
    return True


@st.composite
def bad_command(draw: st.DrawFn) -> list[str]:
    words, parser = draw(st.sampled_from(COMMANDS))
    options = [a for a in _options(parser) if a.nargs != 0 or draw(st.booleans())]
    action = draw(st.sampled_from(options))
    values = draw(_bad_values(action))
    flag = action.option_strings[-1]
    if values == ["=oops"]:
        return [*words, *_required(parser), f"{flag}=oops"]
    return [*words, *_required(parser), flag, *values]


def _run(argv: list[str]) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(argv)
    return code, err.getvalue()


@contextlib.contextmanager
def empty_cwd():
    """A new empty working folder for one example (removed afterwards)."""
    before = Path.cwd()
    with tempfile.TemporaryDirectory() as folder:
        os.chdir(folder)
        try:
            yield Path(folder)
        finally:
            os.chdir(before)


def test_the_parsers_offer_every_command():
    names = {" ".join(words) for words, _ in COMMANDS}
    assert {"closed-form", "train", "sweep run", "sweep results", "reproduce"} <= names
    for _, parser in COMMANDS:
        for action in _options(parser):
            assert action.help, f"{parser.prog} {action.option_strings}: no help"
            if isinstance(action.choices, LazyChoices):
                assert action.metavar, f"{parser.prog} {action.option_strings}: lazy, no metavar"


@settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(argv=bad_command())
def test_malformed_values_are_refused_in_one_line(argv: list[str]) -> None:
    with empty_cwd() as cwd:
        code, err = _run(argv)
        left = list(cwd.iterdir())
    lines = err.strip().splitlines()
    assert code == 2, (argv, code, err)
    assert len(lines) == 1 and lines[0].startswith("assocmem: error: "), (argv, err)
    assert "Traceback" not in err
    assert left == [], (argv, left)

"""Property-based test of every command with valid-looking option combinations (issue 36).

For each leaf command, hypothesis draws a combination of its declared options — read from the
argument parser itself: choices, nargs and the type of each option — at tiny sizes: subsets,
single values, duplicates and unsorted orders of every list, edge values of every number (0, 1,
the smallest allowed and just below it), ``--format json|table``, ``--out`` at a fresh path, an
existing file or a path under a regular file, ``--device cuda`` on a machine without CUDA. Free
text options (dims written as text, schemes, paths) draw from :data:`FREE_TEXT`; an option of
no rule there is left at its default. Study commands run at ``--scale tiny``.

Each command must either succeed — exit 0, JSON that validates against the command's committed
schema (``assocmem/cli/schemas``) with at least one record, or a non-empty table, and the files
it promises — or refuse: exit 2, exactly one line ``assocmem: error: FIELD: … (see … --help)``
on stderr, nothing written. Never a traceback (an exception escapes ``main``), never a
RuntimeWarning. ``claims`` may also exit 1 (a claim failed at tiny trials) after its table.

Fast tier: a fixed budget of examples per command with ``derandomize=True`` (about a minute on
2 cores); the ``slow`` variant draws more of each.
"""

import argparse
import contextlib
import io
import json
import os
import re
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_parsers import leaf_commands
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assocmem.cli import main
from assocmem.cli.schemas import problems, schema, schema_name
from assocmem.experiments.commands import STUDY_COMMANDS

EXISTING = "existing.txt"  # a regular file in every working folder
PATHS = ["out", EXISTING, f"{EXISTING}/sub"]  # a fresh path, an existing file, under a file
SKIP = {  # options never drawn: heavy work (the whole paper), parallel executors, progress
    "help", "version", "quiet", "verbose", "full", "beyond", "executor", "workers",
    "scheduler", "shard", "config", "probabilities", "words", "distribution", "scale",
}  # fmt: skip
FREE_TEXT: dict[str, list[list[str]]] = {  # values of options typed as free text, by dest
    "dims": [["4"], ["8", "16"], ["16", "8"], ["8", "8"], ["0"], ["log:4:32:3"]],
    "n_samples": [["0"], ["10"], ["inf"], ["100", "10"], ["10", "10"], ["inf", "0"]],
    "schemes": [["population"], ["threshold:P=d/8"], ["empirical"], ["uniform", "population"],
                ["seen_once", "empirical_threshold:P=d/2"], ["population", "population"]],
    "concept_scheme": [["threshold:P=d/8"], ["population"]],
    "memory": [["population"], ["trained"], ["threshold:P=d/8", "population"]],
    "device": [["cpu"], ["cuda"]],
    "out": [[p] for p in PATHS],
    "db": [["g.db"], [EXISTING], [f"{EXISTING}/g.db"]],
    "target": [["m.db"], [EXISTING], [f"{EXISTING}/m.db"]],
    "sweep": [["tiny"], ["nope"]],
    "kind": [["closed_form"], ["nope"]],
    "outputs": [["N"], ["2"], ["0"]],
    "d_window": [["auto"], ["4:16"], ["16:4"]],
    "t_window": [["auto"], ["10:1000"], ["0:1"]],
}  # fmt: skip
STUDY_FREE_TEXT = {  # the study options typed as text
    "schemes": [["threshold:P=d/8"], ["population"], ["population", "threshold:P=d/8"]],
    "n_samples": [["10000"], ["inf"], ["0"], ["10000", "inf"], ["inf", "10000"]],
}
ONLY = {"reproduce": ["memory", "table1"], "claims": ["1", "4", "7"]}  # the quick items


def tiny_argv(words: list[str], files: dict[str, str]) -> list[str]:
    """The fixed part of a command's line: required arguments and sizes that keep it tiny."""
    records, spec, db = files["records"], files["spec"], files["db"]  # figure: its own --from
    name = " ".join(words)
    if name in STUDY_COMMANDS:
        return ["--scale", "tiny"]
    return {
        "reproduce": ["--quick", "--only", "memory"],
        "closed-form": ["-N", "30", "--trials", "2"],
        "claims": ["--only", "1", "--trials", "2"],
        "words": ["en", "-N", "50", "--trials", "2", "--dims", "8", "16"],
        "capacity": ["--dims", "8", "16", "--trials", "1", "--repeats", "1", "--max-steps", "20"],
        "figure": ["--out", "fig"],
        "theory": [],
        "fit": [records, "--n-boot", "10"],
        "predict": ["-N", "50", "--trials", "2", "--dims", "8", "16"],
        "train": ["-N", "20", "--dims", "8", "--seeds", "1", "--n-steps", "5"],
        "compare-trained": ["-N", "20", "--dims", "8", "16", "--seeds", "1", "--n-steps", "5"],
        "sweep run": [spec, "--db", "g.db"],
        "sweep results": ["--db", db],
        "sweep merge": ["m.db", db],
        "sweep specs": [],
    }[name]


COMMANDS = {" ".join(words): parser for words, parser in leaf_commands()}


def _number_values(kind: str) -> list[str] | None:
    """Edge values of a number option, from its type's name (``integer ≥ 1``, ``number ≥
    1e-09``, ``finite_float``, ``positive_float``): 0, 1, the smallest allowed, just below."""
    match = re.fullmatch(r"integer ≥ (-?\d+)", kind)
    if match:
        low = int(match.group(1))
        return [str(v) for v in sorted({0, 1, 2, low - 1, low, low + 1})]
    match = re.fullmatch(r"number ≥ (\S+)", kind)
    if match:
        low = float(match.group(1))
        below = low - 1 if low >= 1 else (0.0 if low > 0 else -0.5)
        return [f"{v:g}" for v in sorted({0.0, 1.0, 2.0, low, below})]
    if kind == "finite_float":
        return ["0", "1", "0.5", "2", "-1"]
    if kind == "positive_float":
        return ["0", "1e-06", "4"]
    return None


def _values(words: str, action: argparse.Action) -> list[list[str]] | None:
    """The drawable values of one option (each a list of argv tokens), or None: not drawn."""
    study = words in STUDY_COMMANDS
    if action.dest in ("only",) and words in ONLY:
        return [[v] for v in ONLY[words]]
    if action.choices is not None:
        return [[str(c)] for c in action.choices]
    kind = getattr(action.type, "__name__", None)
    numbers = _number_values(kind) if kind else None
    if numbers is not None:
        return [[v] for v in numbers]
    table = STUDY_FREE_TEXT if study and action.dest in STUDY_FREE_TEXT else FREE_TEXT
    return table.get(action.dest)


@st.composite
def _option(draw: Any, words: str, action: argparse.Action) -> list[str]:
    flag = action.option_strings[-1]
    if action.nargs == 0:
        return [flag]
    values = _values(words, action)
    assert values is not None
    if action.nargs in ("+", "*"):
        picked = draw(st.lists(st.sampled_from(values), min_size=1, max_size=3))
        return [flag, *(token for value in picked for token in value)]
    count = action.nargs if isinstance(action.nargs, int) else 1
    return [flag, *(token for _ in range(count) for token in draw(st.sampled_from(values)))]


def drawable(words: str) -> list[argparse.Action]:
    """The options of a command that the test draws."""
    return [
        a
        for a in COMMANDS[words]._actions
        if a.option_strings
        and a.dest not in SKIP
        and (a.nargs == 0 or _values(words, a) is not None)
    ]


@st.composite
def command_lines(draw: Any, words: str, files: dict[str, str]) -> list[str]:
    """One command line: its tiny fixed part, then a few drawn options (a later one wins)."""
    positional = []
    if words == "figure":  # records that hold what the figure plots
        figure = draw(st.sampled_from(["1", "3", "4"]))
        positional = [figure, "--from", files["infinite" if figure == "4" else "records"]]
    if words == "compare-trained":
        mode = draw(st.sampled_from(["laws", "noise"]))
        positional = [mode, "en"] if mode == "laws" else [mode]
    actions = drawable(words)
    chosen = draw(st.lists(st.sampled_from(actions), max_size=4, unique_by=lambda a: a.dest))
    options = [token for action in chosen for token in draw(_option(words, action))]
    quiet = ["--quiet"] if "--quiet" in _flags(words) else []
    return [*words.split(), *positional, *tiny_argv(words.split(), files), *options, *quiet]


def _flags(words: str) -> set[str]:
    return {flag for a in COMMANDS[words]._actions for flag in a.option_strings}


@contextlib.contextmanager
def working_folder() -> Iterator[Path]:
    """A fresh working folder holding only the regular file :data:`EXISTING`."""
    old = os.getcwd()
    with tempfile.TemporaryDirectory(prefix="assocmem-prop-") as folder:
        os.chdir(folder)
        Path(EXISTING).write_text("not a database\n")
        try:
            yield Path(folder)
        finally:
            os.chdir(old)


def _listing(folder: Path) -> dict[str, float]:
    return {str(p.relative_to(folder)): p.stat().st_mtime for p in folder.rglob("*")}


def _last(argv: list[str], flag: str, default: str | None = None) -> str | None:
    values = [argv[i + 1] for i, token in enumerate(argv[:-1]) if token == flag]
    return values[-1] if values else default


def check(argv: list[str]) -> None:
    """Run one command line in-process and assert the contract of the module docstring."""
    words = next(w for w in sorted(COMMANDS, key=len, reverse=True) if argv[: len(w.split())]
                 == w.split())  # fmt: skip
    with working_folder() as cwd:
        before = _listing(cwd)
        out, err = io.StringIO(), io.StringIO()
        with (
            contextlib.redirect_stdout(out),
            contextlib.redirect_stderr(err),
            warnings.catch_warnings(record=True) as caught,
        ):
            warnings.simplefilter("always")
            code = main(argv)
        runtime = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
        assert not runtime, (argv, runtime)
        stdout, stderr = out.getvalue(), err.getvalue()
        if code == 2:
            lines = stderr.strip().splitlines()
            assert len(lines) == 1, (argv, stderr)
            assert re.match(r"assocmem: error: [^:]+: .+ \(see assocmem .+ --help\)$", lines[0]), (
                argv,
                lines[0],
            )
            assert stdout == "", (argv, stdout)
            assert _listing(cwd) == before, (argv, "wrote files though it refused")
            return
        assert code == 0 or (words == "claims" and code == 1), (argv, code, stderr)
        _check_output(words, argv, stdout, cwd)


def _check_output(words: str, argv: list[str], stdout: str, cwd: Path) -> None:
    fmt = _last(argv, "--format", "table")
    if words == "sweep results" and _last(argv, "--out") is not None:  # written to the file
        assert (cwd / str(_last(argv, "--out"))).stat().st_size > 0, argv
    elif "--format" in _flags(words) and fmt == "json":
        payload = json.loads(stdout)
        name = schema_name(words.split(), study=words in STUDY_COMMANDS)
        assert problems(payload, schema(name)) == [], (argv, problems(payload, schema(name)))
    elif "--format" in _flags(words) and fmt == "table":
        assert stdout.strip(), (argv, stdout)  # a table with rows, or a summary line
    elif words == "sweep results":  # csv or jsonl on stdout
        assert stdout.strip(), argv
    if words == "figure":
        stem = _last(argv, "--out")
        assert all((cwd / f"{stem}{suffix}").stat().st_size > 0 for suffix in (".png", ".svg"))
    if words in STUDY_COMMANDS and _last(argv, "--out") is not None:
        folder = cwd / str(_last(argv, "--out"))
        assert (folder / "runs.db").is_file() and list((folder / "figures").glob("*.png")), argv


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Inputs some commands read: closed-form records, a tiny sweep spec and its database."""
    folder = tmp_path_factory.mktemp("inputs")
    spec = folder / "tiny.toml"
    spec.write_text(
        'name = "tiny"\nkind = "closed_form"\ntrials = 2\n[base]\nn_inputs = 30\n'
        'n_outputs = 3\nschemes = ["population", "empirical"]\ndims = [4, 8, 16]\n'
        "n_samples = [10, 100, 1000]\n"
    )
    db = folder / "tiny.db"
    assert main(["sweep", "run", str(spec), "--db", str(db), "--quiet", "--format", "json"]) == 0
    made = {"spec": str(spec), "db": str(db)}
    for name, schemes, sizes in (
        ("records", ["empirical"], ["10", "100", "1000"]),  # fit, figures 1 and 3
        ("infinite", ["population", "threshold:P=d/8"], ["inf"]),  # figure 4
    ):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            argv = ["closed-form", "-N", "30", "--trials", "2", "--dims", "4", "8", "16"]
            argv += ["--schemes", *schemes, "--n-samples", *sizes, "--format", "json"]
            assert main(argv) == 0
        (folder / f"{name}.json").write_text(out.getvalue())
        made[name] = str(folder / f"{name}.json")
    return made


FAST = {words: 3 for words in COMMANDS} | {words: 2 for words in STUDY_COMMANDS}
FAST |= {"reproduce": 1, "claims": 2, "capacity": 2, "compare-trained": 2, "train": 2}
SLOW = {words: 8 * n for words, n in FAST.items()} | {words: 8 for words in STUDY_COMMANDS}


def _run(words: str, files: dict[str, str], examples: int) -> None:
    @settings(
        max_examples=examples,
        derandomize=True,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(argv=command_lines(words, files))
    def one(argv: list[str]) -> None:
        check(argv)

    one()


def test_every_command_is_drawn() -> None:
    assert set(FAST) == set(COMMANDS)
    for words in COMMANDS:  # each command has options to draw, so combinations are tried
        assert drawable(words) or words in ("sweep specs",), words


@pytest.mark.parametrize("words", sorted(COMMANDS))
def test_every_combination_gives_a_result_or_one_line(words: str, files: dict[str, str]) -> None:
    _run(words, files, FAST[words])


@pytest.mark.slow
@pytest.mark.parametrize("words", sorted(COMMANDS))
def test_every_combination_slow(words: str, files: dict[str, str]) -> None:
    _run(words, files, SLOW[words])


# Each study command at its smallest settings: one trial (its s.e. undefined), one d, one value
# of each axis that takes one; a command whose analysis needs two values refuses in one line.
SMALLEST = {
    "facts": ["--trials", "1", "--dim", "32", "--seed", "0"],
    "hierarchy": ["--trials", "1", "--dims", "64", "--dim", "32", "--schemes", "population"],
    "superposition": ["--trials", "1", "--dims", "64", "--dim", "64", "--heads", "2", "--seeds",
                      "1"],
    "noise-threshold": ["--trials", "1", "--dims", "64", "--n-samples", "1000", "--alpha", "2"],
    "editing": ["--trials", "1", "--dim", "32", "--alpha", "2"],
    "similar": ["--trials", "1"],
    "incontext": ["--trials", "1", "--alpha", "0", "--contexts", "2"],
    "vocabulary": ["--trials", "1", "--dims", "64", "--n-samples", "1000"],
}  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize("study", sorted(SMALLEST))
def test_every_study_takes_its_smallest_settings(study: str) -> None:
    """A result or one clear line, never a traceback nor a RuntimeWarning (one trial ended in
    "ValueError: Encountered all NA values" in two studies)."""
    assert set(SMALLEST) == set(STUDY_COMMANDS), "a study without its case"
    check([study, "--scale", "tiny", *SMALLEST[study], "--out", "run", "--format", "json"])


def test_every_json_output_has_a_versioned_schema() -> None:
    for words, parser in COMMANDS.items():
        fmt = next((a for a in parser._actions if a.dest == "format"), None)
        if fmt is None or "json" not in (fmt.choices or ()):
            continue
        loaded = schema(schema_name(words.split(), study=words in STUDY_COMMANDS))
        assert isinstance(loaded["version"], int) and loaded["$id"].endswith(
            f"/{loaded['version']}"
        ), words


def test_a_schema_refuses_a_payload_without_records(files: dict[str, str]) -> None:
    payload = json.loads(Path(files["records"]).read_text())
    rules = schema("closed-form")
    assert problems(payload, rules) == []
    assert problems({**payload, "records": []}, rules) == ["$.records: fewer than 1 items"]
    assert problems({k: v for k, v in payload.items() if k != "config"}, rules) == [
        "$: no key 'config'"
    ]
    wrong = {**payload, "records": [{**payload["records"][0], "dim": "8"}]}
    assert problems(wrong, rules) == ["$.records[0].dim: str, not integer"]
    assert problems(True, {"type": "integer"}) == ["$: bool, not integer"]

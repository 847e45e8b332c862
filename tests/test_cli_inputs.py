"""Each kind of bad input found by trying the command line as a new user would (issue 17):
refused before work starts, in one line naming the field, exit code 2, no traceback, and
nothing written beside the inputs."""

import contextlib
import io
import json
import os
from pathlib import Path

import pytest

from assocmem.cli import main

NOT_UTF8 = b"n_inputs = 10\n# \xff\xfe caf\xe9\n"


def run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def cwd(tmp_path: Path):
    """A working folder holding the inputs the cases name (all else must stay absent)."""
    (tmp_path / "latin1.toml").write_bytes(NOT_UTF8)
    (tmp_path / "latin1.txt").write_bytes(b"0.5 0.5 \xe9")
    (tmp_path / "folder").mkdir()
    (tmp_path / "a_file").write_text("not a folder\n")
    before = Path.cwd()
    os.chdir(tmp_path)
    try:
        yield tmp_path
    finally:
        os.chdir(before)


def _records(cwd: Path, *args: str) -> str:
    """A small closed-form JSON file (the input of `figure`), made by the command itself."""
    code, out, _ = run(["closed-form", "-N", "40", "--trials", "2", "--quiet", "--format", "json",
                        *args])  # fmt: skip
    assert code == 0
    path = cwd / f"records{len(list(cwd.iterdir()))}.json"
    path.write_text(out)
    return path.name


CASES = [  # (argv, field named by the error)
    (["closed-form", "--config", "latin1.toml"], "config"),
    (["closed-form", "--probabilities", "latin1.txt"], "probabilities"),
    (["sweep", "run", "latin1.toml", "--db", "r.db"], "spec"),
    (["closed-form", "--config", "folder"], "config"),
    (["sweep", "run", "folder", "--db", "r.db"], "spec"),
    (["fit", "folder"], "results"),
    (["figure", "4", "--from", "folder", "--out", "fig"], "from"),
    (["sweep", "run", "figure4", "--db", "a_file/r.db"], "db"),
    (["sweep", "run", "figure4", "--db", "folder"], "db"),
    (["reproduce", "--only", "memory", "--out", "a_file/out"], "out"),
    (["sweep", "results", "--db", "folder"], "db"),
    (["words", "en", "-N", "0"], "n_inputs"),
    (["words", "en", "-N", "-5"], "n_inputs"),
    (["train", "-N", "10", "-M", "20"], "n_outputs"),
    (["train", "--dims", "10", "10"], "dims"),
    (["capacity", "--dims", "8", "8"], "dims"),
    (["predict", "--min-dim", "-1"], "min_dim"),
    (["closed-form", "--trials", "1000000000"], "memory_gb"),
    (["train", "--seeds", "100000000"], "memory_gb"),
    (["capacity", "--dims", "1000000"], "memory_gb"),
    (["theory", "-N", "1000000000000"], "memory_gb"),
    (["claims", "--trials", "1000000000"], "memory_gb"),
    (["claims", "--only", "1", "--trials", "100000", "--memory-gb", "0.01"], "memory_gb"),
    (["closed-form", "--memory-gb", "0"], "memory_gb"),
]


@pytest.mark.parametrize(("argv", "field"), CASES, ids=[" ".join(a) for a, _ in CASES])
def test_bad_input_is_one_line_and_writes_nothing(cwd: Path, argv: list[str], field: str):
    before = sorted(p.name for p in cwd.iterdir())
    code, _, err = run(argv)
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"assocmem: error: {field}: "), err
    assert sorted(p.name for p in cwd.iterdir()) == before


def test_sweep_results_out_that_cannot_be_created(cwd: Path):
    from assocmem.sweep.store import Store

    with Store(cwd / "r.db"):
        pass
    before = sorted(p.name for p in cwd.iterdir())
    code, _, err = run(["sweep", "results", "--db", "r.db", "--out", "a_file/x.csv"])
    assert code == 2 and err.startswith("assocmem: error: out: "), err
    assert sorted(p.name for p in cwd.iterdir()) == before


@pytest.mark.parametrize("n_boot", ["1000000000", "1000"])
def test_fit_bootstrap_over_the_budget_is_refused(cwd: Path, n_boot: str):
    source = _records(cwd, "--dims", "5", "10", "20")
    before = sorted(p.name for p in cwd.iterdir())
    budget = ["--memory-gb", "0.0001"] if n_boot == "1000" else []  # 1000 × 2 trials × 4: 80 KB
    code, out, err = run(["fit", source, "--n-boot", n_boot, *budget])
    assert code == 2 and out == "", err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("assocmem: error: memory_gb: "), err
    assert sorted(p.name for p in cwd.iterdir()) == before


def test_bootstrap_estimate_bounds_what_the_bootstrap_allocates():
    """:func:`bootstrap_bytes` against the peak numpy allocation tracemalloc sees while
    :func:`bootstrap_slopes` runs: an upper bound, and not loose by more than 2×."""
    import tracemalloc

    import numpy as np

    from assocmem.analysis.fit import bootstrap_slopes
    from assocmem.analysis.memory import bootstrap_bytes

    n_trials, n_points, n_boot = 50, 10, 2000
    x = np.geomspace(10, 1000, n_points)
    errors = np.random.default_rng(0).uniform(0.1, 1.0, (n_trials, n_points)) * x**-0.5
    tracemalloc.start()
    try:
        bootstrap_slopes(x, errors, loss="linear", n_boot=n_boot, rng=np.random.default_rng(0))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    estimate = bootstrap_bytes(n_trials, n_points, n_boot)
    assert estimate / 2 <= peak <= estimate, (peak, estimate)


@pytest.mark.parametrize(
    ("figure", "args"),
    [
        ("4", ["--schemes", "empirical", "--n-samples", "10", "100", "--dims", "5", "20"]),
        ("3", ["--dims", "5", "20"]),  # Figure 4's kind: infinite data only
        (
            "1",
            [
                "--schemes",
                "empirical",
                "seen_once",
                "--n-samples",
                "10",
                "100",
                "--dims",
                "5",
                "20",
            ],
        ),
    ],
)
def test_figure_refuses_records_of_another_experiment(cwd: Path, figure: str, args: list[str]):
    source = _records(cwd, *args)
    before = sorted(p.name for p in cwd.iterdir())
    code, _, err = run(["figure", figure, "--from", source, "--out", "fig"])
    assert code == 2 and err.startswith("assocmem: error: from: figure "), err
    assert sorted(p.name for p in cwd.iterdir()) == before


def test_figure_draws_records_of_its_experiment(cwd: Path):
    source = _records(cwd, "--dims", "5", "20", "--n-samples", "inf")
    code, out, err = run(["figure", "4", "--from", source, "--out", "fig"])
    assert code == 0, err
    assert (cwd / "fig.png").exists() and (cwd / "fig.svg").exists()


def test_spec_reports_every_problem_of_base(cwd: Path):
    Path("two.toml").write_text(
        'name = "two"\nkind = "closed_form"\n[base]\nn_inputs = 0\nalpha = -1\ndims = [0]\n'
    )
    code, _, err = run(["sweep", "run", "two.toml", "--db", "r.db", "--dry-run"])
    assert code == 2 and "3 problems" in err, err
    for where in ("base.n_inputs", "base.alpha", "base.dims"):
        assert where in err
    assert not Path("r.db").exists()


def test_piped_tables_are_printed_whole(cwd: Path):
    code, out, _ = run(["theory", "--alpha", "1.5"])
    assert code == 0
    assert "…" not in out  # before: cut to 100 columns with "…" whatever the output
    assert "overflow: error rises with T at fixed d" in out
    payload = json.loads(run(["theory", "--format", "json"])[1])
    assert payload["kind"] == "theory"

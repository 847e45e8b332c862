"""The failures of issue 36, each as a new user met it: a traceback, an exit 0 with wrong or
empty output, or an error that does not help. Each test fails on the code before the fix
(f63871f); the study commands run at ``--scale tiny`` (seconds) or are refused before any run.
"""

import contextlib
import io
import json
import os
import shutil
import sys
import warnings
from pathlib import Path

import pytest
import torch

from assocmem import ConfigError, run_study
from assocmem.cli import main
from assocmem.figures.style import colors


def run(argv: list[str]) -> tuple[int, str, str]:
    """``assocmem ARGV`` in-process: (exit code, stdout, stderr); RuntimeWarnings raise."""
    out, err = io.StringIO(), io.StringIO()
    with (
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
        warnings.catch_warnings(),
    ):
        warnings.simplefilter("error", RuntimeWarning)
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def refused(argv: list[str], field: str, folder: Path | None = None) -> str:
    """The one error line of a refused command (exit 2, nothing on stdout or in ``folder``)."""
    before = sorted(folder.rglob("*")) if folder is not None else None
    code, out, err = run(argv)
    lines = err.strip().splitlines()
    assert code == 2 and out == "", (code, out, err)
    assert len(lines) == 1 and lines[0].startswith(f"assocmem: error: {field}: "), err
    assert lines[0].endswith(f"(see assocmem {argv[0]} --help)") or "--help)" in lines[0], err
    if folder is not None:
        assert sorted(folder.rglob("*")) == before
    return lines[0]


# ---- study commands: what the analysis needs is refused before anything runs -------------

NO_CUDA = pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without CUDA")


@NO_CUDA
@pytest.mark.parametrize("study", ["hierarchy", "superposition", "editing", "similar"])
def test_study_on_cuda_without_cuda_is_refused(cwd: Path, study: str) -> None:
    # before: hierarchy KeyError 'first'; superposition and editing exit 0 on the CPU
    refused([study, "--device", "cuda", "--out", "o"], "device", cwd)


@pytest.mark.parametrize(
    ("argv", "field"),
    [
        (["superposition", "--heads", "1"], "heads"),  # before: zip() ValueError in the figure
        (["superposition", "--dims", "64"], "dims"),  # no slope in d
        (["superposition", "--heads", "64", "128", "--dims", "16", "32"], "heads"),  # H > d
        (["similar", "--n-groups", "1"], "n_groups"),  # before: fit_effective_tokens ValueError
        (["vocabulary", "--n-samples", "0", "inf"], "n_samples"),  # before: numpy warnings
    ],
)
def test_study_needs_are_refused_up_front(cwd: Path, argv: list[str], field: str) -> None:
    refused([*argv, "--out", "o"], field, cwd)


def test_run_study_refuses_what_the_figure_cannot_compare(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="^heads: give at least 2 distinct"):
        run_study("superposition", scale="tiny", settings={"heads": [2]}, out=tmp_path / "o")
    assert not (tmp_path / "o").exists()


def test_a_study_setting_error_names_the_setting(tmp_path: Path) -> None:
    # before: "reproduce:superposition: 1 problem: base.heads: …", no field first
    with pytest.raises(ConfigError, match="^heads: values must be distinct"):
        run_study("superposition", scale="tiny", settings={"heads": [2, 2]}, out=tmp_path / "o")
    assert not (tmp_path / "o").exists()


def test_colors_of_nothing_is_no_colour() -> None:
    assert colors(0) == []  # before: one colour, so zip(strict=True) over no curve raised


@pytest.mark.parametrize(
    "argv",
    [
        # before: IndexError in the error-vs-d panel (it wanted q = 1{x ≤ d/8} at equal width)
        ["superposition", "--schemes", "population", "--budgets", "matrix"],
        # before: zip() ValueError drawing N_eff (no group-shared target)
        ["similar", "--target", "mod"],
    ],
)
def test_a_study_restricted_to_one_value_draws_its_figure(cwd: Path, argv: list[str]) -> None:
    code, out, err = run([*argv, "--scale", "tiny", "--quiet", "--out", "o"])
    assert code == 0 and err == "", err
    assert out.strip()
    assert list((cwd / "o" / "figures").glob("*.png"))


# ---- sample sizes T = 0 ---------------------------------------------------------------------


@pytest.mark.parametrize("command", ["closed-form", "predict"])
def test_empirical_scheme_at_zero_samples(command: str) -> None:
    # before: the in-law sampler's reshape of a rank-0 basis raised a torch RuntimeError
    argv = [command, "--n-samples", "0", "--schemes", "empirical", "--format", "json"]
    argv += ["--dims", "10"] if command == "closed-form" else ["--n-inputs", "100", "--trials", "2"]
    code, out, err = run(argv)
    assert code == 0, err
    payload = json.loads(out)
    records = payload["records"]
    assert all(r["n_samples"] == 0 for r in records)
    if command == "closed-form":
        # nothing stored: every token missed
        assert all(r["mean"] == pytest.approx(1.0) for r in records)


def test_predict_table_shows_zero_samples_as_zero() -> None:
    code, out, err = run(["predict", "--n-samples", "0", "--schemes", "empirical", "-N", "100"])
    assert code == 0, err
    assert "inf" not in out.split("\n\n")[-2]  # before: T = 0 shown as inf (0 or "inf")


def test_theory_at_zero_samples_warns_nothing() -> None:
    code, out, err = run(["theory", "--n-samples", "0", "10", "--format", "json"])
    assert code == 0 and err == "", err  # before: RuntimeWarning divide by zero
    rows = json.loads(out)["finite_data"]
    assert rows[0]["finite_data_error"] == pytest.approx(1.0)
    assert rows[0]["asymptotic_shape"] is None  # T^{-(α-1)/α} = inf at T = 0 (null in JSON)


# ---- files ------------------------------------------------------------------------------


def _records(cwd: Path, *dims: str) -> str:
    code, out, _ = run(["closed-form", "--dims", *dims, "--trials", "2", "--format", "json"])
    assert code == 0
    (cwd / "r.json").write_text(out)
    return "r.json"


def test_missing_records_file_is_not_found(cwd: Path) -> None:
    line = refused(["figure", "4", "--from", "nope.json", "--out", "f4"], "from", cwd)
    assert "not found" in line and "malformed" not in line


def test_figure_under_a_missing_folder_is_refused(cwd: Path) -> None:
    source = _records(cwd, "10", "100")
    line = refused(["figure", "4", "--from", source, "--out", "no/such/f4"], "out", cwd)
    assert "not found" in line  # before: exit 0, the folders created


def test_fit_with_nothing_to_fit_is_refused(cwd: Path) -> None:
    source = _records(cwd, "10")
    refused(["fit", source], "results", cwd)  # before: exit 0 with an empty table


def test_a_closed_form_config_given_to_sweep_run_says_so_once(cwd: Path) -> None:
    example = Path(__file__).parents[1] / "examples" / "figure4.toml"
    code, _, err = run(["sweep", "run", str(example), "--db", "g.db"])
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert err.count("allowed: name, description") == 1  # before: six times
    assert "closed-form --config" in err and "sweep run figure4" in err
    assert not (cwd / "g.db").exists()


# ---- errors help ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "field", "near"),
    [
        (["closed-form", "--schemes", "threshhold"], "schemes", "threshold"),
        (["superposition", "--budgets", "widht"], "budgets", "width"),
        (["closed-form", "--sampler", "in-law"], "sampler", "in_law"),
        (["superposition", "--scale", "tinny"], "scale", "tiny"),
    ],
)
def test_an_unknown_name_suggests_the_nearest(
    cwd: Path, argv: list[str], field: str, near: str
) -> None:
    assert f"did you mean {near}?" in refused(argv, field, cwd)


def test_a_spec_key_suggests_the_nearest(cwd: Path) -> None:
    (cwd / "s.toml").write_text('kind = "closed_form"\n[base]\ndims = [8]\n[axis]\nalpha = [2]\n')
    code, _, err = run(["sweep", "run", "s.toml", "--db", "g.db"])
    assert code == 2 and "did you mean axes?" in err, err


def test_a_library_error_ends_with_the_help_of_its_command(cwd: Path) -> None:
    # a ConfigError raised while the command runs (not by argparse) gets the hint too
    line = refused(["closed-form", "--n-inputs", "10", "--dims", "5", "--schemes", "x"], "schemes")
    assert line.endswith("(see assocmem closed-form --help)")
    line = refused(["sweep", "run", "nope.toml", "--db", "g.db"], "spec")
    assert line.endswith("(see assocmem sweep run --help)")


# ---- tables are never cut --------------------------------------------------------------------

LONG = [("a rather long description of a sweep, " * 2).strip(), 0.000123456, "x" * 30]  # 121 wide


def test_a_piped_table_prints_every_column_whole(capsys: pytest.CaptureFixture[str]) -> None:
    from assocmem.cli.common import format_table

    text = format_table(["spec", "value", "note"], [LONG, ["b", 2.0, None]])
    lines = text.splitlines()
    assert len(lines) == 4 and "…" not in text
    assert LONG[0] in lines[2] and "0.0001235" in lines[2] and LONG[2] in lines[2]


def test_a_narrow_terminal_gets_one_record_a_line(monkeypatch: pytest.MonkeyPatch) -> None:
    from assocmem.cli import common

    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    monkeypatch.setattr(shutil, "get_terminal_size", lambda *a: os.terminal_size((40, 24)))
    text = common.format_table(["spec", "value", "note"], [LONG, ["b", 2.0, None]])
    assert text.splitlines() == [
        f"spec: {LONG[0]} | value: 0.0001235 | note: {LONG[2]}",
        "spec: b | value: 2",
    ]
    monkeypatch.setattr(shutil, "get_terminal_size", lambda *a: os.terminal_size((200, 24)))
    assert len(common.format_table(["spec"], [["b"]]).splitlines()) == 3  # it fits: a table


@pytest.mark.parametrize(
    "argv",
    [
        ["theory", "--alpha", "1.5"],
        ["sweep", "specs"],
        ["train", "-N", "20", "--dims", "8", "16", "--seeds", "1", "--n-steps", "5"],
    ],
)
def test_command_tables_are_never_cut(cwd: Path, argv: list[str]) -> None:
    code, out, err = run(argv)
    assert code == 0, err
    assert "…" not in out  # before: headers and numbers cut with "…"


def test_the_hierarchy_table_has_rows_without_d_512() -> None:
    # found by the property test: the table was at d = 512 only, empty for other settings
    result = run_study("hierarchy", scale="tiny", settings={"dims": [16, 32]})
    assert result.table is not None and result.table.rows
    assert "d = 32" in result.table.title


def test_sample_free_schemes_say_why_t_is_inf() -> None:
    # before: closed-form --n-samples 0 reported the run as T = inf, without a word
    code, out, err = run(["closed-form", "--n-samples", "0", "--dims", "10", "--trials", "2"])
    assert code == 0, err
    assert "T = inf for uniform, population, threshold:P=d/8: sample-free schemes" in out
    code, out, _ = run(["closed-form", "--dims", "10", "--trials", "2"])
    assert "sample-free" not in out  # T = inf was asked for


def test_a_reader_that_leaves_early_gets_no_traceback() -> None:
    # before: ``assocmem … --format json | head`` ended in a BrokenPipeError traceback
    import shlex
    import subprocess

    sizes = " ".join(str(t) for t in range(1, 3001))
    python = shlex.quote(sys.executable)
    script = f"{python} -m assocmem theory --n-samples {sizes} --format json | head -c 10"
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=120)
    assert done.stdout == '{"kind": "'
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr, done.stderr


def test_results_of_a_sweep_not_stored_is_refused(cwd: Path) -> None:
    # found by the property test: --sweep nope printed an empty list and exited 0
    (cwd / "s.toml").write_text('name = "tiny"\nkind = "closed_form"\n[base]\ndims = [8]\n')
    assert run(["sweep", "run", "s.toml", "--db", "g.db", "--quiet"])[0] == 0
    line = refused(["sweep", "results", "--db", "g.db", "--sweep", "tinny"], "sweep")
    assert "did you mean tiny?" in line
    refused(["sweep", "results", "--db", "g.db", "--kind", "train"], "kind")


def test_an_empty_shard_is_refused_not_read_as_none(cwd: Path) -> None:
    """``--shard ''`` ran the whole sweep (an empty string read as no shard): now one line."""
    code, _, err = run(["sweep", "run", "figure4", "--db", "g.db", "--shard", ""])
    assert code == 2 and err.count("\n") == 1 and "shard" in err
    assert not (cwd / "g.db").exists()

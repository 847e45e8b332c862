"""Studies one at a time: ``run_study`` and the ``assocmem STUDY`` commands generated from the
study declarations, checked on a small study registered here (a closed-form sweep)."""

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from assocmem import (
    STUDY_COMMANDS,
    ConfigError,
    Experiment,
    StudyCommand,
    StudyOption,
    run_study,
)
from assocmem.cli import build_parser, main
from assocmem.experiments.registry import EXPERIMENTS, judged
from assocmem.report import Claim, Table

BASE = {"n_inputs": 50, "n_outputs": 5, "alpha": 2.0, "schemes": ["population"]}


def sweeps(scale: str) -> dict[str, Any]:
    dims = {"quick": [8, 32], "full": [8, 16, 32]}[scale]
    return {"toy": {"kind": "closed_form", "trials": 3, "base": {**BASE, "dims": dims}}}


def error_falls(frames: Any, scale: str) -> Claim:
    means = frames.toy.groupby("dim")["error"].mean()
    return Claim(
        "toy-1",
        "the error falls with d",
        {"first": float(means.iloc[0]), "last": float(means.iloc[-1])},
        bool(means.iloc[-1] < means.iloc[0]),
        tolerance="strictly lower",
    )


def table(ctx: Any) -> Table:
    means = ctx.frames.toy.groupby("dim")["error"].mean()
    return Table("Toy", ["d", "error"], [[int(d), float(e)] for d, e in means.items()])


TOY = Experiment(
    "beyond-toy",
    "A toy study",
    "caption",
    "beyond",
    sweeps=sweeps,
    claims={"toy-1": error_falls},
    table=table,
)
COMMAND = StudyCommand(
    "toy",
    "beyond-toy",
    "a toy study",
    "The error of q = p against d.",
    (
        StudyOption("dims", "int", "dimensions", many=True, low=1),
        StudyOption("trials", "int", "draws per point", low=1),
    ),
)


@pytest.fixture
def toy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(EXPERIMENTS, TOY.name, TOY)
    monkeypatch.setitem(STUDY_COMMANDS, COMMAND.name, COMMAND)


def test_run_study_measures_judges_and_keeps_nothing(toy: None, tmp_path: Path) -> None:
    result = run_study("toy")
    assert result.experiment == "beyond-toy" and result.scale == "quick"
    frame = result.frames["toy"]
    assert sorted(frame["dim"].unique()) == [8, 32] and len(frame) == 2 * 3
    (claim,) = result.claims
    assert claim.figure == "beyond-toy" and claim.passed is True
    assert result.table is not None and [row[0] for row in result.table.rows] == [8, 32]
    payload = json.loads(json.dumps(result.to_dict()))
    assert payload["claims"][0]["id"] == "toy-1" and len(payload["records"]["toy"]) == 6
    assert run_study("beyond-toy", scale="full").frames["toy"]["dim"].nunique() == 3


def test_changed_settings_are_measured_not_judged(toy: None) -> None:
    result = run_study("toy", settings={"dims": [4, 64], "trials": 2})
    assert sorted(result.frames["toy"]["dim"].unique()) == [4, 64]
    assert len(result.frames["toy"]) == 4
    (claim,) = result.claims
    assert claim.passed is None and "not judged" in claim.note


def test_settings_equal_to_the_scale_keep_the_verdicts(toy: None) -> None:
    (claim,) = run_study("toy", settings={"dims": [8, 32], "trials": 3}).claims
    assert claim.passed is True


def test_bad_study_settings_are_one_line_errors(toy: None, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="lr: is not a setting"):
        run_study("toy", settings={"lr": 1.0})
    with pytest.raises(ConfigError, match="dims"):
        run_study("toy", settings={"dims": [0]})
    with pytest.raises(ConfigError, match="study: unknown study 'nope'"):
        run_study("nope")
    with pytest.raises(ConfigError, match="scale"):
        run_study("toy", scale="huge")
    assert list(tmp_path.iterdir()) == []


def test_out_keeps_the_runs_and_resumes(toy: None, tmp_path: Path) -> None:
    first = run_study("toy", out=tmp_path)
    with sqlite3.connect(tmp_path / "runs.db") as conn:
        created = conn.execute("SELECT hash, created FROM runs ORDER BY hash").fetchall()
    second = run_study("toy", out=tmp_path)
    with sqlite3.connect(tmp_path / "runs.db") as conn:
        again = conn.execute("SELECT hash, created FROM runs ORDER BY hash").fetchall()
    assert again == created and len(created) == 3  # one run per trial; none recomputed
    assert first.frames["toy"]["error"].tolist() == second.frames["toy"]["error"].tolist()


def test_command_is_generated_from_the_declaration(
    toy: None, capsys: pytest.CaptureFixture[str]
) -> None:
    assert "toy" in build_parser().format_help()
    assert main(["toy", "--dims", "8", "64", "--trials", "2", "--format", "json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert {r["dim"] for r in payload["records"]["toy"]} == {8, 64}
    assert payload["claims"][0]["passed"] is None
    assert main(["toy"]) == 0
    out = capsys.readouterr().out
    assert "Toy" in out and "toy-1" in out and "pass" in out
    assert main(["toy", "--dims", "0"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("assocmem: error: dims:")


def test_reproduce_beyond_judges_the_studies_claims(toy: None) -> None:
    assert TOY in judged({"beyond"}) and TOY not in judged({"claims"})


@pytest.mark.parametrize(
    ("name", "settings", "field"),
    [
        ("noise-threshold", {"n_samples": [300, "inf"]}, "n_samples"),  # k needs a finite T
        ("noise-threshold", {"label_noise": [0.0, 0.7]}, "label_noise"),  # beyond the exact vote
        ("vocabulary", {"dims": [64]}, "dims"),  # no slope from one d
    ],
)
def test_what_an_analysis_needs_is_refused_before_anything_runs(
    tmp_path: Path, name: str, settings: dict[str, Any], field: str
) -> None:
    with pytest.raises(ConfigError, match=f"^{field}: "):
        run_study(name, settings=settings, out=tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_a_frame_keeps_its_types_whatever_else_the_database_holds(
    toy: None, tmp_path: Path
) -> None:
    """A training run in the same runs.db (no ``trial`` field) made the toy's integer columns
    float: ``--format json`` printed ``0.0`` or ``0`` depending on the folder."""
    from assocmem.sweep.execute import run_sweep
    from assocmem.sweep.spec import parse_spec

    base = {"n_inputs": 10, "n_outputs": 2, "alpha": 2.0, "dim": 4, "n_steps": 2, "batch_size": 4}
    other = parse_spec({"name": "other", "kind": "train", "base": base}, source="test")
    run_sweep(other, tmp_path / "runs.db")
    frame = run_study("toy", out=tmp_path).frames["toy"]
    assert frame["trial"].dtype == "int64" and frame["dim"].dtype == "int64"

"""``assocmem train``: flags, TOML, JSON output, one-line errors."""

import json

import pytest
import torch

from assocmem.cli import main


@pytest.fixture(autouse=True)
def only_train_command(monkeypatch: pytest.MonkeyPatch) -> None:
    """Parse with the train subcommand alone, independent of the other subcommands' state."""
    monkeypatch.setattr("assocmem.cli.COMMANDS", ("train",))


FAST = ["train", "--quiet", "-N", "20", "--dims", "8", "--n-samples", "64", "--batch-sizes", "16"]


def test_train_json(capsys: pytest.CaptureFixture[str]) -> None:
    code = main([*FAST, "--optimizers", "sgd", "adam", "--lrs", "1", "10", "--seeds", "2",
                 "--eval-every", "2", "--format", "json"])  # fmt: skip
    assert code == 0
    payload = json.loads(capsys.readouterr().out)
    assert len(payload["runs"]) == 8 and len(payload["summary"]) == 4
    run = payload["runs"][0]
    assert run["status"] == "ok" and 0 <= run["error"] <= 1
    assert [point[0] for point in run["curve"]] == [0, 2, 4]


def test_train_best_lr_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*FAST, "--lrs", "0.1", "100", "--seeds", "2", "--best-lr"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 3  # header, rule, one row: the better of the two lrs


def test_train_table_from_toml(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "grid.toml"
    config.write_text('models = ["matrix", "qupdate"]\nlrs = [1.0]\ndims = [16]\nseeds = 2\n')
    assert main([*FAST[:4], "--config", str(config), "--n-samples", "64"]) == 0
    out = capsys.readouterr().out
    assert "qupdate" in out and "matrix" in out


@pytest.mark.parametrize(
    "extra",
    [
        ["--lrs", "-1"],
        ["--dims", "0"],
        ["--batch-sizes", "128"],
        ["--betas", "2", "0"],
        *([["--device", "cuda"]] if not torch.cuda.is_available() else []),
    ],
)
def test_train_bad_input_exits_2(extra: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*FAST, *extra]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("assocmem: error:")


def test_train_bad_toml_key(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "bad.toml"
    config.write_text("learning_rate = 1\n")
    assert main(["train", "--quiet", "--config", str(config)]) == 2
    assert "learning_rate" in capsys.readouterr().err

"""The command line: output formats, TOML configs, one-line errors with exit code 2."""

import json
import subprocess
import sys

import pytest

from assocmem.cli import main


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "assocmem", *args], capture_output=True, text=True, check=False
    )


def test_table_output(capsys):
    assert main(["closed-form", "-N", "50", "--dims", "5", "50", "--trials", "3", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "threshold:P=d/8" in out and "3 trials" in out


def test_json_output_records(capsys):
    code = main(
        [
            "closed-form",
            "-N",
            "60",
            "--dims",
            "log:5:60:3",
            "--n-samples",
            "inf",
            "20",
            "--schemes",
            "seen_once",
            "population",
            "--trials",
            "4",
            "--quiet",
            "--format",
            "json",
        ]
    )
    assert code == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["kind"] == "closed_form"
    records = payload["records"]
    # seen_once: 2 sample sizes × 3 dims; population (no data): 1 × 3 dims
    assert len(records) == 9
    for r in records:
        assert len(r["errors"]) == 4 and r["n_trials"] == 4
        assert r["head_mean"] + r["tail_mean"] == pytest.approx(r["mean"])
    assert {r["n_samples"] for r in records} == {None, 20}


def test_toml_config_and_flag_override(tmp_path, capsys):
    cfg = tmp_path / "run.toml"
    cfg.write_text(
        'n_inputs = 40\ndims = [4, 40]\nschemes = ["uniform"]\ntrials = 2\nn_samples = ["inf"]\n'
    )
    assert (
        main(["closed-form", "--config", str(cfg), "--trials", "3", "--quiet", "--format", "json"])
        == 0
    )
    payload = json.loads(capsys.readouterr().out)
    assert payload["config"]["trials"] == 3 and payload["config"]["n_inputs"] == 40


def test_probabilities_file(tmp_path, capsys):
    path = tmp_path / "p.txt"
    path.write_text("0.5 0.25 0.125 0.0625 0.0625")
    assert (
        main(
            [
                "closed-form",
                "--probabilities",
                str(path),
                "-M",
                "2",
                "--dims",
                "3",
                "--trials",
                "2",
                "--quiet",
                "--format",
                "json",
            ]
        )
        == 0
    )
    assert json.loads(capsys.readouterr().out)["config"]["n_inputs"] == 5


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (["-N", "0"], "n_inputs"),
        (["-M", "2000"], "n_outputs"),
        (["--alpha", "nan"], "alpha"),
        (["--alpha", "-1"], "alpha"),
        (["--dims", "0"], "dims"),
        (["--dims", "ten"], "dims"),
        (["--schemes", "hebbian"], "schemes"),
        (["--schemes", "threshold:P=5000"], "schemes"),
        (["--n-samples", "-3"], "n_samples"),
        (["--trials", "0"], "trials"),
        (["-N", "1000000", "--dims", "10000", "--sampler", "explicit"], "memory_gb"),
        (
            ["--device", "cuda"]
            if not __import__("torch").cuda.is_available()
            else ["--device", "tpu"],
            "device",
        ),
    ],
)
def test_bad_input_is_one_line_exit_2(args, field):
    proc = run_cli("closed-form", *args, "--quiet")
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"assocmem: error: {field}:"), proc.stderr
    assert proc.stdout == ""


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ("n_inputs = [", "config"),
        ("bogus = 3", "bogus"),
        ('dims = "log:1:x"', "dims"),
        ("n_inputs = 'many'", "n_inputs"),
    ],
)
def test_bad_toml_is_one_line_exit_2(tmp_path, text, field):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    proc = run_cli("closed-form", "--config", str(path), "--quiet")
    assert proc.returncode == 2
    assert proc.stderr.strip().startswith(f"assocmem: error: {field}:"), proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_missing_config_file():
    proc = run_cli("closed-form", "--config", "/nonexistent.toml")
    assert proc.returncode == 2 and "config:" in proc.stderr


def test_claims_command_rejects_unknown_id(capsys):
    assert main(["claims", "--only", "99"]) == 2

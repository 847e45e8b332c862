"""Progress bars: one helper (:mod:`assocmem.progress`) behind every long library call; a bar on
standard error when asked for, nothing otherwise, and the same numbers either way."""

import json
from pathlib import Path

import numpy as np
import pytest

from assocmem.analysis.record_fits import FitOptions, fit_records
from assocmem.cli import main
from assocmem.closed_form import run_closed_form
from assocmem.closed_form.config import ClosedFormConfig
from assocmem.progress import progress_bar, wanted
from assocmem.sweep.execute import run_sweep
from assocmem.sweep.store import read_rows
from assocmem.training import TrainConfig, train

SPEC = """
name = "tiny"
kind = "closed_form"
trials = 2
runs_per_batch = 1
[base]
n_inputs = 30
schemes = ["uniform"]
dims = [4, 8]
[axes]
alpha = [1.5, 2.0]
"""


def test_wanted_is_off_with_quiet_and_off_when_stderr_is_not_a_terminal(capsys) -> None:
    assert not wanted(quiet=True)
    assert not wanted()  # pytest's captured stderr is not a terminal


def test_a_disabled_bar_prints_nothing_and_an_enabled_one_prints_its_name(capsys) -> None:
    with progress_bar(3, "quiet-bar", "step", False) as bar:
        bar.update(3)
    assert capsys.readouterr().err == ""
    with progress_bar(3, "loud-bar", "step", True, leave=True) as bar:
        bar.update(3)
    err = capsys.readouterr().err
    assert "loud-bar" in err and "3/3" in err


def _bar_and_result(capsys, call, *args, **kwargs):
    """``call`` without and with ``progress=True``: (stderr off, stderr on, result off, on)."""
    quiet = call(*args, progress=False, **kwargs)
    err_off = capsys.readouterr().err
    loud = call(*args, progress=True, **kwargs)
    return err_off, capsys.readouterr().err, quiet, loud


def test_run_closed_form_bar(capsys) -> None:
    cfg = ClosedFormConfig(n_inputs=30, dims=(4, 8), trials=3)
    off, on, quiet, loud = _bar_and_result(capsys, run_closed_form, cfg)
    assert off == "" and "closed-form" in on and "3/3" in on
    np.testing.assert_array_equal(quiet.errors, loud.errors)


def test_train_bar(capsys) -> None:
    cfgs = [TrainConfig(n_inputs=20, dim=8, n_samples=64, batch_size=8, seed=s) for s in (0, 1)]
    off, on, quiet, loud = _bar_and_result(capsys, train, cfgs)
    steps = sum(c.steps for c in cfgs)
    assert off == "" and "run-step" in on and f"0/{steps}" in on  # erased when done
    assert [r.to_dict() for r in quiet] == [r.to_dict() for r in loud]


def test_run_sweep_bar(capsys, tmp_path: Path) -> None:
    spec = tmp_path / "tiny.toml"
    spec.write_text(SPEC)
    run_sweep(spec, tmp_path / "quiet.db", progress=False)
    assert capsys.readouterr().err == ""
    run_sweep(spec, tmp_path / "loud.db", progress=True)
    err = capsys.readouterr().err
    assert "sweep tiny" in err and "4/4" in err and "ok=4" in err  # kept, with its statuses
    rows = [read_rows(tmp_path / f"{n}.db") for n in ("quiet", "loud")]
    assert [r["metrics"] for r in rows[0]] == [r["metrics"] for r in rows[1]]


def test_fit_records_bar(capsys) -> None:
    cfg = ClosedFormConfig(n_inputs=50, dims=(4, 8, 16, 32), n_samples=(None,), trials=4)
    payload = run_closed_form(cfg).to_json()
    _, on, quiet, loud = _bar_and_result(capsys, fit_records, payload, FitOptions(n_boot=20))
    curves = len(quiet["fits"])  # one fit in d per scheme (T = inf), no fit in T
    assert "fit" in on and f"0/{curves}" in on  # erased when done
    assert quiet == loud


def test_fit_and_words_take_quiet(capsys, tmp_path: Path) -> None:
    """The commands print no bar off a terminal, and accept --quiet."""
    cfg = ClosedFormConfig(n_inputs=50, dims=(4, 8, 16), trials=3)
    path = tmp_path / "cf.json"
    path.write_text(json.dumps(run_closed_form(cfg).to_json()))
    assert main(["fit", str(path), "--n-boot", "20", "--quiet"]) == 0
    assert main(["fit", str(path), "--n-boot", "20"]) == 0
    assert capsys.readouterr().err == ""
    pytest.importorskip("wordfreq")
    args = ["words", "en", "-N", "50", "--dims", "4", "8", "16", "--trials", "2", "--compare"]
    assert main([*args, "--quiet"]) == 0
    assert capsys.readouterr().err == ""

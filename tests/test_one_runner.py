"""One runner (issue #34, criterion 2): ``reproduce``, ``assocmem STUDY`` and ``claims`` run
their sweeps and judge their claims through :func:`assocmem.experiments.runner.run_experiments`,
and the claims command reads the very numbers the closed-form kernel computes."""

import ast
from pathlib import Path

import numpy as np
import pytest

import assocmem
import assocmem.experiments.runner as runner
from assocmem import reproduce, run_study
from assocmem.closed_form import run_closed_form
from assocmem.experiments.claims import SWEEPS, ClaimRunner, check_claims, claim_config

EXPERIMENTS = Path(assocmem.__file__).parent / "experiments"
CALLERS = ("reproduce.py", "study.py", "claims.py")


def _calls(path: Path) -> set[str]:
    """The names called in a module (``f(...)`` and ``x.f(...)``)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call):
            func = node.func
            names.add(func.id if isinstance(func, ast.Name) else getattr(func, "attr", ""))
    return names


@pytest.mark.parametrize("module", CALLERS)
def test_the_three_commands_run_and_judge_only_through_the_runner(module):
    called = _calls(EXPERIMENTS / module)
    assert "run_experiments" in called
    assert not called & {"run_sweep", "judge", "run_closed_form", "StoredFrames"}, module


def test_the_static_check_can_fail():
    assert {"run_sweep", "judge"} <= _calls(EXPERIMENTS / "runner.py")


@pytest.fixture
def sweeps_run(monkeypatch):
    """The names of the sweeps the runner runs, in order."""
    names: list[str] = []
    run_sweep = runner.run_sweep

    def counted(spec, db, **kw):
        names.append(spec.name)
        return run_sweep(spec, db, **kw)

    monkeypatch.setattr(runner, "run_sweep", counted)
    return names


def test_each_command_runs_its_sweeps_through_the_runner(tmp_path, sweeps_run):
    assert reproduce(tmp_path / "r", only=["1"]).claims  # Figure 1 and its claim
    assert sweeps_run == ["figure1-quick"]
    sweeps_run.clear()
    assert run_study("similar", scale="tiny").claims
    assert sweeps_run == ["similar-quick"]
    sweeps_run.clear()
    (claim,) = check_claims(["7"], trials=2)  # reads Figure 1's sweep only, on first read
    assert claim.id == "7" and sweeps_run == ["figure1-full"]


def test_the_claims_frames_are_the_kernels_numbers():
    """Through the runner (a sweep into a results database), every error of every closed-form
    claim sweep equals the kernel's on the same config, bit for bit."""
    frames = ClaimRunner(trials=3, seed=5)
    for name in SWEEPS:
        stored = getattr(frames, name)
        direct = run_closed_form(claim_config(name, 3, 5)).to_frame()
        keys = ["scheme", "dim", "n_samples", "trial"]
        a = stored.set_index(keys)["error"].sort_index()
        b = direct.set_index(keys)["error"].sort_index()
        assert a.index.equals(b.index), name
        np.testing.assert_array_equal(a.to_numpy(), b.to_numpy(), err_msg=name)

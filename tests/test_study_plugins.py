"""A study from another package: registered by its entry point, run by the commands.

docs/tutorials/add-experiment.md says a study registers through one function,
``register_study``, and that another package's study is found by its entry point (group
``assocmem.studies``) and gets ``assocmem NAME`` and a ``reproduce --only`` item with no edit
of assocmem. Here a temporary package (a folder on ``PYTHONPATH`` with a ``.dist-info`` holding
``entry_points.txt``, which ``importlib.metadata`` discovers as an installed distribution)
declares a toy study; both commands run it in a fresh process.
"""

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import assocmem
from assocmem import Experiment
from assocmem.experiments import commands
from assocmem.experiments.commands import StudyCommand, register_study, study_command

SRC = Path(assocmem.__file__).resolve().parents[1]

TOY_PACKAGE = """
from assocmem import Claim, Experiment, StudyCommand, StudyOption, register_study
from assocmem.experiments.experiment import closed_form_sweep
from assocmem.report import Table

SCHEMES = ["population", "threshold:P=d/8"]


def sweeps(scale):
    base = {"n_inputs": 40, "dims": [8, 16], "n_samples": ["inf"], "schemes": SCHEMES}
    return {"toy": closed_form_sweep(base, scale, trials={"quick": 2, "full": 3})}


def errors(frames):
    return frames.toy.groupby(["scheme", "dim"])["error"].mean()


def claim_bigger_is_better(frames, scale):
    by = errors(frames)
    return Claim(
        "toy-d", "a larger d errs less (population, N = 40)",
        {"error_d8": by["population", 8], "error_d16": by["population", 16]},
        bool(by["population", 16] <= by["population", 8]),
        tolerance="error_d16 <= error_d8",
    )


def table(ctx):
    rows = [[s, d, round(e, 4)] for (s, d), e in errors(ctx.frames).items()]
    return Table("Toy: error by scheme and d", ["scheme", "d", "error"], rows)


TOY = Experiment(
    name="toy-study", title="A toy study", caption="Error vs d, N = 40.", item="toy",
    sweeps=sweeps, claims={"toy-d": claim_bigger_is_better}, table=table,
)
TOY_COMMAND = StudyCommand(
    name="toy", experiment="toy-study", help="a toy study from another package",
    description="Error vs d of two schemes at N = 40.",
    options=(StudyOption("trials", "int", "draws per point", low=1),),
    tiny=(("trials", 1),),
)


def register():
    register_study(TOY_COMMAND, TOY)
"""


@pytest.fixture(scope="module")
def toy_env(tmp_path_factory):
    """An environment where the package ``toy_assocmem_study`` is installed (entry point)."""
    site = tmp_path_factory.mktemp("site")
    (site / "toy_assocmem_study.py").write_text(TOY_PACKAGE)
    info = site / "toy_assocmem_study-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: toy-assocmem-study\nVersion: 0.1\n"
    )
    (info / "entry_points.txt").write_text(
        "[assocmem.studies]\ntoy = toy_assocmem_study:register\n"
    )
    env = dict(os.environ, MPLBACKEND="Agg")
    env["PYTHONPATH"] = os.pathsep.join([str(site), str(SRC), env.get("PYTHONPATH", "")])
    return env


def _assocmem(env, *argv, cwd):
    done = subprocess.run(
        [sys.executable, "-m", "assocmem", *argv],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_study_from_another_package_gets_its_command(toy_env, tmp_path):
    assert "a toy study from another package" in _assocmem(toy_env, "--help", cwd=tmp_path)
    result = json.loads(_assocmem(toy_env, "toy", "--format", "json", cwd=tmp_path))
    assert result["experiment"] == "toy-study" and result["scale"] == "quick"
    assert [c["id"] for c in result["claims"]] == ["toy-d"]
    assert result["claims"][0]["passed"] is True
    assert result["table"]["headers"] == ["scheme", "d", "error"]
    assert len(result["table"]["rows"]) == 4  # 2 schemes × 2 dims


def test_a_study_from_another_package_is_a_reproduce_item(toy_env, tmp_path):
    _assocmem(toy_env, "reproduce", "--only", "toy", "--out", "out", "--quiet", cwd=tmp_path)
    claims = json.loads((tmp_path / "out" / "claims.json").read_text())
    assert "toy-d" in json.dumps(claims)
    assert "Toy: error by scheme and d" in (tmp_path / "out" / "report.html").read_text()


def test_without_the_package_there_is_no_toy_command(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(SRC))
    done = subprocess.run(
        [sys.executable, "-m", "assocmem", "toy"], env=env, cwd=tmp_path, capture_output=True
    )
    assert done.returncode == 2


def test_register_study_refuses_a_command_of_another_experiment():
    first = assocmem.EXPERIMENTS["beyond-similar"]
    command = StudyCommand(name="mismatch", experiment="beyond-editing", help="h", description="d")
    with pytest.raises(ValueError, match="runs experiment 'beyond-editing', not 'beyond-similar'"):
        register_study(command, first)
    assert "mismatch" not in assocmem.STUDY_COMMANDS


@pytest.fixture
def registries(monkeypatch):
    """The experiment and command registries, restored after the test."""
    registry = importlib.import_module("assocmem.experiments.registry")
    monkeypatch.setattr(registry, "EXPERIMENTS", dict(registry.EXPERIMENTS))
    monkeypatch.setattr(commands, "STUDY_COMMANDS", dict(commands.STUDY_COMMANDS))
    return registry


def test_a_study_registers_several_experiments_and_no_command(registries):
    """A study without a command of its own (as the real-data study, or the facts study's
    capacity frontiers beside its command) registers through register_study too."""
    first, second = (Experiment(f"toy-{k}", k, "caption", "beyond") for k in "ab")
    commands_before = dict(commands.STUDY_COMMANDS)
    assert register_study(None, first, second) is None
    assert list(registries.EXPERIMENTS)[-2:] == ["toy-a", "toy-b"]
    assert commands_before == commands.STUDY_COMMANDS


def test_a_study_command_runs_one_of_the_study_experiments(registries):
    first, second = (Experiment(f"toy-{k}", k, "caption", "beyond") for k in "ab")
    command = StudyCommand(name="toy-two", experiment="toy-b", help="h", description="d")
    assert register_study(command, first, second) is command
    assert registries.EXPERIMENTS["toy-b"] is second and study_command("toy-b") is command


def test_register_study_refuses_nothing_to_register_and_a_bad_target():
    with pytest.raises(ValueError, match="needs a command or at least one experiment"):
        register_study(None)
    with pytest.raises(ValueError, match="must be 'module:attribute', got 'toy_study'"):
        register_study(None, "toy_study")


def test_the_built_in_studies_without_commands_are_registered():
    """beyond-noise and beyond-laws (studies/real_data/) and beyond-capacity (the facts study)
    come from their folders through register_study, in report order, without a command."""
    names = list(assocmem.EXPERIMENTS)
    assert names.index("overflow") + 1 == names.index("beyond-noise")
    assert names.index("beyond-laws") + 1 == names.index("beyond-superposition")
    assert names.index("beyond-capacity") + 1 == names.index("beyond-facts")
    assert all(study_command(n) is None for n in ("beyond-noise", "beyond-laws", "beyond-capacity"))

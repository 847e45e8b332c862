"""The command line's flags derive from the configuration's declarations (issue #34, criterion
3): a new field of the problem, or a new optimiser hyper-parameter, declared with its
documentation, gets its flag (name, type, help) with no edit of the CLI."""

import dataclasses
import subprocess
import sys

import pytest

from assocmem import ClosedFormConfig, ConfigError, TrainConfig
from assocmem.cli import build_parser, main
from assocmem.cli.closed_form import config_from_args, values_from_args
from assocmem.cli.train import spec_from_args
from assocmem.closed_form import config as closed_form_config
from assocmem.config import closed_form, hyper, problem, training
from assocmem.config.problem import described


@dataclasses.dataclass(frozen=True)
class ProblemPlus(problem.Problem):
    """The problem with one more field, as a contributor would declare it."""

    zeta: float = described(0.5, "ζ, a field of the problem added by a test")


@dataclasses.dataclass(frozen=True)
class HyperPlus(hyper.HyperParameters):
    """The hyper-parameters with one more, as a new optimiser would declare it."""

    rho: float = described(0.9, "ρ, a hyper-parameter added by a test")


@dataclasses.dataclass(frozen=True)
class RunPlus(training.TrainingRun):
    """The training run with a new grid axis and a new setting, as a contributor would add them."""

    width: int = described(3, "hidden widths h", key="widths", metavar="H", low=1)
    warmup: int = described(0, "warm-up steps", low=0)


@dataclasses.dataclass(frozen=True)
class ClosedFormPlus(closed_form.ClosedFormRun):
    """The closed-form run with a new setting and a new list, as a contributor would add them."""

    warmup: int = described(0, "warm-up passes, a run field added by a test", low=0)
    widths: tuple[int, ...] = described((3,), "hidden widths h", metavar="H", low=1)


def help_of(command: str, capsys: pytest.CaptureFixture[str]) -> str:
    assert main([command, "--help"]) == 0
    return " ".join(capsys.readouterr().out.split())  # wrapped lines as one


def test_a_new_problem_field_gets_its_flag_in_both_commands(monkeypatch, capsys):
    assert "--zeta" not in help_of("closed-form", capsys)  # the test can fail
    monkeypatch.setattr(problem, "Problem", ProblemPlus)
    monkeypatch.setattr(problem, "TRAINING", problem.Setup((*problem.TRAINING.names, "zeta")))
    for command in ("closed-form", "train"):
        text = help_of(command, capsys)
        assert "--zeta ZETA ζ, a field of the problem added by a test (default 0.5)" in text
    args = build_parser().parse_args(["train", "--zeta", "0.25"])
    assert spec_from_args(args)["zeta"] == 0.25
    with pytest.raises(SystemExit) as caught:  # its type: a finite number
        build_parser().parse_args(["closed-form", "--zeta", "nan"])
    assert caught.value.code == 2
    assert "assocmem: error: zeta: must be a finite number" in capsys.readouterr().err


def test_a_new_hyper_parameter_gets_its_flag_and_reaches_the_config(monkeypatch, capsys):
    assert "--rho" not in help_of("train", capsys)
    monkeypatch.setattr(hyper, "HyperParameters", HyperPlus)
    text = help_of("train", capsys)
    assert "--rho RHO ρ, a hyper-parameter added by a test (default 0.9)" in text
    spec = spec_from_args(build_parser().parse_args(["train", "--rho", "0.5"]))
    assert spec["rho"] == 0.5
    with pytest.raises(ConfigError, match="rho: optimizer 'sgd' has no rho"):
        TrainConfig.from_flat({"optimizer": "sgd", "rho": 0.5})  # known, but not sgd's


def test_the_declared_flags_keep_their_spelling(capsys):
    """Short spellings, per-setup least values and the old embeddings spelling."""
    args = build_parser().parse_args(["train", "-N", "20", "-M", "3", "--embeddings", "spherical"])
    assert (args.n_inputs, args.n_outputs, args.embedding) == (20, 3, "spherical")
    with pytest.raises(SystemExit):  # training needs M ≥ 2, the closed form M ≥ 1
        build_parser().parse_args(["train", "-M", "1"])
    assert "must be an integer ≥ 2" in capsys.readouterr().err
    assert build_parser().parse_args(["closed-form", "-M", "1"]).n_outputs == 1
    args = build_parser().parse_args(["train", "--label-noise", "0", "0.1", "--betas", "0.9", "0"])
    assert (args.label_noise, args.betas) == ([0.0, 0.1], [0.9, 0.0])


def test_a_new_run_field_gets_its_flag_an_axis_its_plural(monkeypatch, capsys):
    """The grid axes and run settings of ``assocmem train`` come from TrainingRun too."""
    assert "--widths" not in help_of("train", capsys)  # the test can fail
    monkeypatch.setattr(training, "TrainingRun", RunPlus)
    text = help_of("train", capsys)
    assert "--widths H [H ...] hidden widths h (an axis; default 3)" in text
    assert "--warmup WARMUP warm-up steps (default 0)" in text
    args = build_parser().parse_args(["train", "--widths", "4", "8", "--warmup", "2"])
    assert {k: spec_from_args(args)[k] for k in ("widths", "warmup")} == {
        "widths": [4, 8],
        "warmup": 2,
    }
    with pytest.raises(SystemExit):  # its type: an integer at least its low
        build_parser().parse_args(["train", "--widths", "0"])
    assert "assocmem: error: widths: must be an integer ≥ 1" in capsys.readouterr().err


def test_the_training_config_takes_the_run_declarations():
    """One declaration: each run field of TrainConfig is TrainingRun's (default, documentation);
    the optimiser, an object in the config, is declared by its name for the command line."""
    config = {f.name: f for f in dataclasses.fields(TrainConfig)}
    for name, item in training.run_fields().items():
        if name == "optimizer":
            assert TrainConfig().optimizer.name == item.default
            continue
        assert config[name].default == item.default and config[name].metadata == item.metadata


def test_the_grid_flags_keep_their_spellings_and_the_runs_their_order():
    args = build_parser().parse_args(
        ["train", "--dims", "8", "16", "--seeds", "2", "--layer-norm", "off", "on",
         "--distribution", "zipf:1.5", "zipf:2", "--models", "learned", "--full-batch"]
    )  # fmt: skip
    spec = spec_from_args(args)
    assert spec == {"distribution": ["zipf:1.5", "zipf:2"], "models": ["learned"],
                    "dims": [8, 16], "seeds": 2, "layer_norm": [False, True],
                    "full_batch": True}  # fmt: skip
    assert list(spec) == ["distribution", "models", "dims", "seeds", "layer_norm", "full_batch"]


def test_a_new_closed_form_field_gets_its_flag_and_reaches_the_config(monkeypatch, capsys):
    """The run settings of ``assocmem closed-form`` come from ClosedFormRun: a new field is its
    declaration and one line in ClosedFormConfig, no edit of the command line."""
    assert "--warmup" not in help_of("closed-form", capsys)  # the test can fail
    monkeypatch.setattr(closed_form, "ClosedFormRun", ClosedFormPlus)
    text = help_of("closed-form", capsys)
    assert "--warmup WARMUP warm-up passes, a run field added by a test (default 0)" in text
    assert "--widths H [H ...] hidden widths h (default 3)" in text

    @dataclasses.dataclass(frozen=True)
    class ConfigPlus(ClosedFormConfig):  # the one line per field a configuration adds
        warmup: int = closed_form.run_field("warmup")
        widths: tuple[int, ...] = closed_form.run_field("widths")

    monkeypatch.setattr(closed_form_config, "ClosedFormConfig", ConfigPlus)
    words = ["closed-form", "--warmup", "2", "--widths", "4", "8", "--dims", "16"]
    config = config_from_args(build_parser().parse_args(words))
    assert type(config) is ConfigPlus
    assert (config.warmup, config.widths, config.dims) == (2, (4, 8), (16,))  # a list: a tuple
    assert config_from_args(build_parser().parse_args(["closed-form"])).widths == (3,)
    with pytest.raises(SystemExit) as caught:  # its type: an integer at least its low
        build_parser().parse_args(["closed-form", "--warmup", "-1"])
    assert caught.value.code == 2
    assert "assocmem: error: warmup: must be an integer ≥ 0, got -1" in capsys.readouterr().err


def test_the_closed_form_config_takes_the_run_declarations():
    """One declaration: ClosedFormConfig is the problem's fields, then ClosedFormRun's, in
    their order, at their defaults, with their documentation (records and hashes unchanged)."""
    config = dataclasses.fields(ClosedFormConfig)
    declared = [
        *dataclasses.fields(problem.Problem),
        *dataclasses.fields(closed_form.ClosedFormRun),
    ]
    assert [item.name for item in config] == [item.name for item in declared]
    for mine, item in zip(config, declared, strict=True):
        assert (mine.default, mine.metadata) == (item.default, item.metadata), item.name


def test_the_closed_form_flags_keep_their_spellings_and_parsing(capsys):
    """Lists keep their text for the configuration (log ranges, inf); a spec-only field gets
    no flag; the budget is a number > 0, as every command's --memory-gb."""
    args = build_parser().parse_args(
        ["closed-form", "--dims", "log:10:1000:3", "--n-samples", "inf", "10", "--schemes",
         "population", "--memory-gb", "8", "--readout", "--sampler", "explicit"]
    )  # fmt: skip
    assert values_from_args(args) == {"dims": ["log:10:1000:3"], "n_samples": ["inf", "10"],
                                      "schemes": ["population"], "memory_gb": 8.0,
                                      "readout": True, "sampler": "explicit"}  # fmt: skip
    config = config_from_args(args)
    assert (config.dims, config.n_samples) == ((10, 100, 1000), (None, 10))
    assert "--head-fraction" not in help_of("closed-form", capsys)
    with pytest.raises(SystemExit):
        build_parser().parse_args(["closed-form", "--memory-gb", "0"])
    assert "assocmem: error: memory_gb: must be a number > 0, got '0'" in capsys.readouterr().err


def test_closed_form_help_imports_no_torch():
    """``assocmem closed-form --help`` builds every flag from the declarations, torch-free."""
    code = (
        "import contextlib, io, sys; from assocmem.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
        "    assert main(['closed-form', '--help']) == 0\n"
        "assert '--n-groups' in out.getvalue()\n"
        "print(sorted(m for m in ('torch', 'numpy', 'pandas') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"

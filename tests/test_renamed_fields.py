"""One concept, one field name (issue #34, criterion 3): the training configuration's
``embeddings`` and ``output_embeddings`` are ``embedding`` and ``output_embedding``, as in the
closed-form one. The old spellings keep working in TOML files, mappings, stored records and the
command line, with one deprecation line; a database written before resumes with nothing
recomputed (tests/test_sweep_kinds.py runs tests/data/legacy_sweeps.db, written by 1b98223)."""

import dataclasses
import warnings

import pytest

from assocmem import ClosedFormConfig, ConfigError, TrainConfig
from assocmem.cli import main
from assocmem.sweep.kinds import get_kind
from assocmem.training.config import RENAMED

OLD = {"optimizer": "sgd", "embeddings": "spherical", "output_embeddings": "spherical"}
NEW = {"optimizer": "sgd", "embedding": "spherical", "output_embedding": "spherical"}


def test_both_configurations_spell_the_embeddings_alike():
    closed_form = {f.name for f in dataclasses.fields(ClosedFormConfig)}
    training = {f.name for f in dataclasses.fields(TrainConfig)}
    assert {"embedding", "output_embedding"} <= closed_form & training
    assert not set(RENAMED) & training


def test_the_old_spelling_reads_as_the_new_with_one_warning_each():
    with pytest.warns(FutureWarning) as caught:
        old = TrainConfig.from_flat(OLD)
    assert old == TrainConfig.from_flat(NEW)
    assert sorted(str(w.message).split(":")[0] for w in caught) == sorted(RENAMED)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        TrainConfig.from_flat(NEW)  # the new spelling warns nothing


def test_both_spellings_at_once_are_refused():
    with pytest.raises(ConfigError, match="embeddings: is the old spelling of embedding"):
        TrainConfig.from_flat({**NEW, "embeddings": "gaussian"})


def test_a_run_keeps_its_identity_under_the_new_name():
    """The hash is taken under the old names: a run stored before the rename is found."""
    kind = get_kind("train")
    with pytest.warns(FutureWarning):
        old = kind.build(OLD)
    new = kind.build(NEW)
    assert kind.identity(old, None) == kind.identity(new, None)
    config = kind.identity(new, None)["config"]
    assert config["embeddings"] == "spherical" and "embedding" not in config
    assert kind.record(new, None)["embedding"] == "spherical"  # stored under the new name


def test_the_command_line_takes_both_flags_and_prints_one_line(tmp_path, capsys):
    old_toml = tmp_path / "old.toml"
    old_toml.write_text('n_inputs = 20\nn_samples = 64\nembeddings = "spherical"\n')
    assert main(["train", "--config", str(old_toml), "--dims", "4", "--format", "json"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err == ["assocmem: warning: embeddings: renamed embedding (the closed-form name); "
                   "the old spelling is still read"]  # fmt: skip
    for flag in ("--embedding", "--embeddings"):
        args = ["train", "-N", "20", "--n-samples", "64", "--dims", "4", flag, "spherical"]
        assert main([*args, "--format", "json"]) == 0
        assert '"embedding": "spherical"' in capsys.readouterr().out

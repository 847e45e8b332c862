"""Choosing the closed-form sampler: validation, ``auto``, the memory guard, run identity."""

import json
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from assocmem.analysis.memory import check_closed_form_memory
from assocmem.cli import main
from assocmem.closed_form import cost, kernel, run_closed_form
from assocmem.closed_form.config import ClosedFormConfig, config_from_mapping, working_set_bytes
from assocmem.closed_form.samplers import REGISTRY, get_sampler
from assocmem.config.errors import ConfigError
from assocmem.sweep.execute import run_sweep
from assocmem.sweep.identity import content_hash
from assocmem.sweep.kinds import get_kind
from assocmem.sweep.kinds.closed_form import build_closed_form
from assocmem.sweep.store import read_rows

VOCABULARY = dict(  # the large case: N = 10⁶, d up to 16,384
    n_inputs=10**6, schemes=("population", "threshold:P=d/8"), dims=(64, 256, 1024, 4096, 16384)
)


def test_registry_names_are_the_config_choices():
    assert tuple(REGISTRY) == cost.SAMPLERS
    assert ("auto", *cost.SAMPLERS) == cost.CHOICES


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"sampler": "fast"}, "unknown sampler 'fast'; allowed: auto, explicit, in_law"),
        ({"sampler": "in_law", "embedding": "spherical"}, "exact only for i.i.d. Gaussian"),
        ({"sampler": "in_law", "embedding": "orthogonal", "dims": (1000,)}, "allowed here"),
    ],
)
def test_bad_sampler_is_one_clear_error(values, message):
    with pytest.raises(ConfigError, match=message) as caught:
        config_from_mapping(values)
    assert caught.value.field == "sampler"


def test_auto_is_explicit_unless_exact_and_cheaper():
    assert ClosedFormConfig(**VOCABULARY, memory_gb=2).resolved_sampler == "in_law"
    for embedding in ("spherical", "orthogonal"):  # not i.i.d. Gaussian: never in law
        cfg = ClosedFormConfig(n_inputs=200, dims=(200, 400), embedding=embedding)
        assert cfg.resolved_sampler == "explicit"
    tiny = ClosedFormConfig(n_inputs=20, n_outputs=5, dims=(2, 4), schemes=("population",))
    assert cost.speedup(tiny) < 1 and tiny.resolved_sampler == "explicit"
    # from the config alone: the budget, the device and the trials do not move the choice
    base = dict(n_inputs=3000, dims=(100, 1000))
    choices = {
        ClosedFormConfig(**base, **extra).resolved_sampler
        for extra in ({}, {"memory_gb": 64}, {"trials": 1000}, {"seed": 9})
    }
    assert len(choices) == 1


def test_memory_guard_estimates_the_sampler_that_runs():
    in_law = ClosedFormConfig(**VOCABULARY, memory_gb=2)  # auto: admitted in law
    assert working_set_bytes(in_law) < 2 * 2**30
    check_closed_form_memory(in_law)  # what the commands check (closed-form, predict): admitted
    with pytest.raises(ConfigError, match="memory_gb"):  # every trial's cells count too
        check_closed_form_memory(in_law, memory_gb=working_set_bytes(in_law) / 2**30)
    assert ClosedFormConfig(**VOCABULARY, memory_gb=2, sampler="in_law").resolved_sampler
    with pytest.raises(ConfigError, match=r"sampler explicit\), over the budget") as caught:
        ClosedFormConfig(**VOCABULARY, memory_gb=2, sampler="explicit")  # 65 GB of embeddings
    assert caught.value.field == "memory_gb"
    with pytest.raises(ConfigError, match="sampler in_law"):
        ClosedFormConfig(**{**VOCABULARY, "n_inputs": 10**7}, memory_gb=2, sampler="in_law")


def test_trials_are_drawn_ahead_where_it_pays_and_fits():
    """Figure 1's N = 1000: explicit draws E in a helper thread; in law, a trial is small calls,
    drawn in line ahead of the trial before, its random numbers in the helper. N = 10⁶ in law
    under 2 GB: the next trial's basis beside this trial's products; with no room for a second
    trial's draws, in line after it."""
    fig1 = dict(n_inputs=1000, schemes=("empirical_threshold:P=d/12",), dims=(10, 100, 1000))
    explicit, in_law = get_sampler("explicit"), get_sampler("in_law")
    assert kernel.draw_mode(ClosedFormConfig(**fig1, sampler="explicit"), explicit) == "helper"
    assert kernel.draw_mode(ClosedFormConfig(**fig1, sampler="in_law"), in_law) == "ahead"
    large = ClosedFormConfig(**VOCABULARY, memory_gb=2, sampler="in_law")
    assert kernel.draw_mode(large, in_law) == "helper"
    need = cost.costs(large)["in_law"]
    assert 0 < need.draw_ahead < need.working_set
    tight = ClosedFormConfig(**VOCABULARY, memory_gb=need.working_set / 2**30 * 1.01)
    assert kernel.draw_mode(tight, in_law) == "in_line"  # admitted, but no room for a second
    small = cost.costs(ClosedFormConfig(**fig1, sampler="explicit"))["explicit"].working_set
    tight_explicit = ClosedFormConfig(**fig1, sampler="explicit", memory_gb=small / 2**30 * 1.01)
    assert kernel.draw_mode(tight_explicit, explicit) == "in_line"


@pytest.mark.parametrize("mode", ["helper", "ahead", "in_line"])
def test_draw_modes_give_the_same_numbers(monkeypatch, mode):
    """However the next trial is drawn (whole in a helper thread, in line with its random
    numbers in the helper, or after the trial), every metric is the same, bit for bit."""
    cfg = ClosedFormConfig(
        n_inputs=300, schemes=("population", "empirical_threshold:P=d/4"), dims=(8, 40, 64),
        n_samples=(50, None), trials=4, sampler="in_law", readout=True,
    )  # fmt: skip
    reference = run_closed_form(cfg, trials=[3, 1])  # in line: each trial alone
    monkeypatch.setattr(kernel, "draw_mode", lambda *_: mode)
    result = run_closed_form(cfg, trials=[3, 1])
    assert np.array_equal(result.errors, reference.errors)
    assert np.array_equal(result.head, reference.head)
    for name, values in reference.readout.items():
        assert np.array_equal(result.readout[name], values), name


# Hashes of these explicit runs computed on main before the sampler field existed: a record
# stored then must keep its identity (no run recomputed).
MAIN_HASHES = {
    "fig4": (
        dict(
            n_inputs=1000,
            schemes=["uniform", "population", "threshold:P=d/8"],
            dims="log:10:1000:20",
        ),  # fmt: skip
        "37660ab9940174a6cef2523d390afac81a8fdd733d85c41bff1f0a6ce6fb951b",
    ),
    "noisy": (
        dict(
            n_inputs=300,
            schemes=["empirical_threshold:P=d/12"],
            dims=[10, 100],
            n_samples=[10, "inf"],
            seed=3,
            label_noise=0.1,
        ),  # fmt: skip
        "f26d1f17c9f9bcf15597deff107bf805ef91c8e75d02754c54abc665d42abfce",
    ),
    "spherical": (
        dict(n_inputs=100, embedding="spherical", dims=[10, 20]),
        "91c72320b4d1826cc829bf83dd950101eb13a9db848280f138b6af985fc242ea",
    ),
}


@pytest.mark.parametrize("case", sorted(MAIN_HASHES))
def test_explicit_runs_hash_as_before_samplers_existed(case):
    values, expected = MAIN_HASHES[case]
    kind = get_kind("closed_form")
    cfg = build_closed_form({**values, "sampler": "explicit"})
    assert content_hash(kind.identity(cfg, 7)) == expected
    auto = build_closed_form(values)
    if auto.resolved_sampler == "explicit":  # auto resolving to explicit: the same run
        assert content_hash(kind.identity(auto, 7)) == expected


def test_in_law_runs_have_their_own_identity_shared_by_auto():
    values, explicit_hash = MAIN_HASHES["noisy"]
    kind = get_kind("closed_form")
    auto = build_closed_form(values)
    in_law = build_closed_form({**values, "sampler": "in_law"})
    assert auto.resolved_sampler == "in_law"
    assert content_hash(kind.identity(auto, 7)) == content_hash(kind.identity(in_law, 7))
    assert content_hash(kind.identity(in_law, 7)) != explicit_hash
    assert kind.record(auto, 7)["sampler"] == "in_law"


SPEC = """
name = "samplers"
kind = "closed_form"
trials = 3
[base]
n_inputs = 60
schemes = ["population"]
dims = [4, 16]
sampler = "{sampler}"
"""


def test_old_records_read_as_explicit_and_are_not_recomputed(tmp_path: Path):
    spec = tmp_path / "spec.toml"
    spec.write_text(SPEC.format(sampler="explicit"))
    db = tmp_path / "r.db"
    run_sweep(spec, db)
    with sqlite3.connect(db) as conn:  # as stored before the sampler field existed
        for hash_, text in conn.execute("SELECT hash, config FROM runs").fetchall():
            config = json.loads(text)
            del config["sampler"]
            conn.execute("UPDATE runs SET config = ? WHERE hash = ?", (json.dumps(config), hash_))
    assert run_sweep(spec, db).written == 0
    rows = [r for row in read_rows(db) for r in get_kind("closed_form").rows(row)]
    assert rows and {r["sampler"] for r in rows} == {"explicit"}
    spec.write_text(SPEC.format(sampler="in_law"))
    assert run_sweep(spec, db).written == 3  # a different computation: new runs
    rows = [r for row in read_rows(db) for r in get_kind("closed_form").rows(row)]
    assert {r["sampler"] for r in rows} == {"explicit", "in_law"}


def test_provenance_and_cli_name_the_sampler(capsys):
    cfg = ClosedFormConfig(n_inputs=50, dims=(5, 20), trials=2, sampler="in_law")
    assert run_closed_form(cfg).provenance["sampler"] == "in_law"
    args = ["closed-form", "-N", "50", "--dims", "5", "20", "--trials", "2", "--quiet"]
    assert main([*args, "--sampler", "in_law"]) == 0
    assert "in_law sampler" in capsys.readouterr().out
    capsys.readouterr()
    assert main([*args, "--sampler", "fast"]) == 2
    assert "sampler: invalid choice: 'fast'" in capsys.readouterr().err
    assert main([*args, "--sampler", "in_law", "--embedding", "spherical"]) == 2
    assert "sampler: in_law is exact only" in capsys.readouterr().err

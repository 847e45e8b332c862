"""Trained memories on real word laws and with noisy labels (issue 7, trained half)."""

import importlib.util
import math
from typing import Any

import pytest
import torch

from assocmem.closed_form import run_closed_form, trial_scores
from assocmem.closed_form.config import ClosedFormConfig
from assocmem.config.errors import ConfigError
from assocmem.laws.tokens import label_law, mod_targets
from assocmem.laws.words import parse_distribution
from assocmem.ops.population import population_metrics
from assocmem.training import TrainConfig, train
from assocmem.training.engine import draw_run, run_group
from assocmem.training.grid import expand_grid, summarize
from assocmem.training.kernels import (
    LabelLawAutogradKernel,
    TableSGDKernel,
    select_kernel,
)
from assocmem.training.labels import batch_label_law, draw_labels
from assocmem.training.reference import reference_train

needs_words = pytest.mark.skipif(
    importlib.util.find_spec("wordfreq") is None, reason="needs the optional wordfreq package"
)

SMALL = {"n_inputs": 20, "dim": 12, "n_samples": 96, "batch_size": 8}
NOISY: dict[str, dict[str, Any]] = {
    "sgd": {"optimizer": "sgd", "lr": 3.0, "label_noise": 0.3},
    "sign_adam": {"optimizer": "adam", "lr": 1.0, "label_noise": 0.3},
    "adam": {"optimizer": "adam", "betas": (0.9, 0.999), "lr": 0.1, "label_noise": 0.3},
    "learned_sgd": {"model": "learned", "optimizer": "sgd", "label_noise": 0.3},
    "full_batch_sgd": {"full_batch": True, "n_steps": 10, "lr": 5.0, "label_noise": 0.3},
    "full_batch_adam": {"full_batch": True, "n_steps": 10, "optimizer": "adam", "label_noise": 0.2},
    "words_sgd": {"words": "en", "lr": 3.0},
    "words_noisy_adam": {"words": "fr", "optimizer": "adam", "label_noise": 0.1},
}


def small(**changes: Any) -> TrainConfig:
    return TrainConfig.from_flat({**SMALL, **changes})


def cases() -> list[Any]:
    """The NOISY cases, those on word laws marked as needing wordfreq."""
    return [pytest.param(name, marks=[needs_words] if "words" in NOISY[name] else [])
            for name in NOISY]  # fmt: skip


def test_noisy_labels_have_the_stated_law() -> None:
    cfg = TrainConfig(n_inputs=50, n_outputs=5, n_samples=40_000, batch_size=8, label_noise=0.3)
    draws = draw_run(cfg)
    tokens, labels = draws["tokens"], draws["labels"]
    assert tokens is not None and labels is not None
    clean = mod_targets(50, 5)[tokens]
    flipped = labels != clean
    n = labels.numel()
    assert abs(flipped.double().mean().item() - 0.3) < 4 * math.sqrt(0.3 * 0.7 / n)
    shift = ((labels - clean) % 5)[flipped]  # the wrong label, relative to f*(x): 1..M-1
    counts = torch.bincount(shift, minlength=5)[1:].double()
    expected = flipped.sum().item() / 4
    assert counts.sum().item() == flipped.sum().item()
    assert ((counts - expected).abs() < 4 * math.sqrt(expected)).all()  # uniform over the others


def test_labels_are_coupled_across_noise_levels_and_absent_without_noise() -> None:
    low, high = draw_run(small(label_noise=0.1)), draw_run(small(label_noise=0.4))
    clean = mod_targets(20, 5)[low["tokens"]]
    assert draw_run(small())["labels"] is None
    assert draw_labels(small(), clean) is None
    flips_low, flips_high = low["labels"] != clean, high["labels"] != clean
    assert bool((flips_high | ~flips_low).all())  # a sample flipped at ε = 0.1 is flipped at 0.4


def test_batch_label_law_counts() -> None:
    tokens = torch.tensor([[0, 0, 2, 0], [1, 1, 1, 1]])
    labels = torch.tensor([[1, 0, 2, 1], [0, 0, 0, 2]])
    law = batch_label_law(tokens, labels, 3, 3)
    assert torch.allclose(law[0, 0], torch.tensor([1 / 3, 2 / 3, 0.0]))
    assert torch.allclose(law[0, 2], torch.tensor([0.0, 0.0, 1.0]))
    assert law[0, 1].sum() == 0 and torch.allclose(law[1, 1], torch.tensor([0.75, 0, 0.25]))


@pytest.mark.parametrize("name", cases())
def test_engine_matches_reference_with_noise_and_words(name: str) -> None:
    """The per-token label law of the engine against per-sample labels in a plain nn.Module."""
    cfg = small(**NOISY[name])
    expected = reference_train(cfg)
    for fast in (True, False):
        _, logits = run_group([cfg, cfg.with_(seed=5)], fast=fast)
        scale = 1 + expected.abs().max().item()
        assert (logits[0] - expected).abs().max().item() <= 2e-5 * scale, (name, fast)


@pytest.mark.parametrize("name", cases())
def test_batch_invariance_with_noise_and_words(name: str) -> None:
    cfg = small(**NOISY[name])
    companions = [cfg.with_(seed=3), cfg, cfg.with_(lr=cfg.lr / 2, seed=1)]
    _, together = run_group(companions)
    _, alone = run_group([cfg])
    assert torch.equal(together[1], alone[0])


@needs_words
def test_noise_changes_training_and_words_change_the_data() -> None:
    _, clean = run_group([small()])
    _, noisy = run_group([small(label_noise=0.3)])
    assert not torch.equal(clean, noisy)
    zipf, words = draw_run(small()), draw_run(small(words="en"))
    assert not torch.equal(zipf["tokens"], words["tokens"])
    assert torch.equal(small(words="en").probabilities(), small(words="en").probabilities())


def test_runs_with_noise_use_a_label_law_kernel() -> None:
    """Only kernels that take a label law as targets train noisy runs."""
    assert select_kernel(small(model="learned", label_noise=0.1)) is LabelLawAutogradKernel
    assert select_kernel(small(label_noise=0.1, optimizer="adam")) is LabelLawAutogradKernel
    assert select_kernel(small(label_noise=0.1)) is TableSGDKernel
    assert select_kernel(small(model="learned")) is not LabelLawAutogradKernel


def test_noisy_and_excess_errors_are_the_closed_form_definitions() -> None:
    """Score a closed-form memory with the training evaluation: same noisy/Bayes numbers."""
    eps = 0.2
    cfg = ClosedFormConfig(n_inputs=60, n_outputs=4, schemes=("population",), dims=(8, 30),
                           trials=1, label_noise=eps, output_embedding="gaussian")  # fmt: skip
    records = run_closed_form(cfg).records
    targets = mod_targets(60, 4)
    probs = torch.arange(1, 61, dtype=torch.float64).pow(-2.0)
    probs /= probs.sum()
    law = label_law(targets, 4, eps)
    for (_, dim), scores in trial_scores(cfg).items():
        record = next(r for r in records if r["dim"] == dim)
        metrics = population_metrics(scores[None], targets, probs, law=law)
        error = float(metrics.error[0])
        assert error == pytest.approx(record["mean"], abs=1e-9)
        train_like = TrainConfig(n_outputs=4, label_noise=eps)
        from assocmem.training.records import noisy_fields

        fields = noisy_fields(error, train_like)
        assert fields["noisy_error"] == pytest.approx(record["noisy_mean"])
        assert fields["bayes_error"] == record["bayes_error"] == eps
        # and directly: Σ_x p(x) (1 − L(f(x)|x)) for the argmax prediction f
        predicted = scores.argmax(1)
        direct = float((probs * (1 - law[torch.arange(60), predicted])).sum())
        assert direct == pytest.approx(fields["noisy_error"], abs=1e-9)
        assert fields["excess_error"] == pytest.approx(direct - eps, abs=1e-9)


def test_noisy_error_against_sampled_labels() -> None:
    """Monte Carlo: a trained memory's error on fresh noisy samples matches ``noisy_error``."""
    cfg = TrainConfig(n_inputs=30, dim=16, n_samples=2048, batch_size=16, label_noise=0.3,
                      optimizer="adam", lr=1.0)  # fmt: skip
    (result,), logits = run_group([cfg])
    test = TrainConfig(n_inputs=30, n_samples=200_000, batch_size=1, label_noise=0.3, seed=99)
    draws = draw_run(test)
    predicted = logits[0].argmax(1)[draws["tokens"]]
    measured = (predicted != draws["labels"]).double().mean().item()
    assert measured == pytest.approx(result.noisy_error, abs=4 * math.sqrt(0.25 / 200_000))
    assert result.excess_error == pytest.approx(result.noisy_error - 0.3)
    assert result.excess_error >= 0


def test_readout_fields() -> None:
    (result,), logits = run_group([small(optimizer="adam", lr=10.0)])
    probs = small().probabilities()
    soft = torch.softmax(logits[0].double(), 1)
    targets = mod_targets(20, 5)
    assert result.p_correct == pytest.approx(float((probs * soft[torch.arange(20), targets]).sum()))
    assert result.cross_entropy == pytest.approx(
        float(-(probs * soft[torch.arange(20), targets].log()).sum()), rel=1e-6
    )
    assert result.noisy_error == result.error and result.bayes_error == 0
    record = result.to_dict()
    assert {"p_correct", "noisy_error", "bayes_error", "excess_error"} <= set(record)


def test_noisy_cross_entropy_is_against_the_label_law() -> None:
    (result,), logits = run_group([small(label_noise=0.3)])
    law = label_law(mod_targets(20, 5), 5, 0.3)
    log_soft = torch.log_softmax(logits[0].double(), 1)
    expected = float((small().probabilities() * -(law * log_soft).sum(1)).sum())
    assert result.cross_entropy == pytest.approx(expected, rel=1e-6)


@needs_words
def test_grid_axes_for_laws_and_noise() -> None:
    configs = expand_grid({"distributions": ["zipf:1.5", "words:en"], "label_noise": [0, 0.1],
                           "dims": 8, "n_inputs": 20})  # fmt: skip
    assert len(configs) == 4
    assert {c.law for c in configs} == {"zipf:1.5", "words:en"}
    rows = summarize(train([c.with_(n_samples=64, batch_size=16) for c in configs]))
    assert {(r["law"], r["ε"]) for r in rows} == {
        ("zipf:1.5", 0),
        ("zipf:1.5", 0.1),
        ("words:en", 0),
        ("words:en", 0.1),
    }


@pytest.mark.parametrize(
    ("text", "fields"),
    [("zipf", {"words": None}), ("zipf:1.5", {"words": None, "alpha": 1.5}),
     ("words:en", {"words": "en"})],
)  # fmt: skip
def test_parse_distribution(text: str, fields: dict[str, Any]) -> None:
    assert parse_distribution(text) == fields


@pytest.mark.parametrize("text", ["zipf:0", "zipf:x", "words:", "gauss", ""])
def test_parse_distribution_errors(text: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse_distribution(text)
    assert err.value.field == "distribution"


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"label_noise": 0.8}, "label_noise"),  # (M-1)/M = 0.8 with M = 5
        ({"label_noise": -0.1}, "label_noise"),
        ({"label_noise": True}, "label_noise"),
        ({"model": "qupdate", "label_noise": 0.1}, "label_noise"),
        ({"words": "xx"}, "words"),
        ({"words": 3}, "words"),
    ],
)
def test_invalid_noise_and_law_name_their_field(changes: dict[str, Any], field: str) -> None:
    with pytest.raises(ConfigError) as err:
        small(**changes)
    assert err.value.field == field


SWEEP = """
name = "noisy"
kind = "train"
seeds = 2
[base]
n_inputs = 20
dim = 8
n_samples = 128
batch_size = 16
optimizer = "adam"
[axes]
label_noise = [0.0, 0.3]
distribution = ["words:en"]
"""


@needs_words
def test_sweep_records_carry_readout_and_noise_metrics(tmp_path) -> None:
    from assocmem.sweep.execute import run_sweep
    from assocmem.sweep.results import load_results

    spec = tmp_path / "noisy.toml"
    spec.write_text(SWEEP)
    run_sweep(spec, tmp_path / "n.db")
    df = load_results(tmp_path / "n.db")
    assert len(df) == 4 and set(df["label_noise"]) == {0.0, 0.3} and set(df["words"]) == {"en"}
    noisy = df[df["label_noise"] == 0.3].iloc[0]
    assert noisy["bayes_error"] == 0.3
    assert noisy["excess_error"] == pytest.approx(noisy["noisy_error"] - 0.3)
    assert noisy["noisy_error"] == pytest.approx(0.3 + (1 - 0.3 * 5 / 4) * noisy["error"])
    assert df["p_correct"].between(0, 1).all()
    direct = train([small(n_inputs=20, dim=8, n_samples=128, batch_size=16, optimizer="adam",
                          label_noise=0.3, words="en", seed=int(noisy["seed"]))])  # fmt: skip
    assert direct[0].error == pytest.approx(noisy["error"])
    assert direct[0].p_correct == pytest.approx(noisy["p_correct"])


def test_old_training_hashes_are_unchanged() -> None:
    """Runs stored before words/label_noise existed keep their identity (resumable stores)."""
    from assocmem.sweep.plan import Run

    key = Run.make("train", TrainConfig(dim=37, lr=3.0)).key
    assert key.startswith("88b04eea349dd91b")  # the key computed before the fields existed
    assert Run.make("train", TrainConfig(dim=37, lr=3.0, label_noise=0.1)).key != key

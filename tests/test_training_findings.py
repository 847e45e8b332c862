"""Slow tier: findings 1–6 of Cabannes et al. (2024), Section 4 (docs/science/claims.md):
values within about ±40 %, orderings at every d.

Run with ``pytest -m slow tests/test_training_findings.py`` (a few minutes on 2 cores);
``benchmarks/training_findings.py`` prints the full tables.
"""

import statistics
from typing import Any

import pytest

from assocmem.training import TrainConfig, train

pytestmark = pytest.mark.slow
SEEDS = range(10)


def mean_error(**settings: Any) -> float:
    configs = [TrainConfig(seed=s, **settings) for s in SEEDS]
    return statistics.fmean(r.error for r in train(configs))


def best_error(lrs: tuple[float, ...], **settings: Any) -> float:
    """Honest tuning: the best seed-averaged error over the learning rates."""
    return min(mean_error(lr=lr, **settings) for lr in lrs)


def test_finding_1_eq16_tracks_sgd_when_d_at_least_n() -> None:
    common = {"batch_size": 1000, "n_samples": 100_000, "init": "zero", "lr": 1.0}
    gaps = {}
    for d in (10, 1000):
        sgd = mean_error(dim=d, **common)
        q = mean_error(dim=d, model="qupdate", **common)
        gaps[d] = abs(sgd - q)
    assert gaps[1000] < 0.01 < gaps[10]


def test_finding_2_larger_steps_memorise_more() -> None:
    paper = {0.1: 0.046, 1.0: 0.018, 10.0: 0.0051, 100.0: 0.0017}
    errors = {lr: mean_error(dim=1000, batch_size=64, lr=lr) for lr in paper}
    assert list(errors.values()) == sorted(errors.values(), reverse=True)
    for lr, value in paper.items():
        assert errors[lr] == pytest.approx(value, rel=0.4)


def test_finding_3_small_batches_memorise_better() -> None:
    lrs = (1.0, 10.0, 100.0)
    for d, paper_small, paper_large in ((10, 0.06, 0.18), (1000, 0.017, 0.054)):
        small = best_error(lrs, dim=d, optimizer="adam", batch_size=16, n_samples=1024)
        large = best_error(lrs, dim=d, optimizer="adam", batch_size=1024, n_samples=1024)
        assert small < large
        assert large == pytest.approx(paper_large, rel=0.4)
        assert small == pytest.approx(paper_small, rel=0.45)


def test_finding_4_adam_beats_sgd_at_large_d() -> None:
    lrs = (1.0, 10.0, 100.0)
    adam = best_error(lrs, dim=1000, optimizer="adam", batch_size=256)
    sgd = best_error(lrs, dim=1000, optimizer="sgd", batch_size=256)
    assert adam < sgd
    assert adam == pytest.approx(0.0013, rel=0.45)
    assert sgd == pytest.approx(0.0048, rel=0.4)
    full = {"n_inputs": 10, "dim": 10, "full_batch": True, "n_steps": 1000, "init": "zero"}
    assert mean_error(optimizer="sign_sgd", lr=0.01, **full) == 0.0
    assert mean_error(optimizer="normalized_sgd", lr=0.1, **full) == 0.0
    assert mean_error(optimizer="sgd", lr=1.0, **full) > 0.0


def test_finding_5_layer_norm_helps_adam_at_fixed_lr() -> None:
    common = {"dim": 1000, "optimizer": "adam", "batch_size": 1024, "lr": 1.0}
    with_ln = mean_error(layer_norm=True, **common)
    without = mean_error(**common)
    assert with_ln < without
    assert with_ln == pytest.approx(0.014, rel=0.4)
    assert without == pytest.approx(0.028, rel=0.4)


def test_finding_6_learned_embeddings_reach_the_data_floor() -> None:
    for d in (10, 100):
        error = mean_error(dim=d, model="learned", batch_size=16, lr=1.0)
        assert 0.0005 < error < 0.004
        assert error < mean_error(dim=d, batch_size=16, lr=1.0) / 5

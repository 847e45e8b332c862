"""Predicted error curves against explicit Monte Carlo (W built as a d×d matrix)."""

import json

import numpy as np
import pytest

from assocmem.analysis.predict import (
    compare_records,
    predict_config,
    predict_errors,
    scheme_weights,
)
from assocmem.analysis.score_integral import EmbeddingLaw, token_success
from assocmem.analysis.theory import zipf
from assocmem.cli import main
from assocmem.closed_form import run_closed_form
from assocmem.closed_form.config import ClosedFormConfig
from assocmem.config.errors import ConfigError


def naive_errors(p, targets, q_of_dim, dims, n_outputs, trials, rng):
    """Population error of ``W = Σ_x q(x) u_{f(x)} e_xᵀ`` built explicitly: (trials, len(dims))."""
    out = np.zeros((trials, len(dims)))
    for t in range(trials):
        for i, d in enumerate(dims):
            e = rng.standard_normal((p.size, d)) / np.sqrt(d)  # Gaussian inputs
            u = rng.standard_normal((n_outputs, d))
            u /= np.linalg.norm(u, axis=1, keepdims=True)  # spherical outputs
            w = (u[targets] * q_of_dim(d)[:, None]).T @ e  # (d, d)
            scores = e @ w.T @ u.T  # (N, M)
            out[t, i] = p @ (scores.argmax(1) != targets)
    return out


@pytest.mark.parametrize("scheme", ["population", "threshold:P=d/4"])
def test_prediction_matches_explicit_monte_carlo(scheme):
    n_inputs, n_outputs, dims = 100, 5, [30, 60, 120]
    p = zipf(n_inputs, 2.0)
    targets = np.arange(n_inputs) % n_outputs
    weights = scheme_weights(scheme, p, dims)
    predicted = predict_errors(p, targets, weights, dims, n_outputs, EmbeddingLaw())
    mc = naive_errors(
        p, targets, lambda d: weights[dims.index(d)], dims, n_outputs, 300, np.random.default_rng(0)
    )
    mean, sem = mc.mean(0), mc.std(0, ddof=1) / np.sqrt(mc.shape[0])
    # within 12 % relative or 3 standard errors of the Monte Carlo mean
    assert (np.abs(predicted - mean) <= np.maximum(0.12 * mean, 3 * sem)).all(), (
        predicted,
        mean,
        sem,
    )


def test_unweighted_token_is_a_coin_flip_among_outputs():
    q = np.ones(50)
    q[7] = 0.0
    success = token_success(q, np.arange(50) % 5, 5, 40, EmbeddingLaw(input_kind="spherical"))
    assert success[7] == pytest.approx(0.2, abs=0.02)
    assert ((success >= 0) & (success <= 1)).all()


def test_more_capacity_less_error_for_thresholding():
    p = zipf(200, 2.0)
    dims = [16, 64, 256, 1024]
    pred = predict_errors(
        p, np.arange(200) % 5, scheme_weights("threshold:P=d/8", p, dims), dims, 5
    )
    assert (np.diff(pred) < 0).all()


def test_prediction_of_a_config_tracks_the_engine():
    cfg = ClosedFormConfig(
        n_inputs=200,
        dims=(40, 80, 160),
        schemes=("population", "empirical_threshold:P=d/8"),
        n_samples=(None, 300),
        trials=40,
    )
    rows = compare_records(predict_config(cfg, n_draws=20), run_closed_form(cfg).records)
    assert len(rows) == 3 * 3
    for row in rows:
        assert abs(row["predicted"] - row["mc_mean"]) <= max(
            0.15 * row["mc_mean"], 3 * row["mc_sem"]
        ), row


def test_bad_weights_are_config_errors():
    with pytest.raises(ConfigError):
        predict_errors(zipf(10, 2.0), np.arange(10) % 5, -np.ones(10), [10], 5)
    with pytest.raises(ConfigError):
        EmbeddingLaw(input_kind="orthogonal")


def test_predict_cli(capsys):
    base = ["predict", "-N", "60", "--dims", "20", "40", "--schemes", "threshold:P=d/4"]
    assert main([*base, "--trials", "6", "--format", "json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["kind"] == "prediction_vs_mc" and len(payload["records"]) == 2
    assert {"predicted", "mc_mean", "rel_error", "z"} <= payload["records"][0].keys()
    assert main([*base, "--no-mc"]) == 0
    assert "predicted" in capsys.readouterr().out
    assert main([*base, "--embedding", "orthogonal", "--dims", "60", "--no-mc"]) == 2
    assert main([*base, "--n-draws", "0"]) == 2


def test_prediction_integrates_tokens_in_bounded_blocks(monkeypatch):
    """Each token's integral is its own: blocks of any size give the same numbers, and memory
    stays bounded whatever N (q = p at N = 20,000: every token distinct; one (tokens × grid × M)
    array for all of them would be 197 MB, and the integrand holds three)."""
    import tracemalloc

    from assocmem.analysis import score_integral

    n = 20_000
    p = zipf(n, 1.5)
    targets = np.arange(n) % 5
    tracemalloc.start()
    try:
        blocked = predict_errors(p, targets, p, [1024], 5)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 100 * 2**20, f"{peak / 2**20:.0f} MB"
    rng = np.random.default_rng(3)
    q, var, cls = rng.random(500), rng.random((500, 7)) * 0.3, rng.integers(0, 7, 500)
    whole = score_integral._success_given_variances(q, var, cls)
    monkeypatch.setattr(score_integral, "BLOCK_VALUES", 41 * 8 * 7 * 13)  # blocks of 13 tokens
    np.testing.assert_array_equal(score_integral._success_given_variances(q, var, cls), whole)
    assert np.isfinite(blocked).all()

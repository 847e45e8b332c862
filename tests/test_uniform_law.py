"""The uniform token law (α = 0): allowed wherever a token law is configured (issue 37)."""

import math

import numpy as np
import pytest
import torch

from assocmem.analysis.theory import compute_optimal_dim, finite_data_error, zipf
from assocmem.closed_form import run_closed_form
from assocmem.closed_form.config import ClosedFormConfig
from assocmem.config.errors import ConfigError
from assocmem.laws.tokens import zipf_probabilities
from assocmem.training.config import TrainConfig
from assocmem.training.engine import train


def test_alpha_zero_is_the_uniform_law():
    assert torch.equal(zipf_probabilities(7, 0.0), torch.full((7,), 1 / 7, dtype=torch.float64))
    np.testing.assert_array_equal(zipf(7, 0.0), np.full(7, 1 / 7))


@pytest.mark.parametrize("alpha", [-0.5, math.nan, math.inf, True])
def test_negative_or_non_finite_alpha_is_refused(alpha):
    with pytest.raises(ConfigError, match="alpha"):
        zipf_probabilities(5, alpha)
    with pytest.raises(ConfigError, match="alpha"):
        ClosedFormConfig(n_inputs=5, n_outputs=2, alpha=alpha, dims=(4,)).validate()


def test_theory_at_alpha_zero_holds_finite_n_and_refuses_exponents():
    # Σ p (1 − p)^T with p = 1/N is (1 − 1/N)^T exactly; the exponents divide by α: refused.
    n, sizes = 50, [0, 10, 100, 1000]
    expected = [(1 - 1 / n) ** t for t in sizes]
    np.testing.assert_allclose(finite_data_error(zipf(n, 0.0), sizes), expected, rtol=1e-12)
    with pytest.raises(ConfigError, match="α > 1"):
        compute_optimal_dim(100.0, 0.0)


def test_closed_form_at_alpha_zero_equals_explicit_uniform_probabilities():
    common = {"n_inputs": 40, "n_outputs": 40, "dims": (8, 16), "trials": 3, "seed": 1}
    common |= {"schemes": ("population", "uniform"), "target": "random"}
    by_alpha = run_closed_form(ClosedFormConfig(alpha=0.0, **common)).errors
    by_probs = run_closed_form(ClosedFormConfig(probabilities=(1.0,) * 40, **common)).errors
    np.testing.assert_array_equal(by_alpha, by_probs)
    assert float(by_alpha.mean()) > 0  # a real measurement, not an empty one


def test_training_at_alpha_zero_runs_and_samples_every_token():
    cfg = TrainConfig(n_inputs=20, n_outputs=5, alpha=0.0, dim=16, n_samples=2000, lr=1.0)
    assert torch.allclose(cfg.probabilities(), torch.full((20,), 0.05, dtype=torch.float64))
    (result,) = train([cfg])
    assert result.status == "ok" and 0 <= result.error < 0.8

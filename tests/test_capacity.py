"""Capacity frontier: the search is exact on monotone functions; the Hebbian memory behaves."""

import numpy as np
import pytest

from assocmem.capacity import (
    FrontierPoint,
    fit_frontier,
    hebbian_accuracy,
    hebbian_frontier,
    largest_n,
)
from assocmem.cli import main


@pytest.mark.parametrize("true_n", [1, 2, 3, 17, 64, 1000, 999_999])
def test_largest_n_is_exact_on_a_step(true_n):
    calls = []

    def accuracy(n):
        calls.append(n)
        return 1.0 if n <= true_n else 0.5

    assert largest_n(accuracy, 0.99, n_min=2, n_max=10**6) == max(true_n, 1)
    assert len(calls) <= 2 * 20 + 2  # logarithmic number of evaluations


def test_hebbian_accuracy_limits():
    assert hebbian_accuracy(8, 512, None, trials=2, seed=0) == 1.0  # d ≫ N: perfect recall
    assert hebbian_accuracy(400, 4, None, trials=2, seed=0) < 0.2  # d ≪ N: mostly wrong


def test_fit_recovers_planted_quadratic_frontier():
    dims = [16, 32, 64, 128]
    points = [FrontierPoint(d, tuple(int(d**2 / 4) + k for k in (-1, 0, 1))) for d in dims]
    fit = fit_frontier(points)
    assert fit.exponent == pytest.approx(2.0, abs=0.01)
    assert fit.exponent_ci[0] <= fit.exponent <= fit.exponent_ci[1]
    assert np.allclose(fit.d_over_n, [d / (d**2 / 4) for d in dims], rtol=0.01)


def test_hebbian_frontier_grows_with_d():
    points = hebbian_frontier([16, 64], trials=2, repeats=2)
    assert points[1].median > 4 * points[0].median


def test_capacity_command(capsys):
    assert main(["capacity", "--dims", "8", "16", "--trials", "1", "--repeats", "2"]) == 0
    assert "N* ∝ d^" in capsys.readouterr().out
    assert main(["capacity", "--outputs", "zero"]) == 2

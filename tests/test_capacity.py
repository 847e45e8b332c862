"""Capacity frontier: the search is exact on monotone functions; the Hebbian memory behaves."""

import numpy as np
import pytest

from assocmem.analysis.frontier import FrontierPoint, fit_frontier, largest_n
from assocmem.cli import main
from assocmem.studies.facts.frontier_search import hebbian_accuracy, hebbian_frontier


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


# --- trained memories (issue 7, trained half) ---------------------------------------------


@pytest.mark.parametrize("true_n", [2, 5, 37, 100, 1234])
@pytest.mark.parametrize("guess", [2, 50, 5000])
def test_bracketed_search_is_within_tolerance_on_a_step(true_n, guess):
    from assocmem.analysis.frontier import largest_n_bracketed

    calls = []

    def accuracy(n):
        calls.append(n)
        return 1.0 if n <= true_n else 0.0

    found = largest_n_bracketed(accuracy, 0.99, guess, rel_tol=0.02, n_max=10**5)
    assert found <= true_n and (found >= true_n / 1.02 or true_n - found <= 1)
    assert len(calls) <= 60


def test_memorize_matches_torch_adam_on_w():
    """memorize (the registry's Adam) against torch.optim.Adam on an nn.Parameter W: the same
    accuracy (the two associations differ in the last bits only)."""
    import torch

    from assocmem.training.memorize import AdamSettings, memorize

    gen = torch.Generator().manual_seed(0)
    n, m, d, steps = 12, 4, 6, 25
    E, U = torch.randn(n, d, generator=gen), torch.randn(m, d, generator=gen)
    targets = torch.arange(n) % m
    W = torch.zeros(d, d, requires_grad=True)
    opt = torch.optim.Adam([W], lr=0.05)
    for _ in range(steps):
        opt.zero_grad()
        torch.nn.functional.cross_entropy(E @ W.T @ U.T, targets).backward()
        opt.step()
    expected = (E @ W.T @ U.T).argmax(1).eq(targets).double().mean()
    settings = AdamSettings(lr=0.05, max_steps=steps, window=0)
    result = memorize(E[None], U[None], targets, tau=2.0, settings=settings)  # τ > 1: all steps
    assert result.steps == steps and result.stopped == "budget"
    assert float(result.accuracy[0]) == pytest.approx(float(expected))
    # and the same W: compare the logits through a second route
    from assocmem.training.trainer import accuracy

    assert accuracy((E @ W.T @ U.T).detach()[None], targets).item() == pytest.approx(
        float(result.accuracy[0])
    )


def test_trained_memory_stores_what_hebbian_cannot():
    from assocmem.studies.facts.frontier_search import trained_accuracy

    # M = N = 40 at d = 16: d² = 256 > 1.3·N log N ≈ 192, while Hebbian recall is poor
    assert hebbian_accuracy(40, 16, None, trials=2, seed=0) < 0.7
    assert trained_accuracy(40, 16, None, trials=2, seed=0) >= 0.99


def test_trained_frontier_known_small_case():
    """M = 2: the memory is a linear classifier w·e_x on N Gaussian points in d dimensions, so
    (Cover 1965) N points are separable with probability ½ at N = 2d. With N < 100 and τ = 0.99
    every point must be right, so N* (mean over 2 draws) sits a little below 2d."""
    from assocmem.studies.facts.frontier_search import trained_frontier

    (point,) = trained_frontier([10], n_outputs=2, trials=2, repeats=2, seed=1)
    assert 12 <= point.median <= 24, point.n_star


@pytest.mark.slow
def test_trained_frontier_m_equals_n_is_near_the_published_constant():
    from assocmem.studies.facts.frontier_search import trained_frontier

    (point,) = trained_frontier([24], n_outputs=None, trials=2, repeats=2)
    constant = float(np.median(point.constant()))
    assert 0.9 <= constant <= 2.5, point  # d² ≈ 1.3 N log N measured at d = 128


def test_capacity_command_trained(capsys):
    args = ["capacity", "--memory", "trained", "--dims", "8", "12", "--outputs", "3",
            "--trials", "1", "--repeats", "2"]  # fmt: skip
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "trained: N* ∝ d^" in out and "1.3 N log N" in out
    assert main(["capacity", "--memory", "trained", "--lr", "0"]) == 2
    assert main(["capacity", "--memory", "trained", "--rel-tol", "2"]) == 2
    assert main(["capacity", "--memory", "perceptron"]) == 2

"""The fast kernel equals a naive explicit-W implementation, for every scheme, nested d and T."""

import math

import numpy as np
import pytest
from naive import naive_errors, naive_scores

from assocmem.closed_form import run_closed_form, trial_scores
from assocmem.closed_form.config import ClosedFormConfig
from assocmem.laws.tokens import zipf_probabilities
from assocmem.schemes import REGISTRY

ALL_SCHEMES = (
    "population",
    "population:rho=0.5",
    "population:rho=0",
    "uniform",
    "threshold:P=d/8",
    "threshold:P=7",
    "threshold:P=d/log d",
    "empirical",
    "empirical:rho=0.3",
    "seen_once",
    "empirical_threshold:P=d/4",
    "empirical_threshold:P=d/4,rho=1",
    "min_count:P=d/4,k=3",
)


def test_every_registered_scheme_is_covered():
    assert {s.split(":")[0] for s in ALL_SCHEMES} == set(REGISTRY)


def _compare(cfg: ClosedFormConfig) -> None:
    result = run_closed_form(cfg)
    for row, trial in enumerate(result.trials):
        expected = naive_errors(cfg, trial)
        for c, column in enumerate(result.columns):
            for i, d in enumerate(result.dims):
                got = result.errors[row, c, i]
                want = expected[(column.scheme, column.n_samples, d)]
                assert got == pytest.approx(want, abs=1e-12), (trial, column, d)


@pytest.mark.parametrize(
    ("embedding", "output_embedding", "nested"),
    [
        ("gaussian", "spherical", "truncate"),
        ("gaussian", "spherical", "renormalize"),
        ("spherical", "gaussian", "truncate"),
        ("spherical", "spherical", "renormalize"),
    ],
)
def test_kernel_matches_explicit_memory(embedding, output_embedding, nested):
    cfg = ClosedFormConfig(
        n_inputs=40,
        n_outputs=4,
        alpha=1.3,
        schemes=ALL_SCHEMES,
        dims=(3, 8, 17, 30, 64),
        n_samples=(None, 0, 5, 50, 400),
        trials=3,
        embedding=embedding,
        output_embedding=output_embedding,
        nested=nested,
        dtype="float64",
        seed=11,
        sampler="explicit",  # the same E as the naive memory
    )
    _compare(cfg)


def test_kernel_matches_explicit_memory_random_targets_and_orthogonal():
    cfg = ClosedFormConfig(
        n_inputs=12,
        n_outputs=3,
        alpha=1.0,
        target="random",
        schemes=ALL_SCHEMES,
        dims=(12, 20),
        n_samples=(None, 6, 30),
        trials=2,
        embedding="orthogonal",
        output_embedding="orthogonal",
        dtype="float64",
        sampler="explicit",  # the same E as the naive memory
    )
    _compare(cfg)


def test_float32_and_float64_agree_statistically():
    """float32 and float64 draw different numbers (randn in the working dtype): compare means.

    Tolerance: 4 combined standard errors per (scheme, d) over 60 trials (a false alarm has
    probability below 1e-4 per cell).
    """
    base = dict(
        n_inputs=200, schemes=("population", "threshold:P=d/8"), dims=(10, 50, 200), trials=60
    )
    low = run_closed_form(ClosedFormConfig(**base, dtype="float32")).records
    high = run_closed_form(ClosedFormConfig(**base, dtype="float64")).records
    for a, b in zip(low, high, strict=True):
        assert abs(a["mean"] - b["mean"]) <= 4 * math.hypot(a["sem"], b["sem"]) + 1e-9, (a, b)


def test_trial_scores_match_explicit_memory():
    cfg = ClosedFormConfig(
        n_inputs=30,
        n_outputs=5,
        alpha=1.0,
        schemes=("empirical:rho=0", "empirical", "threshold:P=d/2"),
        dims=(6, 25),
        n_samples=(None, 200),
        trials=1,
        dtype="float64",
        nested="renormalize",
        sampler="explicit",  # the same E as the naive memory
    )
    expected = naive_scores(cfg, 0)
    got = trial_scores(cfg, 0)
    assert len(got) == len(expected)
    for (column, d), scores in got.items():
        want = expected[(column.scheme, column.n_samples, d)]
        np.testing.assert_allclose(scores.numpy(), want, rtol=1e-9, atol=1e-12)


def test_kernel_matches_explicit_memory_with_label_noise():
    """Noisy labels: memories store each token's empirical label law; W formed explicitly."""
    cfg = ClosedFormConfig(
        n_inputs=30,
        n_outputs=4,
        alpha=1.2,
        label_noise=0.3,
        schemes=ALL_SCHEMES,
        dims=(4, 12, 40),
        n_samples=(None, 3, 40, 300),
        trials=3,
        dtype="float64",
        seed=2,
        sampler="explicit",  # the same E as the naive memory
    )
    _compare(cfg)


def test_label_noise_records():
    cfg = ClosedFormConfig(n_inputs=50, label_noise=0.2, dims=(10, 50), trials=2)
    for record in run_closed_form(cfg).records:
        assert record["bayes_error"] == 0.2
        expected = 0.2 + (1 - 0.2 * 5 / 4) * record["mean"]
        assert record["noisy_mean"] == pytest.approx(expected)


def test_calibrated_softmax_readout_matches_scipy():
    """β* minimises the population cross-entropy: compare with SciPy on the explicit scores."""
    from scipy.optimize import minimize_scalar
    from scipy.special import log_softmax

    cfg = ClosedFormConfig(
        n_inputs=60,
        n_outputs=4,
        alpha=1.0,
        label_noise=0.1,
        schemes=("population", "threshold:P=d/2"),
        dims=(6, 30),
        trials=1,
        dtype="float64",
        readout=True,
    )
    result = run_closed_form(cfg)
    probs = zipf_probabilities(60, 1.0).numpy()
    targets = np.arange(60) % 4
    law = np.where(np.arange(4)[None, :] == targets[:, None], 0.9, 0.1 / 3)  # (N, M)
    for (column, d), scores in trial_scores(cfg).items():
        s = scores.numpy() / scores.numpy().std(ddof=1)  # as the kernel: unbiased std

        def ce(beta, s=s):
            return float(-(probs[:, None] * law * log_softmax(beta * s, axis=1)).sum())

        best = minimize_scalar(ce, bounds=(0, 1e3), method="bounded", options={"xatol": 1e-10})
        c, i = result.columns.index(column), result.dims.index(d)
        assert result.readout["cross_entropy"][0, c, i] == pytest.approx(best.fun, abs=1e-7)
        assert result.readout["beta"][0, c, i] == pytest.approx(best.x, rel=1e-3)


def test_wrong_is_the_strict_maximum_with_ties_and_signed_zeros():
    """The evaluator's test (target's score against −∞ added at the targets, then a max) is
    "the target is not the strict maximum", checked per score against a plain loop: exact ties
    (±0 included) count as errors, for random targets and scores drawn from a few values."""
    import torch

    from assocmem.closed_form.problem import Problem
    from assocmem.closed_form.readout import Evaluator

    cfg = ClosedFormConfig(n_inputs=40, n_outputs=4, target="random", dims=(8,))
    problem = Problem(cfg)
    targets = problem.targets(0)
    gen = torch.Generator().manual_seed(1)
    values = torch.tensor([-1.0, -0.0, 0.0, 0.5, 1.0])
    scores = values[torch.randint(0, 5, (3, 2, 4, 40), generator=gen)]
    expected = np.zeros((3, 2, 40), dtype=bool)
    for d, k, x in np.ndindex(3, 2, 40):
        column = scores[d, k, :, x].tolist()
        true = column[int(targets[x])]
        others = [s for y, s in enumerate(column) if y != int(targets[x])]
        expected[d, k, x] = not all(true > s for s in others)
    wrong = Evaluator(problem, targets).wrong(scores.clone())
    assert np.array_equal(wrong.numpy(), expected)
    assert 0 < expected.sum() < expected.size

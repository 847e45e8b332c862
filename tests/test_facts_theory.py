"""The factual-recall study's theory of the error law (analysis/large_m.py, summary.py): it is
predicted at the (M, d) of the stored runs, for their N, α and target draws."""

import numpy as np
import pytest

from assocmem.studies.facts.experiment import theory_curves
from assocmem.studies.facts.summary import predicted_errors_large_m, theory_configs
from assocmem.sweep.execute import run_sweep
from assocmem.sweep.results import load_results
from assocmem.sweep.spec import parse_spec


@pytest.fixture(scope="module")
def errors_frame(tmp_path_factory):
    """A small error-law sweep as the study stores it: N = 60, M ∈ {5, 20}, d ∈ {8, 24},
    targets' seed 7 (not the shipped 0), one trial."""
    spec = {
        "name": "facts_errors",
        "kind": "closed_form",
        "trials": 1,
        "base": {
            "sampler": "explicit",
            "n_inputs": 60,
            "alpha": 1.5,
            "target": "random",
            "seed": 7,
            "schemes": ["population", "empirical"],
            "dims": [8, 24],
            "n_samples": [100, "inf"],
        },
        "axes": {"n_outputs": [5, 20]},
    }
    db = tmp_path_factory.mktemp("facts-theory") / "runs.db"
    run_sweep(parse_spec(spec), db)
    return load_results(db)


def test_theory_is_predicted_at_the_stored_points(errors_frame):
    """Every (M, d) of the population rows at T = ∞, and no other; M = 5 by predict.py."""
    for large_m, outputs in ((False, {5}), (True, {20})):
        theory = theory_curves(errors_frame, large_m)
        assert set(zip(theory["n_outputs"], theory["dim"], strict=True)) == {
            (m, d) for m in outputs for d in (8, 24)
        }
    cut = errors_frame[errors_frame["dim"] == 24]
    assert set(theory_curves(cut, True)["dim"]) == {24}


def test_theory_reads_the_runs_configuration(errors_frame):
    """N, α and the targets' seed are the stored runs' (a spec's defaults would draw other f*)."""
    (cfg,) = [c for c in theory_configs(errors_frame) if c.n_outputs == 20]
    assert (cfg.n_inputs, cfg.alpha, cfg.seed, cfg.dims) == (60, 1.5, 7, (8, 24))
    theory = theory_curves(errors_frame, True)
    expected = predicted_errors_large_m(cfg)["predicted"].to_numpy()
    np.testing.assert_array_equal(theory.sort_values("dim")["predicted"].to_numpy(), expected)


@pytest.mark.parametrize(
    ("n_inputs", "n_outputs", "dims", "draw"),
    [(1000, 50, [64, 128], 0), (200, 200, [16], 1)],
)
def test_the_quadrature_is_within_1e_4_of_the_reference(n_inputs, n_outputs, dims, draw):
    """The shipped resolution (``Quadrature()``) against the finer one it replaced (REFERENCE:
    241 grid nodes, 32 + 96 class groups, 8 norm nodes): the predicted population error of q = p
    within 1e-4 (Zipf α = 2, random f*). Where each coarsening shows most: the grid at N = 1000,
    M = 50, d = 64 and 128 (the largest differences over facts-errors' M and d: 3.4e-5 at
    61 nodes, 31 fail); the groups and the norm nodes at M = N = 200 (more classes than groups),
    d = 16 (the widest norms: 3 nodes fail)."""
    from assocmem import rng
    from assocmem.analysis.large_m import REFERENCE, Quadrature, predict_errors_large_m
    from assocmem.analysis.predict import EmbeddingLaw
    from assocmem.laws.tokens import random_targets, zipf_probabilities

    p = zipf_probabilities(n_inputs, 2.0).numpy()
    law = EmbeddingLaw("gaussian", "spherical", output_d_max=512)
    targets = random_targets(n_inputs, n_outputs, rng.generator(0, "targets", draw)).numpy()
    cheap = predict_errors_large_m(p, targets, p, dims, n_outputs, law, Quadrature())
    fine = predict_errors_large_m(p, targets, p, dims, n_outputs, law, REFERENCE)
    assert np.abs(cheap - fine).max() <= 1e-4, (cheap, fine)


# --- the capacity theory ------------------------------------------------------------------------


def test_the_sharp_threshold_and_its_finite_size_form_solve_their_equations():
    from assocmem.studies.facts import theory

    for dim in (16, 64, 256, 1024):
        n = theory.sharp_threshold(dim)
        assert 2 * n * np.log(n) == pytest.approx(dim**2, rel=1e-9)
        for c in (-0.5, 0.0, 0.7):
            m = theory.finite_size_capacity(dim, c)
            if np.isfinite(m):
                assert theory.finite_size_constant(dim, m) == pytest.approx(c, abs=1e-8)
    assert theory.sharp_threshold_slope(5500) == pytest.approx(2 / (1 + 1 / np.log(5500)))


def test_the_finite_size_fit_recovers_a_planted_constant():
    from assocmem.studies.facts import theory

    dims = [64, 128, 256, 512]
    stars = [theory.finite_size_capacity(d, -0.42) for d in dims]
    assert theory.fit_finite_size_constant(dims, stars) == pytest.approx(-0.42, abs=1e-4)


def test_the_extreme_value_quadrature_matches_sampling_its_own_model():
    """The model's accuracy (quantiles of |e|², Gauss–Hermite) against 40 000 draws of the same
    model (a ~ χ²_d/d, the own score and N − 1 independent Gaussian competitors): within 4 s.e."""
    from assocmem.studies.facts.theory import outer_product_accuracy

    n, d, draws = 50, 32, 40_000
    gen = np.random.default_rng(5)
    a = gen.chisquare(d, draws) / d
    own = a + np.sqrt(2 * a**2 / d + (n - 1) * a / d**2) * gen.standard_normal(draws)
    rival_sd = np.sqrt(a**2 / d + a / d + (n - 2) * a / d**2)
    rivals = rival_sd[:, None] * gen.standard_normal((draws, n - 1))
    hits = own > rivals.max(1)
    se = hits.std() / np.sqrt(draws)
    assert abs(outer_product_accuracy(n, d) - hits.mean()) < 4 * se


def test_the_extreme_value_model_brackets_the_outer_products_measured_error():
    """The engine's outer product (N = 300, d = 128, 40 trials of 300 facts: error 0.6 %, s.e.
    about 0.05 %) errs less than the Gaussian model, by less than a factor 2.5: the model's
    independent competitors over-count the maximum a little."""
    from assocmem.studies.facts.capacity import closed_form_evaluation
    from assocmem.studies.facts.theory import outer_product_accuracy

    measured = 1 - closed_form_evaluation(300, 128, 40, 0).accuracy
    model = 1 - outer_product_accuracy(300, 128)
    assert model / 2.5 < measured < model


def test_the_outer_products_capacity_meets_its_accuracy():
    from assocmem.studies.facts.theory import outer_product_accuracy, outer_product_capacity

    n = outer_product_capacity(128, 0.99)
    assert outer_product_accuracy(n, 128) == pytest.approx(0.99, abs=1e-6)
    assert outer_product_capacity(256, 0.99) > 3 * n  # about d² / ln N


def test_the_figures_theory_lines_hold_their_own_equations():
    """The sharp threshold's line reads d²/(N ln N) = 2 at every d; the finite-size line is fitted
    to medians planted on it (c = −0.5) and gives them back; no medians, no finite-size line."""
    import pandas as pd

    from assocmem.studies.facts import theory
    from assocmem.studies.facts.summary import capacity_theory

    dims = [64, 128, 256]
    planted = pd.Series([theory.finite_size_capacity(d, -0.5) for d in dims], index=dims)
    lines = capacity_theory(dims, planted)
    assert lines["dim"].min() == 64 and lines["dim"].max() == 256 and len(lines) == 5
    assert np.allclose(lines["sharp_constant"], 2.0)
    assert lines["c"].iloc[0] == pytest.approx(-0.5, abs=1e-4)
    on_grid = lines.set_index("dim").loc[dims, "finite_size"].to_numpy()
    assert np.allclose(on_grid, planted.to_numpy(), rtol=1e-4)
    assert lines["sharp_slope"].between(1.6, 2.0).all()
    assert capacity_theory(dims, None)["finite_size"].isna().all()

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

"""Same seed → same numbers; a trial's result never depends on its batch companions."""

import numpy as np
import pytest

from assocmem.closed_form import run_closed_form
from assocmem.closed_form.config import ClosedFormConfig

CFG = ClosedFormConfig(
    n_inputs=300,
    schemes=("population", "threshold:P=d/8", "empirical_threshold:P=d/12", "seen_once"),
    dims=(10, 40, 120),
    n_samples=(None, 30, 3000),
    trials=100,
    seed=5,
)


SAMPLERS = pytest.mark.parametrize("sampler", ["explicit", "in_law"])


def _with(cfg: ClosedFormConfig, **changes) -> ClosedFormConfig:
    return ClosedFormConfig(**{**cfg.to_dict(), **changes})


@SAMPLERS
def test_same_seed_same_numbers(sampler):
    cfg = _with(CFG, sampler=sampler, readout=True)
    first = run_closed_form(cfg, trials=range(10))
    again = run_closed_form(cfg, trials=range(10))
    np.testing.assert_array_equal(first.errors, again.errors)
    for name, values in first.readout.items():
        np.testing.assert_array_equal(values, again.readout[name])


@SAMPLERS
def test_trial_alone_equals_trial_in_batch_of_100_and_other_chunks(sampler):
    cfg = _with(CFG, sampler=sampler)
    full = run_closed_form(cfg)
    chunks = [run_closed_form(cfg, trials=range(a, b)) for a, b in ((0, 37), (37, 38), (38, 100))]
    np.testing.assert_array_equal(np.concatenate([c.errors for c in chunks]), full.errors)
    np.testing.assert_array_equal(np.concatenate([c.head for c in chunks]), full.head)
    for trial in (0, 37, 99):
        alone = run_closed_form(cfg, trials=[trial])
        np.testing.assert_array_equal(alone.errors[0], full.errors[trial])


@SAMPLERS
def test_other_seed_other_numbers(sampler):
    cfg = _with(CFG, sampler=sampler)
    other = _with(cfg, seed=6)
    assert not np.array_equal(
        run_closed_form(cfg, trials=[0]).errors, run_closed_form(other, trials=[0]).errors
    )


@SAMPLERS
def test_small_d_unchanged_when_larger_d_are_added(sampler):
    """Nested d with renormalised embeddings: d = 10 sees the same draw whatever d_max is.

    In law, this holds for weightings that do not change with d (here): a d-dependent
    weighting added by a larger d changes the trial's basis, so its draws (not their law).
    """
    base = dict(
        n_inputs=100,
        schemes=("population", "threshold:P=5"),
        nested="renormalize",
        trials=5,
        sampler=sampler,
    )
    small = run_closed_form(ClosedFormConfig(**base, dims=(10,)))
    large = run_closed_form(ClosedFormConfig(**base, dims=(10, 500)))
    np.testing.assert_array_equal(small.errors[:, :, 0], large.errors[:, :, 0])


def test_population_error_is_the_correctly_rounded_sum_for_any_batch_shape():
    """The error sum is exact (then rounded once): the same bits alone or in any batch."""
    import math

    import torch

    from assocmem.laws.tokens import zipf_probabilities
    from assocmem.ops.population import PopulationError, head_mask

    probs = zipf_probabilities(3000, 1.5)
    wrong = torch.rand(4, 5, 3000, generator=torch.Generator().manual_seed(1)) < 0.6
    error, head = PopulationError(probs)(wrong)
    head_probs = probs * head_mask(probs)
    for i in range(4):
        for k in range(5):
            assert float(error[i, k]) == math.fsum(probs[wrong[i, k]].tolist())
            assert float(head[i, k]) == math.fsum(head_probs[wrong[i, k]].tolist())
            alone, _ = PopulationError(probs)(wrong[i, k])
            assert float(alone) == float(error[i, k])
    # the limb sums are combined in numpy on CPU, in torch elsewhere: the same operations
    sums = wrong.to(torch.float64) @ PopulationError(probs).limbs
    combined = PopulationError(probs)._combine(sums)
    assert torch.equal(combined, torch.from_numpy(PopulationError(probs)._combine(sums.numpy())))


def test_head_is_the_most_probable_tenth():
    import torch

    from assocmem.ops.population import head_mask

    probs = torch.tensor([0.1, 0.4, 0.05, 0.3, 0.05, 0.1])
    assert head_mask(probs).nonzero().flatten().tolist() == [1]  # ⌈6/10⌉ = 1 token
    assert head_mask(probs, 0.5).nonzero().flatten().tolist() == [0, 1, 3]  # ties: lower index

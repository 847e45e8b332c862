"""Same seed → same numbers; a trial's result never depends on its batch companions."""

import numpy as np

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


def test_same_seed_same_numbers():
    first = run_closed_form(CFG, trials=range(10)).errors
    again = run_closed_form(CFG, trials=range(10)).errors
    np.testing.assert_array_equal(first, again)


def test_trial_alone_equals_trial_in_batch_of_100_and_other_chunks():
    full = run_closed_form(CFG)
    chunks = [run_closed_form(CFG, trials=range(a, b)) for a, b in ((0, 37), (37, 38), (38, 100))]
    np.testing.assert_array_equal(np.concatenate([c.errors for c in chunks]), full.errors)
    np.testing.assert_array_equal(np.concatenate([c.head for c in chunks]), full.head)
    for trial in (0, 37, 99):
        alone = run_closed_form(CFG, trials=[trial])
        np.testing.assert_array_equal(alone.errors[0], full.errors[trial])


def test_other_seed_other_numbers():
    other = ClosedFormConfig(**{**CFG.to_dict(), "seed": 6})
    assert not np.array_equal(
        run_closed_form(CFG, trials=[0]).errors, run_closed_form(other, trials=[0]).errors
    )


def test_small_d_unchanged_when_larger_d_are_added():
    """Nested d with renormalised embeddings: d = 10 sees the same draw whatever d_max is."""
    base = dict(
        n_inputs=100, schemes=("population", "threshold:P=5"), nested="renormalize", trials=5
    )
    small = run_closed_form(ClosedFormConfig(**base, dims=(10,)))
    large = run_closed_form(ClosedFormConfig(**base, dims=(10, 500)))
    np.testing.assert_array_equal(small.errors[:, :, 0], large.errors[:, :, 0])

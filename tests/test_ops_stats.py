"""ops.stats: one rule for mean ± s.e. (NaN for a single value), the same in every form."""

import math

import numpy as np
import pandas as pd

from assocmem.ops.stats import column_mean_se, grouped_mean_se, mean_se


def test_mean_se_is_s_over_root_n_and_nan_for_one_value():
    values = [1.0, 2.0, 4.0, math.nan]  # NaN: missing, left out of n
    mean, se = mean_se(values)
    assert mean == 7.0 / 3.0
    assert se == np.std([1.0, 2.0, 4.0], ddof=1) / math.sqrt(3)
    assert mean_se([5.0])[0] == 5.0 and math.isnan(mean_se([5.0])[1])
    assert all(math.isnan(v) for v in mean_se([]))


def test_every_form_follows_the_same_rule():
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"key": [0, 0, 0, 1, 2, 2], "value": rng.normal(size=6)})
    grouped = grouped_mean_se(frame.groupby("key")["value"])
    for key, part in frame.groupby("key"):
        mean, se = mean_se(part["value"])
        assert math.isclose(grouped.loc[key, "mean"], mean, rel_tol=1e-12)
        if len(part) == 1:
            assert math.isnan(grouped.loc[key, "sem"]) and math.isnan(se)
        else:
            assert math.isclose(grouped.loc[key, "sem"], se, rel_tol=1e-12)
    table = rng.normal(size=(4, 3))
    table[1:, 2] = np.nan  # one value in the last column
    means, ses = column_mean_se(table)
    assert np.allclose(means[:2], table[:, :2].mean(0))
    assert np.allclose(ses[:2], table[:, :2].std(0, ddof=1) / 2.0)
    assert means[2] == table[0, 2] and math.isnan(ses[2])

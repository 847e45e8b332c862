"""§4.4b judged on synthetic full-batch curves: each seed at its own best lr, the geometric mean
of GD's steps to zero over the slower of sign-GD and normalised GD against the factor 5, with its
s.e. over seeds (the margin), and GD's final error at lr ≤ 1 above zero."""

from types import SimpleNamespace
from typing import Any

import pandas as pd

from assocmem.experiments.findings import finding4b, per_seed_steps

N_STEPS = 100


def _curves(zero_at: dict[str, list[float]], gd_small_final: float = 0.05) -> Any:
    """Error 0.5 until each (optimizer, seed)'s step in ``zero_at`` (at lr 10; sign-GD and
    normalised GD at lr 1 too, slower), 0 after; GD at lr 1 ends at ``gd_small_final``."""
    rows = []
    for optimizer, steps in zero_at.items():
        for seed, at in enumerate(steps):
            for lr, when in ((10.0, at), (1.0, 2 * at if optimizer != "sgd" else float("inf"))):
                for step in range(N_STEPS + 1):
                    error = 0.5 if step < when else 0.0
                    if optimizer == "sgd" and lr == 1.0:  # 0.5 at step 0, then its final
                        error = gd_small_final * (1 + 0.1 * seed) if step > 0 else 0.5
                    rows.append((optimizer, lr, seed, step, error, N_STEPS))
    frame = pd.DataFrame(rows, columns=["optimizer", "lr", "seed", "step", "error", "n_steps"])
    return SimpleNamespace(curves=lambda name: frame)


FAST = {"sign_sgd": [2, 3, 2, 4], "normalized_sgd": [3, 2, 4, 3]}


def test_per_seed_steps_take_each_seeds_best_lr():
    steps = per_seed_steps(_curves({**FAST, "sgd": [40, 50, 45, 60]}).curves("x"))
    assert steps["sign_sgd"].tolist() == [2, 3, 2, 4] and steps["sgd"].tolist() == [40, 50, 45, 60]


def test_gd_many_times_slower_passes_and_as_slow_fails():
    slow = finding4b(_curves({**FAST, "sgd": [40, 50, 45, 60]}), "full")
    assert slow.passed is True and slow.margin_se is not None and slow.margin_se > 0
    assert slow.measured["gd_over_slower_fast_geometric_mean"] > 5
    close = finding4b(_curves({**FAST, "sgd": [6, 9, 8, 8]}), "full")  # about 2.4×
    assert close.passed is False and close.margin_se is not None and close.margin_se < 0
    never = finding4b(_curves({**FAST, "sgd": [1e9] * 4}), "full")  # counted as N_STEPS + 1
    assert never.passed is True


def test_gd_at_zero_for_lr_le_1_or_a_fast_optimizer_not_at_zero_fails():
    at_zero = finding4b(_curves({**FAST, "sgd": [40, 50, 45, 60]}, gd_small_final=0.0), "full")
    assert at_zero.passed is False and at_zero.margin_se == float("-inf")
    stalls = finding4b(_curves({**FAST | {"sign_sgd": [2, 1e9, 2, 4]}, "sgd": [40] * 4}), "full")
    assert stalls.passed is False and stalls.margin_se == float("-inf")

"""Top-1 over many outputs in blocks (ops/top1.py, closed_form/blocked.py; issue #37, 1).

Three checks: a naive loop over inputs with the strict rule written out; the whole path's ops
(``memory_scores`` + ``wrong_tokens``) on exact integer data with constructed ties; and the
kernel's blocked trial against the whole path and the explicit-W reference (tests/naive.py).
"""

import math

import numpy as np
import pytest
import torch
from naive import naive_errors

from assocmem.closed_form import cost, retrieval, run_closed_form
from assocmem.closed_form.blocked import blocked_wrong
from assocmem.closed_form.config import ClosedFormConfig
from assocmem.closed_form.problem import Problem
from assocmem.config import ConfigError
from assocmem.ops.population import PopulationError, wrong_tokens
from assocmem.ops.scores import memory_scores, one_hot_memory, one_hot_weights
from assocmem.ops.top1 import row_blocks, wrong_in_blocks

DEVICES = ["cpu", *(["cuda"] if torch.cuda.is_available() else [])]
BLOCKS = [1, 2, 3, 7, 16, 23, 100]  # N = 23 below: most do not divide it


def _naive_wrong(features, readout, targets, scale):
    """(R, N) bool, one input at a time: right only when the target's score beats every other
    output's (ties and NaN are errors)."""
    n_runs, n = features.shape[:2]
    out = np.zeros((n_runs, n), dtype=bool)
    for r in range(n_runs):
        for x in range(n):
            scores = [float(features[r, x] @ readout[:, y]) * scale[y] for y in range(len(scale))]
            target = scores[targets[x]]
            others = [s for y, s in enumerate(scores) if y != targets[x]]
            out[r, x] = not all(target > s for s in others)
    return out


def _tied_problem(device, dtype=torch.float64):
    """Small integers (every product exact): output 1 is output 0's twin (its inputs tie),
    inputs 5 and 6 have zero features (every score ties at 0), input 7 has a NaN feature."""
    gen = torch.Generator().manual_seed(3)
    n, m, d, runs = 23, 11, 6, 3
    features = torch.randint(-3, 4, (runs, n, d), generator=gen).to(device, dtype)
    readout = torch.randint(-3, 4, (d, m), generator=gen).to(device, dtype)
    readout[:, 1] = readout[:, 0]
    features[:, 5:7] = 0
    features[0, 7, 2] = float("nan")
    targets = torch.randint(0, m, (n,), generator=gen).to(device)
    targets[:4] = torch.tensor([0, 1, 0, 1])
    scale = torch.randint(1, 4, (m,), generator=gen).to(device, dtype)
    scale[1] = scale[0]
    return features, readout, targets, scale


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("block", BLOCKS)
def test_blocks_match_a_naive_loop_with_ties(device, block):
    features, readout, targets, scale = _tied_problem(device)
    got = wrong_in_blocks(
        lambda a, b: features[:, a:b], readout, targets, block=block, column_scale=scale
    )
    want = _naive_wrong(features.cpu(), readout.cpu(), targets.cpu().tolist(), scale.tolist())
    assert np.array_equal(got.cpu().numpy(), want)
    assert want[:, :7].all() and want[0, 7]  # the twins, the zero rows and the NaN: errors
    assert not want.all()  # and some inputs are retrieved


@pytest.mark.parametrize("block", BLOCKS)
def test_blocked_memory_is_the_whole_path_exactly_with_ties(block):
    """one_hot_memory + wrong_in_blocks against memory_scores + wrong_tokens (the N×M scores
    and the M×M Gram): the same flags and the same population error, ties included (exact
    integer arithmetic, so both associations give the same scores)."""
    gen = torch.Generator().manual_seed(5)
    n, m, d = 23, 7, 5
    inputs = torch.randint(-2, 3, (n, d), generator=gen).double()
    outputs = torch.randint(-2, 3, (m, d), generator=gen).double()
    outputs[3] = outputs[2]  # twin outputs: tokens of class 2 or 3 tie
    q = torch.randint(0, 4, (2, n), generator=gen).double()  # q = 0: unstored tokens
    targets = torch.arange(n) % m
    whole = memory_scores(inputs, one_hot_weights(q, targets, m).transpose(0, 1), outputs)
    want = wrong_tokens(whole.transpose(0, 1), targets)  # (K, N)
    memory = one_hot_memory(inputs.T, q, outputs.T, targets, block=4)
    got = wrong_in_blocks(lambda a, b: inputs[a:b] @ memory, outputs.T, targets, block=block)
    assert torch.equal(got, want)
    assert want[:, targets == 2].all() and not want.all()
    probs = torch.rand(n, generator=gen, dtype=torch.float64)
    error = PopulationError(probs / probs.sum())
    assert torch.equal(error(got)[0], error(want)[0])


def test_row_blocks_cover_in_order_and_never_one_row():
    for n in range(1, 30):
        for block in (1, 2, 3, 5, 8, 29, 40):
            ranges = row_blocks(n, block)
            covered = sorted({x for a, b in ranges for x in range(a, b)})
            assert covered == list(range(n))
            assert all(b - a >= 2 for a, b in ranges) or n == 1


def _config(**fields):
    base = dict(
        n_inputs=301,
        n_outputs=60,
        alpha=1.2,
        target="random",
        schemes=("population", "uniform", "threshold:P=d/8"),
        dims=(8, 40, 96),
        trials=2,
        dtype="float64",
        sampler="explicit",
    )
    return ClosedFormConfig(**{**base, **fields})


EMBEDDINGS = [
    {},
    {"embedding": "spherical", "output_embedding": "gaussian"},
    {"embedding": "spherical", "output_embedding": "spherical", "nested": "renormalize"},
    {"embedding": "clustered", "n_groups": 7, "similarity": 0.3},
    {"dtype": "float32"},
]


@pytest.mark.parametrize("fields", EMBEDDINGS)
def test_blocked_trial_flags_are_the_whole_paths(fields):
    """Every token's flag, at every d and column, for block sizes that do not divide N."""
    cfg = _config(**fields)
    whole = retrieval(cfg)  # (trials, columns, dims, N): the whole path at this size
    problem = Problem(cfg)
    for block in (5, 64, 1000) if fields else (2, 7, 64, 301):
        for trial in range(cfg.trials):
            got = ~blocked_wrong(problem, trial, block).transpose(0, 1).numpy()
            assert np.array_equal(got, whole[trial]), (block, trial)
    assert 0.05 < whole.mean() < 0.95  # the flags are not all alike


def test_run_closed_form_in_blocks_is_the_explicit_memory(monkeypatch):
    """The kernel's blocked path end to end (forced at a small size) against W formed
    explicitly, and the whole path's records exactly."""
    cfg = _config(n_outputs=30, dims=(10, 50, 120))
    whole, whole_flags = run_closed_form(cfg), retrieval(cfg)
    monkeypatch.setattr(cost, "BLOCKED_FROM", 1)
    assert cost.top1_in_blocks(cfg)
    blocked = run_closed_form(cfg)
    assert np.array_equal(retrieval(cfg), whole_flags)
    assert np.array_equal(blocked.errors, whole.errors)
    assert np.array_equal(blocked.head, whole.head)
    for row, trial in enumerate(blocked.trials):
        expected = naive_errors(cfg, trial)
        for c, column in enumerate(blocked.columns):
            for i, d in enumerate(blocked.dims):
                want = expected[(column.scheme, column.n_samples, d)]
                assert blocked.errors[row, c, i] == pytest.approx(want, abs=1e-12)


SCALE = dict(
    n_inputs=100_000,
    n_outputs=100_000,
    target="random",
    schemes=("population",),
    dims=(256, 1024),
    trials=1,
)


def test_the_factual_recall_scale_is_admitted_within_two_gib():
    """Issue #37's command fits 2 GiB in blocks; half a GiB cannot hold its embeddings."""
    cfg = ClosedFormConfig(**SCALE, memory_gb=2)
    assert cost.top1_in_blocks(cfg) and cfg.resolved_sampler == "explicit"
    assert cost.blocked_bytes(cfg) <= 2 * 2**30
    assert 2 <= cost.top1_block(cfg) <= cfg.n_inputs
    unbounded = ClosedFormConfig(**SCALE, memory_gb=math.inf)  # as analysis/memory.py asks
    assert cost.top1_block(unbounded) == cost.MAX_BLOCK_ROWS
    with pytest.raises(ConfigError, match="memory_gb.*top-1 in blocks"):
        ClosedFormConfig(**SCALE, memory_gb=0.5)
    with pytest.raises(ConfigError, match="memory_gb"):  # label noise: the whole path's N×M
        ClosedFormConfig(**SCALE, memory_gb=2, label_noise=0.1)


def test_the_paper_sizes_keep_the_whole_path():
    assert not cost.top1_in_blocks(ClosedFormConfig())
    big = _config(n_inputs=10_000, n_outputs=10_000, schemes=("population",), memory_gb=64)
    assert not cost.top1_in_blocks(big)  # issue #37: 2.7 GiB, 38 s, whole

"""The exact-in-law sampler: its algebra (fast tier) and its law (slow tier) against explicit E.

Algebra: fed the quantities of one explicit draw E (``Z = Qᵀ E`` and the projected remainder
``P⊥ E``), the in-law assembly reproduces the scores of the memory formed explicitly from that E
(:mod:`naive`) to float64 rounding, for every scheme, finite and infinite T, label noise, both
targets, both nested conventions and a user probability vector.

Law: see :func:`test_mean_errors_equal_in_law` for the design, power and false-alarm budget.
"""

import math

import numpy as np
import pytest
import torch
from naive import naive_scores
from scipy import stats

from assocmem.closed_form import kernel, retrieval, run_closed_form
from assocmem.closed_form.config import ClosedFormConfig
from assocmem.closed_form.problem import Problem, Workspace
from assocmem.closed_form.samplers import basis as basis_module
from assocmem.closed_form.samplers import get_sampler
from assocmem.closed_form.samplers import in_law as in_law_module
from assocmem.closed_form.samplers.basis import weighting_basis
from assocmem.closed_form.samplers.in_law import assemble, explicit_remainder

ALL_SCHEMES = (
    "population",
    "population:rho=0.5",
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


def _permuted_law(n: int, seed: int = 0) -> tuple[float, ...]:
    """A law that is neither Zipf nor sorted: a Zipf head, a flat tail, shuffled."""
    p = np.arange(1, n + 1) ** -1.5
    p[3 * n // 4 :] = p[3 * n // 4]
    p = np.random.default_rng(seed).permutation(p)
    return tuple((p / p.sum()).tolist())


ALGEBRA_CASES = {
    "zipf": dict(n_inputs=40, n_outputs=4, alpha=1.3, n_samples=(None, 0, 5, 50, 400)),
    "noisy_random": dict(
        n_inputs=30,
        n_outputs=4,
        alpha=1.2,
        label_noise=0.3,
        target="random",
        nested="renormalize",
        n_samples=(None, 3, 40, 300),
    ),
    "any_p": dict(n_inputs=40, probabilities=_permuted_law(40), n_samples=(None, 60)),
    "majority": dict(  # majority labels: one-hot, possibly wrong (ties at random)
        n_inputs=30,
        n_outputs=4,
        alpha=1.2,
        label_noise=0.4,
        label_rule="majority",
        n_samples=(None, 3, 40, 300),
    ),
}


def _algebraic_scores(cfg: ClosedFormConfig, trial: int) -> dict:
    """Scores (N, M) per (scheme, T, d) from the in-law assembly fed one explicit E."""
    problem = Problem(cfg)
    draws = kernel._draw(problem, get_sampler("explicit"), trial)  # E: (d_max, N) raw
    basis = weighting_basis(problem, draws.weights)
    coords = basis.internal(draws.sampled)  # the basis's token order
    z = basis.q_t @ coords.T  # (r, d_max): Z = Qᵀ E
    perp = coords - (coords @ basis.q_t.T) @ basis.q_t  # (P⊥ E)ᵀ
    chunks = assemble(problem, basis, z, explicit_remainder(perp))
    aggregated = torch.cat([a.clone() for _, a in chunks])  # a chunk is a reused buffer
    n_dims, _, n = aggregated.shape
    blocks = aggregated.view(n_dims, -1, cfg.n_outputs, n)
    scores = (draws.grams[:, None].transpose(-1, -2) @ blocks).transpose(-1, -2)
    return {
        (problem.columns[col].scheme, problem.columns[col].n_samples, d): scores[i, k].numpy()
        for k, col in enumerate(problem.order)
        for i, d in enumerate(problem.dims)
    }


@pytest.mark.parametrize("every_d", [False, True])
@pytest.mark.parametrize("per_class", [False, True])
@pytest.mark.parametrize("case", sorted(ALGEBRA_CASES))
def test_in_law_assembly_of_one_explicit_draw_gives_its_scores(
    case, per_class, every_d, monkeypatch
):
    """per_class: the basis built class by class, tokens reordered by class (the default
    without label noise); else one basis over every token (as with label noise). every_d:
    every d's columns assembled at once (small problems); else one d at a time."""
    if not per_class:
        monkeypatch.setattr(basis_module, "SPLIT_BASIS_ABOVE", 2**62)
    if not every_d:
        monkeypatch.setattr(in_law_module, "STACK_DIMS_BYTES", 0)
    cfg = ClosedFormConfig(
        **ALGEBRA_CASES[case],
        schemes=ALL_SCHEMES,
        dims=(3, 8, 17, 30, 64),
        dtype="float64",
        seed=11,
        sampler="explicit",
    )
    for trial in (0, 1):
        got = _algebraic_scores(cfg, trial)
        explicit = {
            (column.scheme, column.n_samples, d): scores.numpy()
            for (column, d), scores in kernel.trial_scores(cfg, trial).items()
        }
        references = [explicit]
        if cfg.probabilities is None:  # the naive memory knows Zipf laws only
            references.append(naive_scores(cfg, trial))
        for expected in references:
            assert got.keys() == expected.keys()
            scale = max(np.abs(v).max() for v in expected.values())
            for key, want in expected.items():
                np.testing.assert_allclose(got[key], want, atol=1e-11 * scale, err_msg=key)


def test_basis_is_orthonormal_spans_the_stored_columns_and_reveals_their_rank():
    """Nested thresholds repeat while P(d) = d/8 does not change (d = 8…15 all store one
    token): repeated columns are one column. ``threshold:P=300`` stores all 300 tokens, like
    ``uniform``: distinct columns, but not distinct directions (the rank drops by 5)."""
    cfg = ClosedFormConfig(
        n_inputs=300,
        schemes=("uniform", "population", "threshold:P=d/8", "threshold:P=300"),
        dims=tuple(range(8, 40)),
        dtype="float64",
        sampler="in_law",
    )
    problem = Problem(cfg)
    draws = kernel._draw(problem, get_sampler("in_law"), 0)
    basis = draws.sampled.basis
    rank = basis.q_t.shape[0]
    np.testing.assert_allclose(basis.q_t @ basis.q_t.T, np.eye(rank), atol=1e-12)
    # P(d) = 1 … 4 stores tokens 0 … P−1; the column of class y (tokens x ≡ y mod 5) changes
    # only when token y is added: 4 distinct threshold columns, one per class 0 … 3
    assert basis.coeffs.shape[1] == 5 + 5 + 4 + 5
    assert rank == 5 + 5 + 4
    weights = draws.weights
    for i in (0, len(cfg.dims) - 1):
        stored = torch.cat(
            [
                (weights.fixed_q.unsqueeze(-2) * weights.fixed_labels).flatten(0, 1),
                (weights.varying_q[i].unsqueeze(-2) * weights.varying_labels).flatten(0, 1),
            ]
        )  # (K·M, N)
        index = basis.index[i]
        rebuilt = torch.zeros_like(stored)
        used = index >= 0
        rebuilt[used] = (basis.coeffs[:, index[used]].T @ basis.q_t).to(stored.dtype)
        np.testing.assert_allclose(rebuilt, basis.internal(stored), atol=1e-12)


def test_trial_scores_and_retrieval_follow_the_resolved_sampler():
    cfg = ClosedFormConfig(
        n_inputs=200, schemes=("population", "threshold:P=d/8"), dims=(16, 64), trials=3,
        sampler="in_law",
    )  # fmt: skip
    result = run_closed_form(cfg)
    retrieved = retrieval(cfg)
    probs = Problem(cfg).probs_cpu.numpy()
    np.testing.assert_allclose((~retrieved).astype(float) @ probs, result.errors, atol=1e-12)
    assert result.provenance["sampler"] == "in_law"
    scores = kernel.trial_scores(cfg, 1)
    targets = np.arange(200) % 5
    for c, column in enumerate(result.columns):
        for i, d in enumerate(result.dims):
            retrieved_here = scores[(column, d)].numpy().argmax(1) == targets
            assert (retrieved_here == retrieved[1, c, i]).mean() > 0.99  # ties aside


def test_every_d_at_once_gives_the_errors_of_one_d_at_a_time(monkeypatch):
    """Small problems assemble and evaluate every d's columns at once; that must not change
    an error here, and the readout only to rounding."""
    cfg = ClosedFormConfig(
        n_inputs=300, n_outputs=4, schemes=("uniform", "threshold:P=d/4", "empirical"),
        dims=(4, 9, 30, 64), n_samples=(20, None), label_noise=0.1, readout=True, trials=3,
        sampler="in_law",
    )  # fmt: skip
    problem, sampler = Problem(cfg), get_sampler("in_law")

    def chunks() -> list[slice]:
        draws = kernel._draw(problem, sampler, 0)
        return [dims for dims, _ in sampler.aggregates(problem, draws.weights, draws.sampled)]

    assert chunks() == [slice(0, 4)]
    together = run_closed_form(cfg)
    monkeypatch.setattr(in_law_module, "STACK_DIMS_BYTES", 0)
    assert chunks() == [slice(i, i + 1) for i in range(4)]
    apart = run_closed_form(cfg)
    np.testing.assert_array_equal(together.errors, apart.errors)
    np.testing.assert_array_equal(together.head, apart.head)
    for name, values in together.readout.items():
        np.testing.assert_allclose(values, apart.readout[name], rtol=1e-5, err_msg=name)


@pytest.mark.parametrize(
    "case",
    [
        dict(alpha=1.2, n_samples=(None, 0, 3, 40, 300)),  # unseen tokens store nothing
        dict(alpha=1.2, n_samples=(3, 40), label_rule="majority", target="random"),
        dict(probabilities=_permuted_law(60), n_samples=(None, 60), target="group", n_groups=7),
    ],
)
def test_class_rows_hold_every_stored_column(case, monkeypatch):
    """Without label noise the stored columns are held as one row per weighting,
    ``q_k L_k(f* | ·)``, tested class by class: each column (``row_of``) must be that row on
    its class's tokens (and the dense column zero elsewhere), and the nonzero and same-as-before
    tests must equal the dense route's, which tests every column over every token."""
    cfg = ClosedFormConfig(
        n_inputs=60, n_outputs=4, schemes=ALL_SCHEMES, dims=(3, 8, 9, 17, 64), seed=5, **case
    )
    problem = Problem(cfg)
    m = cfg.n_outputs
    for trial in (0, 1):
        targets = problem.targets(trial)
        weights = kernel._draw(problem, get_sampler("in_law"), trial).weights
        rows, row_of, fixed_nonzero, nonzero, same = basis_module._stored_rows(problem, weights)
        with monkeypatch.context() as dense_route:
            dense_route.setattr(basis_module, "SPLIT_BASIS_ABOVE", 2**62)
            dense, _, *dense_tests = basis_module._stored_rows(problem, weights)
        assert [fixed_nonzero, nonzero, same] == dense_tests
        assert rows.shape[0] * m == dense.shape[0]  # a row per weighting, not per column
        for column in range(dense.shape[0]):
            on_class = targets == column % m
            np.testing.assert_array_equal(rows[row_of(column)][on_class], dense[column][on_class])
            assert not dense[column][~on_class].any()
        # the tests see more than zeros: some columns are zero, some repeat, some change
        flat = [flag for row in nonzero for flag in row]
        repeats = [flag for row in same for flag in row]
        assert not all(flat) and any(flat) and any(repeats) and not all(repeats)


@pytest.mark.parametrize("in_cache", [True, False])
def test_row_tests_and_gathers_of_the_basis(in_cache, monkeypatch):
    """``_differ`` is ``ne(…).any(-1)`` by either route (a float max in cache, a boolean
    reduction above), NaN included; each block of ``_group_blocks`` is
    ``rows[sources[columns]][:, tokens]ᵀ`` in float64, groups gathered together or one a call."""
    monkeypatch.setattr(basis_module, "IN_CACHE", 2**62 if in_cache else 0)
    monkeypatch.setattr(basis_module, "GATHER_VALUES", 2**62 if in_cache else 0)
    gen = torch.Generator().manual_seed(3)
    x = torch.randn(4, 6, 50, generator=gen)
    x[0, 1] = 0.0
    x[2, 3, 7] = 0.0
    x[1, 2, 5] = math.nan
    y = x.clone()
    y[3, 4, 9] += 1e-30  # a difference that is not a difference in float32: equal
    y[3, 5, 11] += 1e-3
    y[0, 1] = -0.0  # equal to x's +0 either way
    y[2, 0] = -y[2, 0]  # a sign change: different
    np.testing.assert_array_equal(basis_module._differ(x, None), x.ne(0).any(-1))
    np.testing.assert_array_equal(basis_module._differ(x, y), x.ne(y).any(-1))
    rows = x.flatten(0, 1)  # (24, 50)
    sources = [5, 0, 17, 5, 9, 23]
    groups = [
        ([0, 2], torch.tensor([3, 49, 0, 8])),
        ([5], torch.tensor([7])),
        ([3, 1, 4], torch.tensor([1, 2])),
    ]
    workspace = Workspace(rows.device)
    blocks = [b.clone() for b in basis_module._group_blocks(rows, sources, groups, workspace)]
    assert len(blocks) == len(groups)
    for block, (columns, tokens) in zip(blocks, groups, strict=True):
        expected = rows[[sources[j] for j in columns]][:, tokens].T.double()
        assert block.dtype == torch.float64
        np.testing.assert_array_equal(block, expected)


# ---------------------------------------------------------------- statistical tier (slow)

A_CONFIG = dict(  # infinite data, a user law (not sorted), f* = x mod M
    n_inputs=200,
    probabilities=_permuted_law(200),
    schemes=("uniform", "population", "population:rho=0.5", "threshold:P=d/8", "threshold:P=7"),
    dims=(8, 24, 64),
    seed=101,
)
B_CONFIG = dict(  # finite and infinite data, label noise, random f*, renormalised nested d
    n_inputs=200,
    alpha=1.5,
    target="random",
    label_noise=0.2,
    nested="renormalize",
    schemes=("empirical", "seen_once", "empirical_threshold:P=d/4", "threshold:P=d/8"),
    n_samples=(50, 400, None),
    dims=(8, 32),
    seed=202,
)
C_CONFIG = dict(  # the softmax readout metrics
    n_inputs=200,
    alpha=1.5,
    label_noise=0.1,
    schemes=("population", "threshold:P=d/8"),
    dims=(8, 32),
    readout=True,
    seed=303,
)
N_TRIALS = 6000  # per sampler, for A and B (see the power calculation below)
N_TOKEN_TRIALS = 1500  # per sampler, for the per-token rates
N_READOUT_TRIALS = 2000
POWER_SHIFT = 0.05  # relative shift of the mean error to detect
TARGET_POWER = 0.9


@pytest.fixture(scope="module")
def one_thread():
    """Small problems: one intra-op thread (many tiny tensor ops; no pool to wake per op)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def _runs(values: dict, trials: int) -> dict[str, object]:
    return {
        s: run_closed_form(ClosedFormConfig(**values, trials=trials, sampler=s))
        for s in ("explicit", "in_law")
    }


@pytest.fixture(scope="module")
def runs_a(one_thread):
    return _runs(A_CONFIG, N_TRIALS)


@pytest.fixture(scope="module")
def runs_b(one_thread):
    return _runs(B_CONFIG, N_TRIALS)


def _welch(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """Two-sided p-value of equal means (large-sample Welch z) and the standard error."""
    se = math.sqrt(a.var(ddof=1) / len(a) + b.var(ddof=1) / len(b))
    if se == 0:
        return (1.0 if a.mean() == b.mean() else 0.0), 0.0
    return 2 * stats.norm.sf(abs(a.mean() - b.mean()) / se), se


def _holm(pvalues: dict, alpha: float) -> list:
    """Keys rejected by Holm's step-down procedure at family-wise level alpha."""
    rejected = []
    for rank, (key, p) in enumerate(sorted(pvalues.items(), key=lambda kv: kv[1])):
        if p > alpha / (len(pvalues) - rank):
            break
        rejected.append((key, p))
    return rejected


def _power(se: float, mean: float, level: float) -> float:
    """Power of the two-sided z-test at per-test ``level`` against a shift of
    ``POWER_SHIFT · mean`` (Bonferroni level: Holm's first step, so a lower bound)."""
    z = stats.norm.isf(level / 2)
    shift = POWER_SHIFT * mean / se
    return float(stats.norm.sf(z - shift) + stats.norm.cdf(-z - shift))


def _cells(result) -> list[tuple[int, int, str]]:
    return [
        (c, i, f"{col.scheme} T={col.n_samples} d={d}")
        for c, col in enumerate(result.columns)
        for i, d in enumerate(result.dims)
    ]


@pytest.mark.slow
@pytest.mark.parametrize(("name", "alpha"), [("a", 0.002), ("b", 0.002)])
def test_mean_errors_equal_in_law(request, name, alpha):
    """Per cell (scheme × T × d), equal mean error: a two-sided Welch z-test on the per-trial
    errors, 6,000 independent trials per sampler, fixed seeds (deterministic).

    False alarms: the whole module spends α = 0.01 family-wise, split by Bonferroni between
    its tests (mean errors 0.002 for each of A and B; distributions 0.001 each; per-token
    rates 0.001 each; joint laws 0.0005 each; readout 0.001), and each test uses Holm over its
    cells. Power: a cell's test rejects at worst at the Bonferroni level α/m (m = 15 cells in
    A, 20 in B: z = 3.82, 3.89). With per-trial coefficients of variation CV ≤ 0.53 (measured:
    0.07–0.53 in these cells), the standard error of the difference is
    SE = CV·μ·√(2/6000) ≤ 0.00968 μ, so a 5 % shift is ≥ 5.17 SE, and the power
    Φ(5.17 − 3.89) ≥ 0.90. The test also computes each cell's power from its own variances
    and fails if one is below 0.9 (a design that stopped having power would fail, not pass).
    """
    runs = request.getfixturevalue(f"runs_{name}")
    explicit, in_law = runs["explicit"], runs["in_law"]
    cells = _cells(explicit)
    pvalues, powers = {}, {}
    for c, i, label in cells:
        a, b = explicit.errors[:, c, i], in_law.errors[:, c, i]
        pvalues[label], se = _welch(a, b)
        powers[label] = _power(se, (a.mean() + b.mean()) / 2, alpha / len(cells))
    assert _holm(pvalues, alpha) == []
    weak = {k: round(v, 3) for k, v in powers.items() if v < TARGET_POWER}
    assert not weak, f"cells without power {TARGET_POWER} for a 5 % shift: {weak}"


@pytest.mark.slow
@pytest.mark.parametrize(("name", "alpha"), [("a", 0.001), ("b", 0.001)])
def test_error_distributions_equal_in_law(request, name, alpha):
    """Per cell, the whole law of the per-trial error: two-sample Kolmogorov–Smirnov tests
    (conservative with the ties of a discrete error), Holm at ``alpha`` over the cells; the
    head part of the error (the most probable tenth of the tokens) too."""
    runs = request.getfixturevalue(f"runs_{name}")
    explicit, in_law = runs["explicit"], runs["in_law"]
    pvalues = {}
    for c, i, label in _cells(explicit):
        for part in ("errors", "head"):
            a, b = getattr(explicit, part)[:, c, i], getattr(in_law, part)[:, c, i]
            pvalues[(label, part)] = stats.ks_2samp(a, b).pvalue
    assert _holm(pvalues, alpha) == []


@pytest.mark.slow
@pytest.mark.parametrize(("values", "alpha"), [(A_CONFIG, 0.001), (B_CONFIG, 0.001)])
def test_per_token_retrieval_rates_equal_in_law(one_thread, values, alpha):
    """Per cell and token, the rate at which the token is retrieved over 1,500 trials per
    sampler: a two-proportion z-test (pooled), Holm at ``alpha`` over every (cell, token) with
    a pooled rate strictly between 0 and 1. A rate difference of 0.1 around 1/2 is
    0.1/√(0.5·0.5·2/1500) = 5.5 standard errors (the Bonferroni z for ~7,000 tests is 4.9)."""
    masks = {
        s: retrieval(ClosedFormConfig(**values, trials=N_TOKEN_TRIALS, sampler=s))
        for s in ("explicit", "in_law")
    }
    a, b = masks["explicit"].mean(0), masks["in_law"].mean(0)  # (columns, dims, N)
    pooled = (a + b) / 2
    informative = (pooled > 0) & (pooled < 1)
    se = np.sqrt(pooled * (1 - pooled) * 2 / N_TOKEN_TRIALS)
    z = np.abs(a - b)[informative] / se[informative]
    pvalues = dict(enumerate(2 * stats.norm.sf(z)))
    assert informative.sum() > 1000
    assert _holm(pvalues, alpha) == []


def _fisher_p(x: np.ndarray, y: np.ndarray, u: np.ndarray, v: np.ndarray) -> float:
    """Two-sided p-value of equal correlations corr(x, y) = corr(u, v) (Fisher's z)."""
    r1, r2 = np.corrcoef(x, y)[0, 1], np.corrcoef(u, v)[0, 1]
    se = math.sqrt(1 / (len(x) - 3) + 1 / (len(u) - 3))
    return 2 * stats.norm.sf(abs(math.atanh(r1) - math.atanh(r2)) / se)


@pytest.mark.slow
def test_joint_law_across_d_t_and_schemes_within_a_trial(runs_a, runs_b):
    """Within a trial, errors at two d, at two T and of two schemes are correlated (they share
    E): the correlations must match between samplers. Fisher z-tests, 6,000 trials per side
    (SE of atanh r: 0.018; a correlation difference of 0.1 near r = 0.5 is ≥ 7 SE), Holm at
    0.0005 for each of A and B."""
    for runs, pairs_of in ((runs_a, _pairs_a), (runs_b, _pairs_b)):
        explicit, in_law = runs["explicit"], runs["in_law"]
        pvalues = {}
        for label, (c1, i1), (c2, i2) in pairs_of(explicit):
            x, y = explicit.errors[:, c1, i1], explicit.errors[:, c2, i2]
            u, v = in_law.errors[:, c1, i1], in_law.errors[:, c2, i2]
            pvalues[label] = _fisher_p(x, y, u, v)
        assert len(pvalues) >= 8
        assert _holm(pvalues, 0.0005) == []


def _pairs_a(result):
    """Across d for every scheme, and across schemes at one d."""
    last = len(result.dims) - 1
    pairs = [(f"{col.scheme}: d0-dmax", (c, 0), (c, last)) for c, col in enumerate(result.columns)]
    pairs += [(f"{col.scheme}: d1-dmax", (c, 1), (c, last)) for c, col in enumerate(result.columns)]
    pairs += [(f"schemes {c}-{c + 1} at d1", (c, 1), (c + 1, 1)) for c in range(4)]
    return pairs


def _pairs_b(result):
    """Across T at each d (same scheme), and across d (same scheme and T)."""
    pairs = []
    index = {(col.scheme, col.n_samples): c for c, col in enumerate(result.columns)}
    for (scheme, t), c in index.items():
        pairs.append((f"{scheme} T={t}: d0-d1", (c, 0), (c, 1)))
        if t == 50:
            pairs.append((f"{scheme}: T50-T400 d1", (c, 1), (index[(scheme, 400)], 1)))
        if t == 400:
            pairs.append((f"{scheme}: T400-inf d0", (c, 0), (index[(scheme, None)], 0)))
    return pairs


@pytest.mark.slow
def test_readout_metrics_equal_in_law(one_thread):
    """The calibrated softmax readout (cross-entropy, p(correct), β*) and the error, per cell:
    Welch z-tests, 2,000 trials per sampler, Holm at 0.001 over 4 cells × 4 metrics."""
    runs = _runs(C_CONFIG, N_READOUT_TRIALS)
    explicit, in_law = runs["explicit"], runs["in_law"]
    pvalues = {}
    for c, i, label in _cells(explicit):
        pvalues[(label, "error")] = _welch(explicit.errors[:, c, i], in_law.errors[:, c, i])[0]
        for metric in ("cross_entropy", "p_correct", "beta"):
            a, b = explicit.readout[metric][:, c, i], in_law.readout[metric][:, c, i]
            pvalues[(label, metric)] = _welch(a, b)[0]
    assert _holm(pvalues, 0.001) == []

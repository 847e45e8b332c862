"""The vocabulary study: multinomial count vectors (their law, nesting, determinism, memory), the
closed-form kernel on them against an explicit W, the full word law, the study's analysis and
its judged claims (each able to fail), and the ``assocmem vocabulary`` command."""

import json
import math
from types import SimpleNamespace
from typing import Any

import numpy as np
import pandas as pd
import pytest
import torch
from naive import naive_weights
from scipy import stats

from assocmem import (
    ClosedFormConfig,
    ConfigError,
    full_word_law,
    multinomial_prefix_counts,
    rank_slopes,
    run_closed_form,
    run_study,
    tail_mass,
    zipf,
)
from assocmem.analysis.theory import finite_data_error
from assocmem.cli import main
from assocmem.closed_form.config import config_from_mapping, working_set_bytes
from assocmem.embeddings import standard_coordinates
from assocmem.laws.counts import BinomialTree, multinomial_prefix_label_counts
from assocmem.laws.tokens import label_law, mod_targets, zipf_probabilities
from assocmem.rng import generator
from assocmem.studies.vocabulary import experiment as study
from assocmem.studies.vocabulary import theory as vocabulary_analysis
from assocmem.studies.vocabulary.theory import compare_exponents, frame_config, unseen_mass
from assocmem.sweep.kinds import get_kind

pytest.importorskip("wordfreq")

from assocmem.laws.words import vocabulary_size, word_distribution  # noqa: E402

# ---- the count vectors ------------------------------------------------------------------------


def test_counts_have_the_multinomial_law():
    """Chi-square of 20,000 draws of Multinomial(4, p) over its 15 outcomes against the exact
    pmf: the test's false-alarm rate is 1e-4 (a fixed seed: it passes or fails the same way)."""
    p = torch.tensor([0.5, 0.3, 0.15, 0.05], dtype=torch.float64)
    tree, gen = BinomialTree(p), torch.Generator().manual_seed(3)
    draws = np.stack([tree.sample(4, gen).numpy() for _ in range(20_000)])
    assert (draws.sum(axis=1) == 4).all() and (draws >= 0).all()
    outcomes, counts = np.unique(draws, axis=0, return_counts=True)
    expected = 20_000 * np.array([stats.multinomial.pmf(o, 4, p.numpy()) for o in outcomes])
    assert len(outcomes) == 35 or expected.sum() > 19_990  # every likely outcome was seen
    statistic = ((counts - expected) ** 2 / expected).sum()
    assert stats.chi2.sf(statistic, len(outcomes) - 1) > 1e-4


def test_nested_sizes_have_the_joint_law_of_prefix_counts():
    """n_{T1} and n_{T2} of one sequence: Cov(n_T1(x), n_T2(y)) = T1 (p_x 1{x=y} − p_x p_y).
    Over 2,000 draws every entry is within 5 standard errors of the formula."""
    p = zipf_probabilities(4, 1.0)
    gen = torch.Generator().manual_seed(5)
    rows = [multinomial_prefix_counts(p, [10, 30], gen).numpy() for _ in range(2000)]
    first, second = np.stack([r[0] for r in rows]), np.stack([r[1] for r in rows])
    pn = p.numpy()
    assert np.allclose(first.mean(0), 10 * pn, atol=5 * np.sqrt(10 * pn / 2000))
    cov = ((first - first.mean(0))[:, :, None] * (second - second.mean(0))[:, None, :]).mean(0)
    want = 10 * (np.diag(pn) - np.outer(pn, pn))
    assert np.abs(cov - want).max() < 5 * 30 / np.sqrt(2000)  # s.d. of a product ≤ √(10·30)
    assert (second >= first).all()  # running sums: never fewer at the larger T


def test_unseen_mass_of_the_counts_matches_the_exact_finite_data_error():
    """E Σ p 1{n_T(x) = 0} = Σ p (1−p)^T (the paper's Proposition 1), at T up to 10⁸ on
    N = 2·10⁴; 30 draws, within 4 standard errors of the independent-indicator bound."""
    p = zipf_probabilities(20_000, 1.2)
    sizes = [10**3, 10**5, 10**8]
    masses = np.stack(
        [
            unseen_mass(multinomial_prefix_counts(p, sizes, generator(0, "counts", t)).numpy(), p)
            for t in range(30)
        ]
    )
    exact = finite_data_error(p.numpy(), sizes)
    miss = np.exp(np.outer(sizes, np.log1p(-p.numpy())))
    se = np.sqrt((miss * (1 - miss)) @ p.numpy() ** 2 / 30)
    assert (np.abs(masses.mean(0) - exact) <= 4 * se + 1e-15).all()


def test_label_counts_split_the_token_counts():
    p = zipf_probabilities(50, 1.5)
    law = label_law(mod_targets(50, 5), 5, 0.3)  # (N, M)
    joint = multinomial_prefix_label_counts(
        p, law, [0, 100, 10**6], generator(1, "counts", 0), generator(1, "label_counts", 0)
    )
    tokens = multinomial_prefix_counts(p, [0, 100, 10**6], generator(1, "counts", 0))
    assert joint.shape == (3, 5, 50) and torch.equal(joint.sum(1), tokens)
    share = joint[2] / joint[2].sum(0).clamp(min=1)  # (M, N): the empirical label law
    seen = joint[2].sum(0) > 10**4
    assert torch.allclose(share[:, seen], law.T[:, seen], atol=0.02)
    clean = label_law(mod_targets(50, 5), 5, 0.0)
    noiseless = multinomial_prefix_label_counts(
        p, clean, [100], generator(1, "counts", 0), generator(1, "label_counts", 0)
    )
    assert torch.equal(noiseless[0], clean.T * tokens[1])  # every draw of x has label f*(x)


def test_counts_are_deterministic_and_thread_independent():
    p = zipf_probabilities(30_000, 1.1)
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        one = multinomial_prefix_counts(p, [10**4, 10**7], generator(2, "counts", 4))
        torch.set_num_threads(2)
        two = multinomial_prefix_counts(p, [10**4, 10**7], generator(2, "counts", 4))
    finally:
        torch.set_num_threads(threads)
    assert torch.equal(one, two)
    other = multinomial_prefix_counts(p, [10**4, 10**7], generator(2, "counts", 5))
    assert not torch.equal(one, other)


def test_bad_sizes_are_one_line_errors():
    p = zipf_probabilities(10, 1.0)
    with pytest.raises(ConfigError, match="^n_samples: sizes must be non-decreasing"):
        multinomial_prefix_counts(p, [10, 5], generator(0, "counts", 0))
    with pytest.raises(ConfigError, match="^n_samples: must be integers"):
        multinomial_prefix_counts(p, [2**60], generator(0, "counts", 0))
    with pytest.raises(ConfigError, match="^probabilities:"):
        BinomialTree(torch.zeros(3))


# ---- the closed-form config and kernel ---------------------------------------------------------


def test_default_counts_keep_every_existing_hash():
    kind = get_kind("closed_form")
    old = kind.identity(ClosedFormConfig(n_samples=(10, None), dims=(10,)), 0)
    assert "counts" not in old["config"]  # tokens: the identity of runs stored before the field
    new = kind.identity(ClosedFormConfig(n_samples=(10, None), dims=(10,), counts="multinomial"), 0)
    assert new["config"]["counts"] == "multinomial"


def test_config_checks_counts_and_the_memory_guard_counts_them():
    with pytest.raises(ConfigError, match="^counts: unknown count draw 'poisson'"):
        ClosedFormConfig(counts="poisson")
    big = {"n_inputs": 1000, "dims": (64,), "schemes": ("empirical",), "memory_gb": 1.0}
    with pytest.raises(ConfigError, match="counts = 'multinomial'"):
        ClosedFormConfig(**big, n_samples=(10**9,))  # 16 GB of tokens and labels
    small = ClosedFormConfig(**big, n_samples=(10**9,), counts="multinomial")
    same = ClosedFormConfig(**big, n_samples=(10**4,), counts="multinomial")
    assert working_set_bytes(small) == working_set_bytes(same) < 2**30  # O(N), whatever T
    with pytest.raises(ConfigError, match="^n_samples: must be ≤ 2\\^53"):
        ClosedFormConfig(**big, n_samples=(2**54,), counts="multinomial")


def test_all_words_is_the_whole_list():
    n = vocabulary_size("en")
    assert n > 300_000  # wordfreq's large English list (321,180 words in wordfreq 3.1)
    cfg = config_from_mapping({"words": "en", "n_inputs": "all", "dims": [8], "trials": 1})
    assert cfg.n_inputs == n
    with pytest.raises(ConfigError, match="^words: unknown language"):
        config_from_mapping({"n_inputs": "all"})


def _naive_errors(cfg: ClosedFormConfig, trial: int) -> dict[tuple[str, Any, int], float]:
    """Errors with W built explicitly (float64) from the trial's embeddings and its multinomial
    joint counts (drawn here from the same named streams), Gaussian E and spherical U, both
    drawn at d_max and truncated."""
    n, m = cfg.n_inputs, cfg.n_outputs
    probs_t = zipf_probabilities(n, cfg.alpha)
    probs, targets = probs_t.numpy(), mod_targets(n, m).numpy()
    dims, finite = sorted(cfg.dims), sorted(t for t in cfg.n_samples if t is not None)
    law = label_law(mod_targets(n, m), m, cfg.label_noise)  # (N, M)
    joint = multinomial_prefix_label_counts(
        probs_t,
        law,
        finite,
        generator(cfg.seed, "counts", trial),
        generator(cfg.seed, "label_counts", trial),
    ).numpy()  # (R, M, N)
    f64 = torch.float64
    coords = standard_coordinates(n, dims[-1], generator(cfg.seed, "embeddings", trial), dtype=f64)
    coords_u = standard_coordinates(
        m, dims[-1], generator(cfg.seed, "output_embeddings", trial), dtype=f64
    )
    e_all = coords.numpy().T / math.sqrt(dims[-1])  # (N, d_max): Gaussian, drawn at d_max
    u_all = coords_u.numpy().T
    u_all = u_all / np.linalg.norm(u_all, axis=1, keepdims=True)
    out = {}
    for spec in cfg.schemes:
        uses_data = spec.split(":")[0] != "population"
        for t in list(cfg.n_samples) if uses_data else [None]:
            if t is None:
                freq, stored = probs, law.numpy()
            else:
                counts = joint[finite.index(t)]  # (M, N)
                freq = counts.sum(0)
                stored = (counts / np.maximum(freq, 1)).T  # (N, M): n(x, y) / n(x)
            for d in dims:
                q = naive_weights(spec, probs, freq, d)
                e, u = e_all[:, :d], u_all[:, :d]
                w = sum(q[x] * np.outer(stored[x] @ u, e[x]) for x in range(n))
                scores = e @ np.asarray(w).T @ u.T
                best = scores.max(axis=1)
                unique = (scores == best[:, None]).sum(axis=1) == 1
                correct = unique & (scores.argmax(axis=1) == targets)
                out[(spec, t, d)] = float(probs @ ~correct)
    return out


@pytest.mark.parametrize("label_noise", [0.0, 0.2])
def test_kernel_on_multinomial_counts_matches_an_explicit_memory(label_noise):
    cfg = ClosedFormConfig(
        n_inputs=30,
        n_outputs=3,
        alpha=1.3,
        label_noise=label_noise,
        schemes=("population", "empirical", "seen_once", "empirical_threshold:P=d/4"),
        dims=(4, 16, 40),
        n_samples=(0, 20, 300, None),
        trials=2,
        dtype="float64",
        sampler="explicit",
        counts="multinomial",
    )
    result = run_closed_form(cfg)
    for row, trial in enumerate(result.trials):
        expected = _naive_errors(cfg, trial)
        for c, column in enumerate(result.columns):
            for i, d in enumerate(result.dims):
                want = expected[(column.scheme, column.n_samples, d)]
                assert result.errors[row, c, i] == pytest.approx(want, abs=1e-12)


def test_a_trial_is_the_same_alone_or_in_a_batch():
    cfg = ClosedFormConfig(
        n_inputs=200,
        schemes=("empirical_threshold:P=d/8",),
        dims=(16, 64),
        n_samples=(10**3, 10**7),
        trials=3,
        counts="multinomial",
    )
    together = run_closed_form(cfg).errors
    alone = run_closed_form(cfg, trials=[2]).errors
    assert np.array_equal(together[2], alone[0])


# ---- the law and its analysis -----------------------------------------------------------------


def test_the_full_english_law_bends():
    law = full_word_law("en")
    p = law.probabilities
    assert p.size == vocabulary_size("en") and p.sum() == pytest.approx(1.0)
    windows = {w.first: w for w in rank_slopes(p)}
    assert -1.1 < windows[10].slope < -0.85 and -1.1 < windows[100].slope < -0.85
    assert windows[10_000].slope < -1.7  # the bend: a steeper tail
    assert np.unique(p).size < 1000  # quantised frequencies: few distinct values
    assert 1.0 < law.alpha_kl < 1.2 < 1.6 < law.alpha_slope


def test_rank_slopes_and_tail_mass_on_an_exact_zipf_law():
    p = zipf(10**5, 1.7)
    assert all(w.slope == pytest.approx(-1.7, abs=1e-9) for w in rank_slopes(p))
    assert sum(w.mass for w in rank_slopes(p)) == pytest.approx(1.0)  # ranks 1-9, 10-99, …, N
    assert np.allclose(tail_mass(p, [0, 1, 10, 10**5]), [1.0, 1 - p[0], 1 - p[:10].sum(), 0.0])


def test_compare_exponents_places_the_predicted_slope():
    dims = np.array([64.0, 128, 256, 512, 1024])
    rng = np.random.default_rng(0)
    errors = 2.0 * dims**-0.3 * (1 + 0.01 * rng.standard_normal((20, 5)))
    comp = compare_exponents("c", dims, errors, 2.0 * dims**-0.3, (64, 1024), {"a": -0.1})
    assert comp.predicted == pytest.approx(-0.3) and comp.predicted_inside
    assert comp.distance(-0.1) > 0.15 and comp.distance(comp.measured.slope) == 0.0


# ---- the claims can fail ---------------------------------------------------------------------


def _frame(cfg: ClosedFormConfig) -> pd.DataFrame:
    frame = run_closed_form(cfg).to_frame()
    skip = ("dims", "schemes", "n_samples", "trials", "probabilities")
    for key, value in cfg.to_dict().items():
        if key not in skip and value is not None:
            frame[key] = value
    return frame


@pytest.fixture(scope="module")
def small_frames() -> SimpleNamespace:
    """The study's two sweeps at N = 300 words (fast), 6 trials."""
    common = {"dims": (64, 128, 256, 512, 1024, 2048), "trials": 6, "sampler": "in_law"}
    real = ClosedFormConfig(
        n_inputs=300,
        words="en",
        schemes=(study.POPULATION, study.THRESHOLD, study.EMPIRICAL),
        n_samples=(10**3, 10**5, None),
        counts="multinomial",
        **common,
    )
    alpha = round(full_word_law("en").alpha_kl, 6)
    zipf_cfg = ClosedFormConfig(
        n_inputs=300, alpha=alpha, schemes=(study.POPULATION, study.THRESHOLD), **common
    )
    return SimpleNamespace(vocabulary=_frame(real), vocabulary_zipf=_frame(zipf_cfg))


def _scaled(frames: SimpleNamespace, factor: Any) -> SimpleNamespace:
    real = frames.vocabulary.copy()
    real["error"] = real["error"] * factor(real)
    return SimpleNamespace(vocabulary=real, vocabulary_zipf=frames.vocabulary_zipf)


def test_prediction_claim_fails_when_the_curves_part(small_frames):
    good = study.claim_prediction(small_frames, "full")
    assert good.passed is True, good.measured
    bad = study.claim_prediction(_scaled(small_frames, lambda f: 1.2), "full")
    assert bad.passed is False and bad.measured["max_abs_rel_error"] > 0.15


def test_exponent_claim_fails_when_the_slopes_part(small_frames):
    """Steeper measured curves (slope −0.05 more) move the predictions outside the intervals.

    The unscaled small frames (N = 300, 6 trials) sit at the claim's margin: 0.011 outside on
    an Intel Xeon VM, inside on an AMD EPYC one (the BLAS rounds differently), so only the
    change is checked here; the claim itself is judged at scale by ``reproduce --beyond``."""
    good = study.claim_exponents(small_frames, "full").measured["largest_distance_outside"]
    steeper = _scaled(small_frames, lambda f: (f["dim"] / 64.0) ** -0.05)
    bad = study.claim_exponents(steeper, "full")
    assert bad.passed is False and bad.measured["largest_distance_outside"] > good + 0.02


def test_single_exponent_claim_fails_on_a_law_that_follows_it(small_frames):
    alpha = full_word_law("en").alpha_kl
    frames = small_frames.vocabulary.copy()
    rows = frames["scheme"] == study.THRESHOLD
    noise = 1 + 0.001 * np.random.default_rng(1).standard_normal(rows.sum())
    frames.loc[rows, "error"] = 0.9 * frames.loc[rows, "dim"] ** -(alpha - 1) * noise
    claim = study.claim_single_exponent(
        SimpleNamespace(vocabulary=frames, vocabulary_zipf=small_frames.vocabulary_zipf), "full"
    )
    assert claim.passed is False


def _unseen_z(frames: SimpleNamespace) -> np.ndarray:
    cfg = vocabulary_analysis.frame_config(frames.vocabulary)
    probs = word_distribution(cfg.words, cfg.n_inputs).probabilities
    sizes = [t for t in cfg.n_samples if t is not None]
    trials = sorted(int(t) for t in frames.vocabulary["trial"].unique())
    return vocabulary_analysis.unseen_check(cfg, probs, sizes, trials)["z"]


def test_the_runs_counts_leave_the_predicted_unseen_mass(small_frames, monkeypatch):
    """Formerly claim vocabulary-4 (it checks the sampler, not the science): the study's runs'
    multinomial counts (English words, T = 10³ and 10⁵, 6 trials) leave unseen a trial-mean
    mass within 4 s.e. (of independent indicators, an upper bound) of Σ p(1−p)^T; counts of
    T/2 tokens fail it."""
    assert (np.abs(_unseen_z(small_frames)) <= 4).all()
    real = vocabulary_analysis.sample_frequencies

    def halved(cfg: ClosedFormConfig, trial: int) -> dict[int, np.ndarray]:
        return {t: c // 2 for t, c in real(cfg, trial).items()}  # as if T/2 tokens were seen

    monkeypatch.setattr(vocabulary_analysis, "sample_frequencies", halved)
    assert np.abs(_unseen_z(small_frames)).max() > 4


# ---- the commands ------------------------------------------------------------------------------


def test_words_all_lists_the_whole_vocabulary(capsys):
    assert main(["words", "en", "-N", "all", "--format", "json"]) == 0
    (law,) = json.loads(capsys.readouterr().out)["laws"]
    assert law["language"] == "en" and 1.0 < law["alpha_kl"] < 1.2
    assert law["truncated_mass"] == pytest.approx(0.0, abs=1e-9)


@pytest.mark.parametrize(
    ("argv", "field"),
    [
        (["--dims", "0"], "dims"),
        (["--n-samples", "many"], "n_samples"),
        (["--trials", "0"], "trials"),
        (["--scale", "huge"], "scale"),
    ],
)
def test_a_bad_option_is_one_line_and_exit_2(argv, field, capsys, tmp_path):
    assert main(["vocabulary", *argv, "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and field in err[0]
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_the_command_runs_small(capsys):
    """Every word, three dims, two T, two trials: measured, not judged (changed settings)."""
    argv = ["vocabulary", "--dims", "64", "256", "1024", "--n-samples", "10000", "inf"]
    assert main([*argv, "--trials", "2", "--format", "json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert {c["id"] for c in payload["claims"]} == {f"vocabulary-{i}" for i in range(1, 4)}
    assert all(c["passed"] is None for c in payload["claims"])
    rows = payload["records"]["vocabulary"]
    assert {r["dim"] for r in rows} == {64, 256, 1024} and rows[0]["n_inputs"] > 300_000


def test_frame_config_reads_integer_fields_stored_as_floats() -> None:
    """In a frame that also holds runs of other kinds (reproduce's), integer columns such as
    n_inputs come back as floats; the config read from it is still the one that ran."""
    cfg = ClosedFormConfig(n_inputs=60, dims=(8, 16), trials=2, schemes=("population",))
    # the store's rows carry the config fields; beside runs without them, ints read as floats
    frame = run_closed_form(cfg).to_frame().assign(n_inputs=60.0, n_outputs=5.0, readout=0.0)
    read = frame_config(frame)
    assert read.n_inputs == 60 and isinstance(read.n_inputs, int)
    assert read.dims == cfg.dims and read.schemes == cfg.schemes


def test_sizes_keep_distinct_labels_and_a_short_d_grid_keeps_the_zipf_comparison():
    """T = 10⁴ and 2·10⁴ were both "1e4" (the unseen-mass check lost one, the table had two rows of
    one name); with d ∈ {64, 128, 256} the fitted window (64, 256) is not a window of D_WINDOWS,
    and the Zipf(α̂) slopes were filed under the requested one, so never found."""
    assert [vocabulary_analysis.size_label(t) for t in (0, 1e4, 2e4, 1e8, math.inf)] == [
        "0", "1e4", "20,000", "1e8", "∞"
    ]  # fmt: skip
    settings = {"dims": [64, 128, 256], "n_samples": [10_000, 20_000, "inf"], "trials": 2}
    result = run_study("vocabulary", settings=settings)
    claims = {claim.id: claim.measured for claim in result.claims}
    assert "d∈[64,256]: slope_on_zipf_alpha_kl" in claims["vocabulary-3"]
    rows = [tuple(row[:2]) for row in result.table.rows]  # (curve, window)
    assert len(rows) == len(set(rows))

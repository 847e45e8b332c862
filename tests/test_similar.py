"""Similar tokens (issue 23): clustered embeddings against a naive explicit memory, the law of the
embeddings, the Gaussian theory against exact formulas and Monte Carlo, the effective number of
tokens, the run kind, the judges (each can fail) and the ``assocmem similar`` command."""

import json
import math

import numpy as np
import pandas as pd
import pytest
import torch

from assocmem import rng
from assocmem.analysis.theory import finite_data_error, zipf
from assocmem.cli import main
from assocmem.closed_form import run_closed_form, trial_scores
from assocmem.closed_form.config import ClosedFormConfig, config_from_mapping
from assocmem.closed_form.result import Column
from assocmem.config.errors import ConfigError
from assocmem.embeddings import clustered_coordinates, standard_coordinates
from assocmem.laws.groups import group_targets, token_groups
from assocmem.laws.tokens import zipf_probabilities
from assocmem.studies.similar import experiment as study
from assocmem.studies.similar.effective_tokens import disjoint_error, fit_effective_tokens
from assocmem.studies.similar.memory import similar_trials, stored_memory
from assocmem.studies.similar.theory import correct_probability, score_moments
from assocmem.sweep.identity import content_hash
from assocmem.sweep.kinds import get_kind

CLUSTERED = dict(embedding="clustered", n_groups=4, similarity=0.5, target="group")


# --- the model against a naive explicit memory ------------------------------------------------


def naive_scores(cfg: ClosedFormConfig, trial: int) -> dict[tuple[str, int], np.ndarray]:
    """scores[x, y] = u_yᵀ W e_x with E built token by token and W = Σ q(x) u_f(x) e_xᵀ formed
    explicitly (float64, infinite data, schemes population and threshold:P=d/2)."""
    n, m, groups_count, rho = cfg.n_inputs, cfg.n_outputs, cfg.n_groups, cfg.similarity
    dims = sorted(cfg.dims)
    probs = zipf_probabilities(n, cfg.alpha).numpy()
    groups = token_groups(
        n,
        groups_count,
        cfg.grouping,
        torch.from_numpy(probs),
        rng.generator(cfg.seed, "groups", trial),
    ).numpy()
    targets = groups % m
    d_max, dt = dims[-1], torch.float64
    noise = standard_coordinates(n, d_max, rng.generator(cfg.seed, "embeddings", trial), dtype=dt)
    centres = standard_coordinates(
        groups_count, d_max, rng.generator(cfg.seed, "embedding_centres", trial), dtype=dt
    )
    raw = np.stack(
        [math.sqrt(rho) * centres[:, groups[x]].numpy() + math.sqrt(1 - rho) * noise[:, x].numpy()
         for x in range(n)]
    )  # fmt: skip  # (N, d_max)
    u_raw = standard_coordinates(
        m, d_max, rng.generator(cfg.seed, "output_embeddings", trial), dtype=dt
    )
    u_all = u_raw.numpy().T / np.linalg.norm(u_raw.numpy().T, axis=1, keepdims=True)  # spherical
    out = {}
    for d in dims:
        e, u = raw[:, :d] / math.sqrt(d_max), u_all[:, :d]  # nested d, truncate convention
        for scheme in cfg.schemes:
            top = (np.arange(n) < max(d // 2, 1)).astype(float)  # threshold:P=d/2
            q = probs if scheme == "population" else top
            w = sum(q[x] * np.outer(u[targets[x]], e[x]) for x in range(n))
            out[(scheme, d)] = e @ w.T @ u.T
    return out


@pytest.mark.parametrize("grouping", ["random", "banded"])
def test_clustered_memory_matches_a_naive_explicit_memory(grouping: str) -> None:
    cfg = ClosedFormConfig(
        n_inputs=40, n_outputs=3, dims=(4, 8, 16), schemes=("population", "threshold:P=d/2"),
        trials=1, dtype="float64", seed=5, grouping=grouping, **CLUSTERED,
    )  # fmt: skip
    assert cfg.resolved_sampler == "explicit"
    kernel = trial_scores(cfg, trial=2)
    naive = naive_scores(cfg, trial=2)
    for (scheme, d), scores in naive.items():
        np.testing.assert_allclose(kernel[(Column(scheme, None), d)].numpy(), scores, atol=1e-10)


def test_zero_similarity_is_the_gaussian_model_number_for_number() -> None:
    base = dict(n_inputs=200, dims=(8, 32), schemes=("population", "seen_once"), n_samples=(50,),
                sampler="explicit")  # fmt: skip
    gaussian = run_closed_form(ClosedFormConfig(**base, trials=3))
    clustered = run_closed_form(
        ClosedFormConfig(**base, trials=3, embedding="clustered", n_groups=10, similarity=0.0)
    )
    np.testing.assert_array_equal(gaussian.errors, clustered.errors)


def test_embedding_law_covariance_monte_carlo() -> None:
    """E[z_x z_x'] = ρ·1{same group} + (1 − ρ)·1{x = x'} per coordinate: 40,000 coordinates,
    each estimate's s.e. ≤ √((1 + ρ²)/40000) ≈ 0.0054 (0.0071 on the diagonal); tolerance 5 s.e."""
    dims, rho = 40_000, 0.4
    groups = torch.tensor([0, 0, 0, 1, 1, 2])
    noise = standard_coordinates(6, dims, torch.Generator().manual_seed(1), dtype=torch.float64)
    centres = standard_coordinates(3, dims, torch.Generator().manual_seed(2), dtype=torch.float64)
    z = clustered_coordinates(noise, centres, groups, rho).numpy()  # (D, N)
    empirical = z.T @ z / dims
    same = (groups[:, None] == groups[None, :]).numpy()
    expected = rho * same + (1 - rho) * np.eye(6)
    assert np.abs(empirical - expected).max() < 5 * math.sqrt(2 / dims)


def test_groups_are_balanced_and_bands_follow_frequency() -> None:
    probs = zipf_probabilities(103, 2.0)
    random = token_groups(103, 10, "random", probs, torch.Generator().manual_seed(0))
    banded = token_groups(103, 10, "banded", probs, torch.Generator().manual_seed(0))
    for groups in (random, banded):
        sizes = torch.bincount(groups, minlength=10)
        assert sizes.min() >= 10 and sizes.max() <= 11
    assert torch.equal(banded, torch.sort(banded).values)  # Zipf ranks: contiguous bands
    assert torch.equal(group_targets(banded, 5), banded % 5)


# --- configuration: validation, sampler, identity ---------------------------------------------


@pytest.mark.parametrize(
    ("values", "field"),
    [
        ({"n_groups": 10}, "n_groups"),  # a grouping field without clustered embeddings
        ({"similarity": 0.5, "target": "group", "n_groups": 5}, "similarity"),
        ({**CLUSTERED, "similarity": 1.5}, "similarity"),
        ({**CLUSTERED, "grouping": "alphabetic"}, "grouping"),
        ({**CLUSTERED, "n_groups": 5000}, "n_groups"),
        ({**CLUSTERED, "output_embedding": "clustered"}, "output_embedding"),
        ({**CLUSTERED, "sampler": "in_law"}, "sampler"),
    ],
)
def test_bad_similar_settings_are_one_line_errors(values: dict, field: str) -> None:
    with pytest.raises(ConfigError) as caught:
        config_from_mapping(values)
    assert caught.value.field == field and "\n" not in str(caught.value)


def test_clustered_embeddings_never_resolve_in_law() -> None:
    noisy = dict(n_inputs=300, schemes=["empirical_threshold:P=d/12"], dims=[10, 100],
                 n_samples=[10, "inf"], seed=3, label_noise=0.1)  # fmt: skip
    assert config_from_mapping(noisy).resolved_sampler == "in_law"  # i.i.d. Gaussian: in law
    clustered = config_from_mapping({**noisy, "embedding": "clustered", "n_groups": 10})
    assert clustered.resolved_sampler == "explicit"
    with pytest.raises(ConfigError, match="in_law is exact only for i.i.d. Gaussian"):
        config_from_mapping({**noisy, "embedding": "clustered", "sampler": "in_law"})


def test_new_fields_keep_existing_run_identities() -> None:
    kind = get_kind("closed_form")
    plain = ClosedFormConfig(n_inputs=100, dims=(10, 20))
    identity = kind.identity(plain, 7)["config"]
    assert not {"n_groups", "similarity", "grouping"} & set(identity)
    grouped = ClosedFormConfig(n_inputs=100, dims=(10, 20), **CLUSTERED)
    assert {"n_groups", "similarity"} <= set(kind.identity(grouped, 7)["config"])
    assert content_hash(kind.identity(plain, 7)) != content_hash(kind.identity(grouped, 7))


# --- the theory --------------------------------------------------------------------------------


def _draw_scores(weights, targets, groups, rho, dim, n_draws, gen, spherical):
    """Monte Carlo scores (draws, N, M) of W = Σ q u_f eᵀ with clustered E and U (float64):
    ``u_yᵀ W e_x = Σ_y' (u_y·u_y') Σ_x' q(x') 1{f(x') = y'} e_x'·e_x``."""
    n, m = len(weights), int(targets.max()) + 1
    noise = torch.randn(n_draws, dim, n, generator=gen, dtype=torch.float64)
    centres = torch.randn(n_draws, dim, int(groups.max()) + 1, generator=gen, dtype=torch.float64)
    z = math.sqrt(rho) * centres[:, :, groups] + math.sqrt(1 - rho) * noise
    e = z.transpose(1, 2) / math.sqrt(dim)  # (K, N, d)
    stored = weights[:, None] * torch.nn.functional.one_hot(targets, m).to(torch.float64)
    classes = e @ (e.transpose(1, 2) @ stored)  # (K, N, M): Σ_x' q(x') 1{f(x') = y} e_x'·e_x
    if not spherical:
        return classes
    u = torch.randn(n_draws, m, dim, generator=gen, dtype=torch.float64)
    u = u / u.norm(dim=2, keepdim=True)
    return classes @ (u @ u.transpose(1, 2))  # G = U Uᵀ


@pytest.mark.parametrize("spherical", [False, True])
def test_score_moments_match_monte_carlo(spherical: bool) -> None:
    """Mean and covariance of the scores: 20,000 draws; the mean within 5 s.e. of the draws,
    the covariance within 8 % of the largest variance (its estimate's s.e. is about 1.4 %)."""
    gen = torch.Generator().manual_seed(11)
    n, m, dim, rho = 12, 3, 24, 0.6
    groups = torch.tensor([0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2])
    targets = torch.arange(n) % m  # independent of the groups: correlated outputs
    weights = torch.rand(n, generator=gen, dtype=torch.float64) * (torch.arange(n) % 3 != 2)
    labels = torch.nn.functional.one_hot(targets, m).T.to(torch.float64)
    gram = (0.0, 1.0) if spherical else (0.0, 0.0)  # renormalised spherical rows / orthogonal
    mean, cov = score_moments(weights, labels, groups, rho, dim, gram)
    draws = _draw_scores(weights, targets, groups, rho, dim, 20_000, gen, spherical)
    se = draws.std(0) / math.sqrt(len(draws))
    assert ((draws.mean(0) - mean).abs() <= 5 * se + 1e-12).all()
    centred = draws - draws.mean(0)
    empirical = torch.einsum("kny,knz->nyz", centred, centred) / (len(draws) - 1)
    scale = cov.diagonal(dim1=1, dim2=2).amax()
    assert (empirical - cov).abs().max() <= 0.08 * scale


def test_shared_targets_make_scores_uncorrelated() -> None:
    groups = torch.arange(30) % 6
    targets = group_targets(groups, 3)
    weights = torch.rand(30, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    labels = torch.nn.functional.one_hot(targets, 3).T.to(torch.float64)
    _, cov = score_moments(weights, labels, groups, 0.7, 50, (2.0, 1.0))
    off = cov - torch.diag_embed(cov.diagonal(dim1=1, dim2=2))
    assert off.abs().max() == 0


def test_correct_probability_is_exact_for_two_outputs_and_matches_monte_carlo() -> None:
    gen = torch.Generator().manual_seed(3)
    mean = torch.randn(50, 2, generator=gen, dtype=torch.float64)
    a = torch.randn(50, 2, 2, generator=gen, dtype=torch.float64)
    cov = a @ a.transpose(1, 2) + 0.1 * torch.eye(2, dtype=torch.float64)
    targets = torch.randint(0, 2, (50,), generator=gen)
    other = 1 - targets
    rows = torch.arange(50)
    gap = mean[rows, targets] - mean[rows, other]
    var = cov[rows, targets, targets] + cov[rows, other, other] - 2 * cov[rows, targets, other]
    exact = torch.special.ndtr(gap / var.sqrt())
    torch.testing.assert_close(correct_probability(mean, cov, targets), exact, atol=1e-9, rtol=0)
    # independent scores, M = 5: 100,000 Gaussian draws (s.e. ≤ 0.0016); tolerance 0.007
    mean5 = torch.randn(40, 5, generator=gen, dtype=torch.float64) * 0.5
    var5 = torch.rand(40, 5, generator=gen, dtype=torch.float64) + 0.05
    targets5 = torch.randint(0, 5, (40,), generator=gen)
    draws = mean5 + var5.sqrt() * torch.randn(100_000, 40, 5, generator=gen, dtype=torch.float64)
    hits = (draws.argmax(-1) == targets5).to(torch.float64).mean(0)
    found = correct_probability(mean5, torch.diag_embed(var5), targets5)
    assert (found - hits).abs().max() < 0.007


def test_infinite_dimension_limit_is_the_group_coverage_rule() -> None:
    """d → ∞, shared targets, seen-once: a token is retrieved for sure iff it or a group-mate was
    seen; a token of a group with no seen token has no signal and is answered at chance."""
    cfg = ClosedFormConfig(n_inputs=300, dims=(64,), schemes=("seen_once",), n_samples=(40,),
                           trials=1, **{**CLUSTERED, "n_groups": 30})  # fmt: skip
    memory = stored_memory(cfg, 0)
    w, labels = memory.weights[0, 0], memory.labels[0]
    mean, cov = score_moments(w, labels, memory.groups, 0.5, 10**15, (2.0, 1.0))
    correct = correct_probability(mean, cov, memory.targets)
    covered = torch.zeros(30, dtype=torch.bool).index_fill_(0, memory.groups[w > 0], True)
    covered = covered[memory.groups]
    assert 0 < int(covered.sum()) < 300
    torch.testing.assert_close(
        correct[covered], torch.ones_like(correct[covered]), atol=1e-9, rtol=0
    )
    assert (correct[~covered] < 0.5).all()
    assert float(correct[~covered].mean()) == pytest.approx(1 / 5, abs=0.1)


# --- measurement and run kind -----------------------------------------------------------------


def test_measured_error_is_the_kernel_error_and_the_parts_add_up() -> None:
    cfg = ClosedFormConfig(n_inputs=300, dims=(16, 64), schemes=("seen_once", "threshold:P=d/8"),
                           n_samples=(30, None), trials=2, **CLUSTERED)  # fmt: skip
    kernel = run_closed_form(cfg).errors
    for row, metrics in enumerate(similar_trials(cfg, [0, 1])):
        np.testing.assert_allclose(metrics["error"], kernel[row], atol=1e-6)
        assert (metrics["unseen_error"] <= metrics["unseen_mass"] + 1e-12).all()
        assert (metrics["unseen_error"] <= metrics["error"] + 1e-12).all()
        assert (metrics["theory_unseen_error"] <= metrics["theory_error"] + 1e-12).all()


def test_runs_are_the_same_alone_or_in_a_batch() -> None:
    kind = get_kind("similar")
    cfg = kind.build({"n_inputs": 200, "dims": [32], "schemes": ["seen_once"],
                      "n_samples": [20, 200], **CLUSTERED})  # fmt: skip
    batch = kind.execute([cfg] * 3, [0, 1, 2])
    alone = kind.execute([cfg], [2])
    assert batch[2] == alone[0] and batch[0] != batch[1]
    assert kind.execute([cfg], [2]) == alone  # same seed, same numbers


# --- effective number of tokens ---------------------------------------------------------------


def test_effective_tokens_recovers_the_disjoint_curve() -> None:
    sizes = np.array([10, 100, 1000, 10000])
    curve = disjoint_error(300, 2.0, 5, sizes)
    fit = fit_effective_tokens(np.tile(curve, (10, 1)), sizes, 2.0, 5)
    assert fit.n_eff == pytest.approx(300, rel=0.01) and fit.rms < 0.01 and not fit.at_edge
    assert fit.interval[0] <= fit.n_eff <= fit.interval[1]
    expected = 0.8 * finite_data_error(zipf(300, 2.0), sizes)
    np.testing.assert_allclose(curve, expected)
    with pytest.raises(ValueError):
        fit_effective_tokens(np.zeros((3, 4)), sizes, 2.0, 5)


# --- judges: each claim can fail --------------------------------------------------------------


def synthetic_frame(breaks: str = "") -> pd.DataFrame:
    """Records where every claim holds; ``breaks`` names the claim made false."""
    sizes, rows, gen = [10, 100, 1000, 3162], [], np.random.default_rng(0)
    n_eff = {(20, 0.6): 30, (100, 0.6): 100}
    for groups in (20, 100):
        for target in ("group", "mod"):
            for rho in (0.0, 0.6):
                shared = target == "group" and rho > 0 and breaks != "similar-3"
                n = n_eff[(groups, rho)] if shared else 1000
                for trial in range(20):
                    noise = 1 + 0.02 * gen.standard_normal()
                    common = dict(alpha=2.0, grouping="random", n_groups=groups, target=target,
                                  similarity=rho, trial=trial, n_outputs=5,
                                  n_inputs=1000)  # fmt: skip
                    for size, error in zip(
                        sizes, disjoint_error(n, 2.0, 5, np.array(sizes)), strict=True
                    ):
                        mass = float(finite_data_error(zipf(1000, 2.0), [size])[0])
                        seen = (
                            0.5 if target == "group" and rho > 0 and breaks != "similar-1" else 0.8
                        )
                        theory = seen + (0.2 if breaks == "similar-2" else 0)
                        rows.append({**common, "scheme": "seen_once", "dim": 512, "n_samples": size,
                                     "error": error * noise, "theory_error": error,
                                     "unseen_mass": mass, "unseen_error": seen * mass * noise,
                                     "theory_unseen_error": theory * mass})  # fmt: skip
                    excess = 0.2 if target == "mod" and rho > 0 and breaks != "similar-4" else 0.0
                    rows.append({**common, "scheme": "threshold:P=d/8", "dim": 512,
                                 "n_samples": math.inf, "error": 0.007 + excess * noise,
                                 "theory_error": 0.007 + excess, "unseen_mass": 0.0,
                                 "unseen_error": 0.0, "theory_unseen_error": 0.0})  # fmt: skip
    return pd.DataFrame(rows)


@pytest.mark.parametrize("claim", sorted(study.SIMILAR.claims))
def test_each_judge_passes_on_true_records_and_fails_on_false_ones(claim: str) -> None:
    judge = study.SIMILAR.claims[claim]
    holds = judge(type("Frames", (), {"similar": synthetic_frame()})(), "quick")
    assert holds.passed is True, holds
    broken = judge(type("Frames", (), {"similar": synthetic_frame(claim)})(), "quick")
    assert broken.passed is False, broken
    empty = judge(type("Frames", (), {"similar": synthetic_frame().iloc[:0]})(), "quick")
    assert empty.passed is None and "not judged" in empty.note


# --- the command -------------------------------------------------------------------------------


def test_the_command_runs_and_reports_json(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["similar", "--trials", "2", "--similarity", "0", "0.6", "--n-groups", "20",
            "--target", "group", "mod", "--format", "json"]  # fmt: skip
    assert main(args) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["experiment"] == "beyond-similar"
    assert {c["id"] for c in payload["claims"]} == set(study.SIMILAR.claims)
    assert all(c["passed"] is None for c in payload["claims"])  # settings changed: not judged
    records = payload["records"]["similar"]
    assert {r["similarity"] for r in records} == {0.0, 0.6} and len(records) > 0


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (["--similarity", "2"], "similarity"),
        (["--trials", "0"], "trials"),
        (["--target", "nope"], "target"),
    ],  # fmt: skip
)
def test_a_bad_option_is_one_line_and_exit_2(
    args: list[str], field: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["similar", *args]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and field in err[0]


def test_a_tie_with_no_variance_loses_and_is_never_nan():
    """A token whose scores are all equal and certain (nothing stored, nothing drawn): its
    target does not strictly win (0·∞ had made it NaN, and the run 'diverged')."""
    zero = torch.zeros(2, 3, dtype=torch.float64)
    tied = correct_probability(
        zero, torch.zeros(2, 3, 3, dtype=torch.float64), torch.tensor([0, 1])
    )
    assert tied.tolist() == [0.0, 0.0]
    ahead = torch.tensor([[1.0, 0.0, 0.0]], dtype=torch.float64)
    won = correct_probability(ahead, torch.zeros(1, 3, 3, dtype=torch.float64), torch.tensor([0]))
    assert won.tolist() == [1.0]


def test_the_theory_stores_the_majority_label_as_the_kernel_does():
    """Under the majority rule a sample-free scheme stores the one-hot f*(x): the theory of a
    noisy majority memory is the noise-free one (same targets, same weights)."""
    common = dict(n_inputs=200, n_outputs=5, schemes=("threshold:P=d/8",), dims=(64, 256),
                  n_samples=(None,), trials=1, sampler="explicit")  # fmt: skip
    noisy = ClosedFormConfig(**common, label_noise=0.5, label_rule="majority")
    clean = ClosedFormConfig(**common)
    np.testing.assert_allclose(
        similar_trials(noisy, [0])[0]["theory_error"], similar_trials(clean, [0])[0]["theory_error"]
    )

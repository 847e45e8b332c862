"""Memories in parallel (docs: beyond/superposition.md): the closed-form heads against W_h built
explicitly, the signal-to-noise picture against exact moments, the budgets, the batched trainer
against plain autograd, determinism, the claims' ability to fail, and the command."""

import json
import math
import types

import numpy as np
import pandas as pd
import pytest
import torch
import torch.nn.functional as F

from assocmem import (
    ConfigError,
    EmbeddingLaw,
    HeadsLayout,
    HeadsTraining,
    HeadsTrial,
    budget_head_dim,
    heads_parameter_counts,
    participation_ratio,
    predict_superposition,
    run_study,
    superposition_errors,
    train_heads,
)
from assocmem.analysis.score_integral import token_success
from assocmem.cli import main
from assocmem.laws.tokens import mod_targets, zipf_probabilities
from assocmem.studies.superposition import memory as kernel
from assocmem.studies.superposition import theory as theory
from assocmem.studies.superposition.experiment import CLAIMS
from assocmem.studies.superposition.kind import BUDGETS, build_superposition
from assocmem.studies.superposition.kind_train import build_heads_train
from assocmem.studies.superposition.memory import (
    ARRANGEMENTS,
    STREAMS,
    band_route,
    head_coordinates,
    head_embeddings,
    head_weights,
    routes,
    scheme_weights,
)
from assocmem.studies.superposition.theory import retrieval_probability
from assocmem.studies.superposition.train import HEAD_OPTIMIZERS, draw_heads
from assocmem.training.optimizers import OPTIMIZERS

N, M = 40, 5
SCHEMES = ("population", "threshold:P=d/8")


def trial(n: int = N, seed: int = 0, index: int = 0, dtype=torch.float64) -> HeadsTrial:
    probs, targets = zipf_probabilities(n, 2.0), mod_targets(n, M)
    return HeadsTrial(probs, targets, M, SCHEMES, ARRANGEMENTS, seed, index, dtype)


def naive_errors(inputs: HeadsTrial, layout: HeadsLayout) -> np.ndarray:
    """(S, A) errors: every W_h = Σ_x q_h(x) u_{f(x)} e_xᵀ formed, scores summed (or read from
    the token's own head), the strict argmax checked token by token."""
    n, heads, d = inputs.probs.numel(), layout.heads, layout.head_dim
    embeddings = []
    for h in range(heads):
        coords = [
            head_coordinates(inputs.seed, inputs.trial, h, rows, d, stream, torch.float64)
            for rows, stream in ((n, STREAMS[0]), (M, STREAMS[1]))
        ]
        embeddings.append(head_embeddings(*coords, d))
    out = np.zeros((len(inputs.schemes), len(inputs.arrangements)))
    for s, spec in enumerate(inputs.schemes):
        q = scheme_weights(spec, inputs.probs, layout.width)
        routed = routes(q, inputs.probs, heads, inputs.seed, inputs.trial)
        for a, arrangement in enumerate(inputs.arrangements):
            assignment = arrangement.removesuffix("-gated")
            weights = head_weights(q, routed[assignment], heads, assignment)
            scores = torch.zeros(n, M, dtype=torch.float64)
            for h, (E, U) in enumerate(embeddings):
                W = sum(weights[h, x] * torch.outer(U[inputs.targets[x]], E[x]) for x in range(n))
                head = (U @ W @ E.T).T  # (N, M): u_yᵀ W_h e_x
                if arrangement.endswith("-gated"):
                    head = head * (routed[assignment] == h)[:, None]
                scores += head
            error = 0.0
            for x in range(n):
                target = scores[x, inputs.targets[x]]
                others = torch.cat(
                    [scores[x, : inputs.targets[x]], scores[x, inputs.targets[x] + 1 :]]
                )
                error += float(inputs.probs[x]) * float(not bool(target > others.max()))
            out[s, a] = error
    return out


def test_fast_heads_match_explicit_memories():
    layouts = [HeadsLayout(1, 16), HeadsLayout(2, 8), HeadsLayout(3, 7), HeadsLayout(4, 5)]
    inputs = trial()
    errors, head = superposition_errors(inputs, layouts)
    assert errors.shape == (4, 2, 5) and (head <= errors + 1e-15).all()
    for i, layout in enumerate(layouts):
        np.testing.assert_allclose(errors[i].numpy(), naive_errors(inputs, layout), atol=1e-12)


def test_one_head_is_one_memory_and_routes_partition_the_weights():
    errors, _ = superposition_errors(trial(), [HeadsLayout(1, 12)])
    assert (errors[0] == errors[0, :, :1]).all()  # every arrangement is the single memory
    probs = zipf_probabilities(N, 2.0)
    q = scheme_weights("population", probs, 32)
    bands = band_route(q, probs, 4)
    assert bands.tolist() == [x * 4 // N for x in range(N)]  # contiguous frequency bands
    threshold = scheme_weights("threshold:P=d/8", probs, 64)  # the 8 most frequent stored
    assert band_route(threshold, probs, 4)[:8].tolist() == [0, 0, 1, 1, 2, 2, 3, 3]
    routed = routes(q, probs, 4, seed=0, trial=3)
    assert torch.bincount(routed["random"], minlength=4).tolist() == [10] * 4  # balanced
    for assignment in ("band", "random"):
        weights = head_weights(q, routed[assignment], 4, assignment)
        assert torch.equal(weights.sum(0), q) and ((weights > 0).sum(0) == 1).all()


def test_a_trial_does_not_depend_on_its_companions():
    alone, _ = superposition_errors(trial(index=5), [HeadsLayout(2, 8)])
    with_more, _ = superposition_errors(trial(index=5), [HeadsLayout(4, 16), HeadsLayout(2, 8)])
    assert torch.equal(alone[0], with_more[1])
    again, _ = superposition_errors(trial(index=5), [HeadsLayout(2, 8)])
    other, _ = superposition_errors(trial(index=6), [HeadsLayout(2, 8)])
    assert torch.equal(alone, again) and not torch.equal(alone, other)


def test_budgets_give_the_stated_sizes():
    n, m = 1000, 5
    assert [budget_head_dim(256, h, "width", n, m) for h in (1, 2, 4, 8)] == [256, 128, 64, 32]
    assert [budget_head_dim(256, h, "matrix", n, m) for h in (2, 4, 8)] == [181, 128, 91]
    for heads in (2, 4, 8):
        d_h = budget_head_dim(512, heads, "total", n, m)
        target = 512**2 + (n + m) * 512

        def total(k: int, heads: int = heads) -> int:
            return heads_parameter_counts(heads, k, n, m).total

        assert abs(total(d_h) - target) <= min(
            abs(total(d_h - 1) - target), abs(total(d_h + 1) - target)
        )
    counts = heads_parameter_counts(4, 64, n, m)
    assert (counts.width, counts.matrix, counts.embeddings) == (256, 4 * 64**2, 4 * 1005 * 64)
    assert set(BUDGETS) == {"width", "matrix", "total"}


def test_summed_heads_add_signals_and_interference_variances():
    """Monte Carlo of the building block of the theory: over fresh embeddings, the summed score
    of a wrong class has variance H × the exact per-head variance
    Σ_{x' ≠ x} q(x')² E[G²_{y f(x')}]/d_h + q(x)² E[G²_{y f(x)}](1 + 2/d_h), with
    E[G²] = 1 on the diagonal and 1/d_h off it (unit rows), and the correct score has mean H q(x).
    400 trials: the variance ratio averaged over 160 (x, y) pairs has a Monte Carlo error of a
    few percent; tolerance 10 %."""
    n, heads, d, trials = 40, 4, 16, 400
    probs, targets = zipf_probabilities(n, 2.0), mod_targets(n, M)
    q = (probs / probs.max()).to(torch.float64)
    gen = torch.Generator().manual_seed(0)
    E = torch.randn(trials, heads, n, d, generator=gen, dtype=torch.float64) / math.sqrt(d)
    U = torch.randn(trials, heads, M, d, generator=gen, dtype=torch.float64)
    U = U / U.norm(dim=-1, keepdim=True)
    stored = q[:, None] * F.one_hot(targets, M).to(torch.float64)  # diag(q) F: (N, M)
    totals = (E @ (E.transpose(-1, -2) @ stored) @ (U @ U.transpose(-1, -2))).sum(1)  # (T, N, M)
    same = F.one_hot(targets, M).to(torch.float64)  # (N, M): f(x') = y
    second = same + (1 - same) / d  # E[G²_{y f(x')}] for unit rows in R^d
    every = (q**2 @ second)[None, :].expand(n, M) / d  # Σ_{x'} q(x')² E[G²]/d, x' = x included
    own = q[:, None] ** 2 * second  # (N, M): the x' = x term, whose |e_x|⁴ has mean 1 + 2/d
    exact = heads * (every - own / d + own * (1 + 2 / d))
    wrong = ~same.bool()
    ratio = (totals.var(0) / exact)[wrong]
    assert abs(float(ratio.mean()) - 1) < 0.1
    signal = totals.mean(0).gather(1, targets[:, None])[:, 0] / (heads * q)
    assert abs(float(signal[:5].mean()) - 1) < 0.05  # the most frequent: signal ≫ noise


def test_vectorised_margin_model_matches_the_quadrature_of_predict():
    probs, targets = zipf_probabilities(1000, 2.0).numpy(), mod_targets(1000, M).numpy()
    law = EmbeddingLaw("gaussian", "spherical")
    for dim in (16, 256):
        for q in (probs, (np.arange(1000) < dim / 8).astype(float)):
            fast = probs @ (1 - retrieval_probability(q, targets, M, dim, 1 / dim))
            reference = probs @ (1 - token_success(q, targets, M, dim, law))
            assert fast == pytest.approx(reference, rel=0.02)


def test_theory_structure():
    """Same scheme, one head = one memory; routed and summed heads: the routing does not enter;
    summing routed heads costs the H-fold signal-to-noise of one memory of width d_h."""
    args = (1000, 5, 2.0, "threshold:P=d/8")
    assert predict_superposition(*args, "same", 1, 256) == predict_superposition(
        *args, "band", 1, 256
    )
    assert predict_superposition(*args, "band", 8, 32) == predict_superposition(
        *args, "random", 8, 32
    )
    same = predict_superposition(*args, "same", 8, 32)
    assert predict_superposition(*args, "random", 8, 32) > 5 * same
    assert predict_superposition(*args, "random-gated", 8, 32) < 2 * same


@pytest.mark.slow
def test_prediction_tracks_the_measurement():
    """60 trials at N = 1000, d = 256: the Gaussian-margin prediction within 20 % of the mean
    (the Monte Carlo standard error of these means is below 5 %)."""
    probs, targets = zipf_probabilities(1000, 2.0), mod_targets(1000, M)
    layouts = [HeadsLayout(1, 256), HeadsLayout(4, 64)]
    arrangements = ("same", "band-gated")
    errors = torch.stack(
        [
            superposition_errors(
                HeadsTrial(probs, targets, M, ("threshold:P=d/8",), arrangements, 0, t), layouts
            )[0]
            for t in range(60)
        ]
    ).mean(0)
    for i, layout in enumerate(layouts):
        for a, arrangement in enumerate(arrangements):
            predicted = predict_superposition(
                1000, M, 2.0, "threshold:P=d/8", arrangement, layout.heads, layout.head_dim
            )
            assert predicted == pytest.approx(float(errors[i, 0, a]), rel=0.2)


class Reference(torch.nn.Module):
    """H matrices learned by autograd on the summed logits, E and U fixed."""

    def __init__(self, draws: dict[str, torch.Tensor]) -> None:
        super().__init__()
        self.E, self.U = draws["E"], draws["U"]
        self.W = torch.nn.ParameterList(torch.nn.Parameter(w.clone()) for w in draws["W"])

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return sum(self.E[h][tokens] @ w.T @ self.U[h].T for h, w in enumerate(self.W))


@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
def test_batched_trainer_matches_autograd(optimizer: str):
    setting = HeadsTraining(30, M, 2.0, 3, 6, 96, 8, optimizer, dtype=torch.float64)
    lr = 0.5
    (result,) = train_heads(setting, [4], [lr])
    draws = draw_heads(setting, 4)
    model = Reference(draws)
    groups = [{"params": [w], "lr": lr * setting.lr_factor()} for w in model.W]
    optim = (
        torch.optim.SGD(groups)
        if optimizer == "sgd"
        else torch.optim.Adam(groups, betas=(0.0, 0.0), eps=1e-8)
    )
    targets = mod_targets(30, M)
    for t in range(setting.steps):
        batch = draws["tokens"][t * 8 : (t + 1) * 8]
        optim.zero_grad()
        F.cross_entropy(model(batch), targets[batch]).backward()
        optim.step()
    expected = torch.stack([w.detach() for w in model.W])
    torch.testing.assert_close(result.W, expected, rtol=1e-9, atol=1e-11)
    assert optimizer == "sgd" or setting.lr_factor() == pytest.approx(1 / 6)


def test_trained_runs_do_not_depend_on_their_batch():
    setting = HeadsTraining(60, M, 2.0, 2, 8, 256, 16, "adam")
    (alone,) = train_heads(setting, [1], [2.0])
    batch = train_heads(setting, [0, 1, 1], [2.0, 2.0, 20.0])
    assert alone.error == batch[1].error and torch.equal(alone.W, batch[1].W)
    assert torch.equal(alone.participation, batch[1].participation)
    assert not torch.equal(alone.W, batch[0].W)


def test_participation_ratio_counts_the_heads_that_carry_a_token():
    targets = torch.tensor([0, 1])
    scores = torch.zeros(4, 2, 3)  # (H, N, M)
    scores[0, 0, 0] = 1.0  # token 0: only head 0 carries it
    scores[:, 1, 1] = 2.0  # token 1: every head equally
    ratio = participation_ratio(scores, targets)
    torch.testing.assert_close(ratio, torch.tensor([1.0, 4.0], dtype=torch.float64))
    assert participation_ratio(torch.zeros(1, 2, 3), targets).tolist() == [1.0, 1.0]


def test_the_kinds_name_what_the_science_allows():
    assert BUDGETS == theory.BUDGETS and set(HEAD_OPTIMIZERS) <= set(OPTIMIZERS)  # registry names
    assert build_superposition({}).arrangements == kernel.ARRANGEMENTS


def test_bad_points_are_one_line_errors():
    for values, field in (
        ({"dims": []}, "dims"),
        ({"budgets": ["depth"]}, "budgets"),
        ({"schemes": ["empirical"]}, "schemes"),
        ({"arrangements": ["same", "same"]}, "arrangements"),
        ({"trials": 3}, "trials"),
        ({"dims": [10**6], "memory_gb": 0.01}, "memory_gb"),
    ):
        with pytest.raises(ValueError, match=f"^{field}:"):
            build_superposition(values)
    for values, field in (
        ({"optimizer": "nesterov"}, "optimizer"),
        ({"budget": ["width"]}, "budget"),
        ({"batch_size": 512, "n_samples": 256}, "batch_size"),
        ({"dim": 10**6, "memory_gb": 0.5}, "memory_gb"),
    ):
        with pytest.raises(ValueError, match=f"^{field}:"):
            build_heads_train(values)


TINY = {
    "dims": [64, 256],
    "heads": [1, 2, 4, 8],
    "trials": 3,
    "seeds": 1,
    "lr": [10.0],
    "n_samples": 2048,
}


@pytest.fixture(scope="module")
def tiny() -> types.SimpleNamespace:
    result = run_study("superposition", settings=TINY)
    return types.SimpleNamespace(**result.frames)


def _judge(claim_id: str, frames: types.SimpleNamespace) -> bool | None:
    return CLAIMS[claim_id](frames, "quick").passed


def _changed(frames: types.SimpleNamespace, **tables: pd.DataFrame) -> types.SimpleNamespace:
    return types.SimpleNamespace(**{**vars(frames), **tables})


def _scaled(frame: pd.DataFrame, factor: np.ndarray | float, **where: object) -> pd.DataFrame:
    out = frame.copy()
    mask = np.ones(len(out), dtype=bool)
    for column, value in where.items():
        mask &= (out[column] == value).to_numpy()
    out.loc[mask, "error"] = out.loc[mask, "error"] * (
        factor[mask] if isinstance(factor, np.ndarray) else factor
    )
    return out


def test_every_claim_can_fail(tiny: types.SimpleNamespace):
    closed, trained = tiny.superposition, tiny.superposition_trained
    assert all(_judge(c, tiny) is not None for c in CLAIMS)  # measurable on the tiny records
    falsified = {
        "superposition-1": _scaled(closed, 2.0, budget="width", arrangement="same", heads=2),
        "superposition-2": _scaled(
            closed, closed["heads"].to_numpy(float) ** 0.5, budget="matrix", arrangement="same"
        ),
        "superposition-4": _scaled(closed, 3.0),
        "superposition-5": _scaled(
            closed, closed["dim"].to_numpy(float) ** 0.5, budget="width", heads=2
        ),
    }
    same = closed[closed["arrangement"] == "same"].set_index(
        ["alpha", "scheme", "budget", "heads", "dim", "trial"]
    )["error"]
    keys = pd.MultiIndex.from_frame(closed[["alpha", "scheme", "budget", "heads", "dim", "trial"]])
    as_same = closed.assign(error=same.reindex(keys).to_numpy())
    routed = closed["arrangement"].isin(["band", "random"]).to_numpy()
    falsified["superposition-3"] = closed.assign(
        error=np.where(routed, as_same["error"], closed["error"])
    )
    gated = (closed["arrangement"] == "random-gated").to_numpy()
    falsified["superposition-7"] = closed.assign(
        error=np.where(gated, as_same["error"] + 0.01, closed["error"])
    )
    for claim_id, frame in falsified.items():
        assert _judge(claim_id, _changed(tiny, superposition=frame)) is False, claim_id
    as_routed = trained.assign(participation=trained["routed"])
    assert _judge("superposition-6", _changed(tiny, superposition_trained=as_routed)) is False


def test_a_claim_without_its_records_is_not_judged(tiny: types.SimpleNamespace):
    small = tiny.superposition[tiny.superposition["dim"] != 256]
    claim = CLAIMS["superposition-2"](_changed(tiny, superposition=small), "quick")
    assert claim.passed is None and "not measurable" in claim.note


def test_command_json_and_bad_options(capsys: pytest.CaptureFixture[str]):
    args = ["superposition", "--dims", "16", "32", "--heads", "1", "2", "--trials", "2",
            "--seeds", "1", "--lr", "1", "--n-samples", "512", "--dim", "32"]  # fmt: skip
    assert main([*args, "--format", "json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["experiment"] == "beyond-superposition"
    assert {c["id"] for c in payload["claims"]} == set(CLAIMS)
    assert all(c["passed"] is None for c in payload["claims"])  # changed settings: not judged
    rows = payload["records"]["superposition"]
    assert {r["dim"] for r in rows} == {16, 32} and {r["heads"] for r in rows} == {1, 2}
    assert len(payload["records"]["superposition_trained"]) == 2 * 2  # H × optimiser (one lr)
    for bad in (["--budgets", "depth"], ["--schemes", "empirical"], ["--dims", "0"]):
        assert main(["superposition", *bad]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("assocmem: error:"), err


@pytest.mark.parametrize("scheme", ["threshold:P=0", "threshold:P=5000"])
def test_a_fixed_threshold_outside_one_to_n_is_refused(scheme):
    with pytest.raises(ConfigError, match="^schemes: "):
        build_superposition({"schemes": [scheme], "dims": [16]})


def test_superposition_1_is_judged_where_one_memory_has_no_error():
    """Thresholding with every token stored: no error at H = 1 or 2, a gap of 0, judged."""
    rows = [
        dict(alpha=2.0, scheme="threshold:P=d/8", heads=heads, dim=256, head_dim=256 // heads,
             budget="width", arrangement="same", trial=trial, status="ok", error=0.0)
        for trial in range(3)
        for heads in (1, 2)
    ]  # fmt: skip
    claim = CLAIMS["superposition-1"](
        types.SimpleNamespace(superposition=pd.DataFrame(rows)), "quick"
    )
    assert claim.passed is True

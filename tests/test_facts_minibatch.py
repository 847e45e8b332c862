"""Minibatch training of the factual-recall memories (issue 37, criterion 2b: the N = M = 10⁴,
d = 512 run): the accuracy it measures is that of the full scores, it is deterministic, it
learns, and bad settings name their field."""

import math

import pytest
import torch

from assocmem import rng
from assocmem.config.errors import ConfigError
from assocmem.studies.facts.capacity import bits_per_parameter, facts_problem
from assocmem.studies.facts.memories import init_params, logits_and_grads
from assocmem.studies.facts.minibatch import EVAL_BLOCK, memory_accuracy, minibatch_facts
from assocmem.training.trainer import accuracy


@pytest.mark.parametrize("model", ["linear", "mlp"])
def test_blocked_accuracy_is_that_of_the_full_scores(model):
    """memory_accuracy (blocks of EVAL_BLOCK inputs, one run at a time) against the strict
    top-1 of the whole (R, N, M) scores of logits_and_grads, on outer-product parameters
    (W = Σ_x u_f*(x) e_xᵀ; the MLP's W_out likewise on its hidden features): partly right."""
    n = EVAL_BLOCK + 300  # two blocks, the second partial
    E, U, targets = facts_problem(n, 64, 2, seed=5)
    params = init_params(model, 2, 64, rng.generator(0, "init"))
    stored = U[:, targets].transpose(1, 2)  # (R, d, N): u_f*(x) for each x
    if model == "linear":
        params["W"] = stored @ E
    else:
        params["W_out"] = stored @ (E @ params["W_in"].transpose(1, 2)).clamp(min=0)
    logits, _ = logits_and_grads(model, params, E, U, targets)
    expected = accuracy(logits, targets)
    assert float(expected.min()) > 0.0 and float(expected.max()) < 1.0  # a discriminating case
    torch.testing.assert_close(memory_accuracy(model, params, E, U, targets), expected)


def test_minibatch_training_stores_small_problems():
    """N = M = 200 facts at d = 64 (a third of the full-batch capacity, N* ≈ 600 at d = 64),
    sign-Adam lr 0.03, B = 50 facts a step: every fact is retrieved (top-1 accuracy 1) within
    400 steps (measured: at step 300), from 0 at the start; the bits are those of
    bits_per_parameter at that accuracy (log₂ N! / d² = 0.30 per trained parameter). Same
    seed, same result; a 40-step budget stops short of it."""
    run = dict(lr=0.03, batch_size=50, eval_every=20, tau=1.0, seed=0)
    result = minibatch_facts(200, 64, max_steps=400, **run)
    assert result.stopped == "reached" and result.accuracy == 1.0 and result.steps < 400
    assert result.curve[0] == (0, 0.0) and 0.0 < result.curve[1][1] < 1.0
    assert result.bits == bits_per_parameter("linear", 64, 200, 1.0)
    log2_permutations = math.lgamma(201) / math.log(2)  # log₂ 200!: f* is a permutation
    assert result.bits["bits_per_parameter"] == pytest.approx(log2_permutations / 64**2)
    assert minibatch_facts(200, 64, max_steps=400, **run) == result
    short = minibatch_facts(200, 64, max_steps=40, **run)
    assert short.stopped == "budget" and short.steps == 40 and short.accuracy < 1.0
    assert short.curve == result.curve[:3]  # the same steps, stopped earlier


@pytest.mark.parametrize(
    ("field", "options"),
    [
        ("batch_size", {"batch_size": 0}),
        ("lr", {"lr": 0.0}),
        ("tau", {"tau": 1.5}),
        ("model", {"model": "conv"}),
        ("optimizer", {"optimizer": "lbfgs"}),
        ("eval_every", {"eval_every": 0}),
        ("device", {"device": "tpu"}),
    ],
)
def test_bad_settings_name_their_field(field, options):
    with pytest.raises(ConfigError, match=f"^{field}: "):
        minibatch_facts(20, 8, **options)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_minibatch_training_on_cuda_is_deterministic_and_agrees_with_cpu():
    """The small problem above on CUDA: the same facts and batches (drawn on the CPU), so the
    same result up to float32 rounding (the accuracy curve within a few facts of N = 200);
    twice on CUDA, identical."""
    run = dict(lr=0.03, batch_size=50, eval_every=20, tau=1.0, seed=0, max_steps=400)
    on_cuda = minibatch_facts(200, 64, device="cuda", **run)
    assert minibatch_facts(200, 64, device="cuda", **run) == on_cuda
    cpu = minibatch_facts(200, 64, **run)
    for (s_gpu, a_gpu), (s_cpu, a_cpu) in zip(on_cuda.curve, cpu.curve, strict=False):
        assert s_gpu == s_cpu and abs(a_gpu - a_cpu) <= 5 / 200

"""The memory interface and the one trainer (issue 49): every registered memory's scores and
written gradients against autograd, the trainer against torch.optim one run at a time, the stop
rules, and a memory registered from a user's module trained with no other file touched."""

import importlib
import sys
import textwrap

import pytest
import torch
import torch.nn.functional as F
from dispatches import dispatches

from assocmem.training.memories import MEMORIES, AbstractMemory, Batch, KeyValueMemory
from assocmem.training.optimizers import OPTIMIZERS
from assocmem.training.stop import (
    AnyOf,
    BestGroupMean,
    Converged,
    GiveUp,
    Mean,
    PerRun,
    Reading,
    Steps,
    TargetAccuracy,
)
from assocmem.training.trainer import FullBatch, Minibatches, Stream, accuracy, train

N, M, D, R = 10, 4, 6, 3


def _fixed(dtype=torch.float32, seed=0):
    gen = torch.Generator().manual_seed(seed)
    E = torch.randn(R, N, D, generator=gen, dtype=dtype)
    U = torch.randn(R, M, D, generator=gen, dtype=dtype)
    W = torch.randn(R, D, D, generator=gen, dtype=dtype) / D**0.5
    return {"E": E, "U": U, "W": W}


TARGETS = torch.arange(N) % M
MEMORY_CASES = {
    "matrix": lambda: MEMORIES["matrix"](),
    "mlp": lambda: MEMORIES["mlp"](width=5),
    "relu": lambda: MEMORIES["relu"](),
    "learned": lambda: MEMORIES["learned"](layer_norm=True),
}


def _state(memory, dtype=torch.float64):
    fixed = _fixed(dtype)
    state = {**fixed, **memory.init(fixed, torch.Generator().manual_seed(1))}
    gen = torch.Generator().manual_seed(2)
    for name in memory.learned:  # away from W = 0, where every gradient is simple
        state[name] = (state[name] + 0.3 * torch.randn(state[name].shape, generator=gen)).to(dtype)
    return state


def test_every_registered_memory_is_in_the_cases():
    assert set(MEMORY_CASES) <= set(MEMORIES)


@pytest.mark.parametrize("name", MEMORY_CASES)
@pytest.mark.parametrize("rows", [None, 7])
def test_gradients_are_those_of_each_runs_mean_cross_entropy(name, rows):
    """Each memory's gradients (written out or autograd) against a naive per-run loss."""
    memory = MEMORY_CASES[name]()
    state = _state(memory)
    tokens = None if rows is None else torch.randint(N, (R, rows), generator=torch.Generator())
    targets = TARGETS if tokens is None else TARGETS[tokens]
    scores, grads = memory.gradients(state, Batch(targets, tokens))
    assert scores.shape == (R, N if rows is None else rows, M)
    assert set(grads) == set(memory.learned)
    for r in range(R):
        leaves = {k: v[r : r + 1].clone().requires_grad_(True) for k, v in state.items()}
        toks = None if tokens is None else tokens[r : r + 1]
        loss = F.cross_entropy(
            memory.scores(leaves, toks)[0], targets if toks is None else targets[r]
        )
        loss.backward()
        for k in memory.learned:
            torch.testing.assert_close(grads[k][r], leaves[k].grad[0], rtol=1e-10, atol=1e-12)


def test_key_value_width_is_a_parameter():
    fixed = _fixed()
    state = KeyValueMemory(width=9).init(fixed, torch.Generator().manual_seed(0))
    assert state["W_in"].shape == (R, 9, D) and state["W_out"].shape == (R, D, 9)
    assert (
        KeyValueMemory().trained_parameters(8) == 64 == MEMORIES["matrix"]().trained_parameters(8)
    )


def test_matrix_closed_form_is_the_outer_product_sum():
    fixed, q = _fixed(torch.float64), torch.rand(R, N, dtype=torch.float64)
    W = MEMORIES["matrix"]().closed_form(fixed, TARGETS, q)["W"]
    for r in range(R):
        expected = sum(
            q[r, x] * torch.outer(fixed["U"][r, TARGETS[x]], fixed["E"][r, x]) for x in range(N)
        )
        torch.testing.assert_close(W[r], expected)


def _torch_reference(memory, fixed, optimizer, lr, steps, batches):
    """One run at a time: autograd and the torch.optim counterpart; batches[k]: rows or None."""
    init = memory.init(fixed, torch.Generator().manual_seed(1))
    finals = []
    for r in range(R):
        params = {k: torch.nn.Parameter(v[r : r + 1].clone()) for k, v in init.items()}
        state = {k: v[r : r + 1] for k, v in fixed.items()}
        opt = optimizer.torch_optimizer([{"params": list(params.values()), "lr": float(lr[r])}])
        for k in range(steps):
            rows = batches[k]
            tokens = None if rows is None else rows[None]
            scores = memory.scores({**state, **params}, tokens)[0]
            loss = F.cross_entropy(scores, TARGETS if rows is None else TARGETS[rows])
            opt.zero_grad()
            loss.backward()
            opt.step()
        finals.append({k: v.detach()[0] for k, v in params.items()})
    return finals


@pytest.mark.parametrize("name", MEMORY_CASES)
@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
@pytest.mark.parametrize("batch_size", [None, 4])
def test_trainer_matches_torch_optim_one_run_at_a_time(name, optimizer, batch_size):
    """float64: the paper's sign-like Adam (betas (0, 0)) turns rounding into steps in float32."""
    memory, fixed = MEMORY_CASES[name](), _fixed(torch.float64)
    if name == "matrix" or name == "mlp":
        fixed = {k: v for k, v in fixed.items() if k != "W"}
    opt = OPTIMIZERS[optimizer]()
    lr = torch.tensor([0.05, 0.1, 0.2], dtype=torch.float64)
    steps = 12
    if batch_size is None:
        data, batches = FullBatch(TARGETS), [None] * steps
    else:
        data = Minibatches(TARGETS, batch_size, torch.Generator().manual_seed(3), R)
        gen = torch.Generator().manual_seed(3)
        batches = [torch.randint(N, (batch_size,), generator=gen) for _ in range(steps)]
    result = train(memory, data, fixed=fixed, optimizer=opt, lr=lr, stop=Steps(steps),
                   generator=torch.Generator().manual_seed(1), every=5)  # fmt: skip
    assert result.steps == steps and result.reasons == ("budget",) * R
    assert [reading.steps for reading in result.curve] == [0, 5, 10, 12]
    expected = _torch_reference(memory, fixed, opt, lr, steps, batches)
    for r in range(R):
        for k in memory.learned:
            torch.testing.assert_close(result.state[k][r], expected[r][k], rtol=1e-9, atol=1e-9)


def test_per_run_stops_freeze_each_run_where_it_stopped():
    """With a per-run target, each run stops at its own step and keeps that state: the state a
    run trained alone for that many steps ends with."""
    memory, fixed = MEMORIES["matrix"](), _fixed()
    del fixed["W"]
    lr = torch.tensor([0.01, 0.3, 3.0])
    rule = AnyOf(TargetAccuracy(0.7, PerRun()), Steps(200))
    opt = OPTIMIZERS["sgd"]()
    result = train(memory, FullBatch(TARGETS), fixed=fixed, optimizer=opt, lr=lr, stop=rule)
    steps = result.run_steps.tolist()
    assert len(set(steps)) > 1, steps  # the rates reach the target at different steps
    for r in range(R):
        alone = train(memory, FullBatch(TARGETS), fixed={k: v[r : r + 1] for k, v in fixed.items()},
                      optimizer=opt, lr=lr[r : r + 1], stop=Steps(steps[r]))  # fmt: skip
        torch.testing.assert_close(result.state["W"][r], alone.state["W"][0])
        reached = result.accuracy[r] >= 0.7
        assert result.reasons[r] == ("reached" if reached else "budget")


def test_give_up_is_the_linear_extrapolation_of_the_last_window():
    rule = GiveUp(tau=0.9, window=10, max_steps=100, statistic=Mean())
    rule.start()
    said = []
    for k, mean in [(5, 0.1), (10, 0.2), (20, 0.3), (30, 0.35)]:
        stopped = rule.stops(Reading(k, torch.tensor([mean], dtype=torch.float64)))
        said.append(stopped is not None and bool(stopped[0]))
    # at 10: 0.2 + 0.02·90 ≥ 0.9; at 20: 0.3 + 0.01·80 ≥ 0.9; at 30: 0.35 + 0.005·70 < 0.9
    assert said == [False, False, False, True]


def test_best_group_mean_reads_the_best_rate():
    values = torch.tensor([0.1, 0.3, 0.9, 0.7], dtype=torch.float64)
    assert BestGroupMean(2)(values).tolist() == [0.8]


def test_converged_stops_once_the_loss_is_flat():
    memory, fixed = MEMORIES["matrix"](), _fixed()
    del fixed["W"]
    rule = AnyOf(Converged(tolerance=1e-4, window=20), Steps(5000))
    decayed = OPTIMIZERS["sgd"](weight_decay=0.05)  # a minimum the loss converges to
    result = train(memory, FullBatch(TARGETS), fixed=fixed, optimizer=decayed,
                   lr=torch.full((R,), 0.5), stop=rule, every=10)  # fmt: skip
    assert result.stopped == "converged" and 40 < result.steps < 5000
    losses = [float(reading.loss.mean()) for reading in result.curve]
    assert abs(losses[-1] - losses[-3]) <= 1e-4 * abs(losses[-3])
    assert abs(losses[-2] - losses[-4]) > 1e-4 * abs(losses[-4])  # not one evaluation earlier


TOY_MODULE = '''
"""A toy sequence memory: scores u_yᵀ W (mean over t of e_{x_t})."""
import torch
from assocmem.training.memories import AbstractMemory, register_memory


@register_memory
class BagOfTokens(AbstractMemory):
    name = "toy_bag_of_tokens"
    learned = ("W",)

    def init(self, fixed, generator):
        runs, _, dim = fixed["E"].shape
        return {"W": fixed["E"].new_zeros(runs, dim, dim)}

    def scores(self, state, tokens):
        E = state["E"]
        if tokens is None:
            tokens = torch.arange(E.shape[1]).expand(E.shape[0], -1)[:, :, None]
        runs, batch, length = tokens.shape
        rows = torch.gather(E, 1, tokens.reshape(runs, -1, 1).expand(-1, -1, E.shape[2]))
        bag = rows.view(runs, batch, length, -1).mean(2)  # (R, B, d)
        return bag @ (state["U"] @ state["W"]).transpose(1, 2)  # (R, B, M)
'''


def test_a_memory_from_a_users_module_trains_on_sequences_and_in_a_sweep(tmp_path, monkeypatch):
    """A memory defined and registered in a temporary module, trained by the public trainer on
    sequences (R, B, T) of a stream, with gradients by autograd, then swept (the ``memory`` run
    kind: two rates × two seeds, stored and read back): no other file touched."""
    from assocmem.sweep.execute import run_sweep
    from assocmem.sweep.results import load_results
    from assocmem.sweep.spec import parse_spec

    (tmp_path / "toy_memory_49.py").write_text(textwrap.dedent(TOY_MODULE), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("toy_memory_49")
    try:
        memory = MEMORIES["toy_bag_of_tokens"]()
        assert isinstance(memory, AbstractMemory)
        fixed = {k: v for k, v in _fixed(seed=4).items() if k != "W"}
        gen = torch.Generator().manual_seed(5)

        def draw(step):  # sequences of one token repeated and a random other: f*(first token)
            first = torch.randint(N, (R, 8, 1), generator=gen)
            tokens = torch.cat([first, first, torch.randint(N, (R, 8, 1), generator=gen)], 2)
            return Batch(TARGETS[tokens[:, :, 0]], tokens)

        rule = AnyOf(TargetAccuracy(0.99), Steps(400))
        result = train(memory, Stream(TARGETS, draw), fixed=fixed,
                       optimizer=OPTIMIZERS["adam"](), lr=torch.full((R,), 0.05), stop=rule,
                       every=20)  # fmt: skip
        assert result.curve[0].accuracy.mean() < 0.5 < result.curve[-1].accuracy.mean()

        spec = parse_spec({
            "name": "toy", "kind": "memory", "seeds": [0, 1],
            "base": {"memory": "toy_bag_of_tokens", "n_inputs": 12, "n_outputs": 4, "dim": 8,
                     "max_steps": 150},
            "axes": {"lr": [1e-4, 0.05]},
        })  # fmt: skip
        db = tmp_path / "toy.db"
        run_sweep(spec, db)
        df = load_results(db, kind="memory").sort_values(["lr", "seed"])
        assert list(df["status"]) == ["ok"] * 4
        assert (df["accuracy"].to_numpy()[2:] == 1.0).all()  # lr 0.05 stores every input
        assert (df["accuracy"].to_numpy()[:2] < 1.0).all() and (df["steps"][:2] == 150).all()
    finally:
        sys.modules.pop(module.__name__, None)
        MEMORIES.pop("toy_bag_of_tokens", None)


def test_accuracy_counts_ties_as_errors():
    scores = torch.tensor([[[1.0, 1.0], [2.0, 0.0]]])
    assert accuracy(scores, torch.tensor([0, 0])).tolist() == [0.5]


def test_heads_gradient_is_autograds_of_the_summed_scores():
    heads = MEMORIES["heads"]()
    gen = torch.Generator().manual_seed(6)
    state = {
        "E": torch.randn(R, 2, N, D, generator=gen, dtype=torch.float64),
        "U": torch.randn(R, 2, M, D, generator=gen, dtype=torch.float64),
        "W": torch.randn(R, 2, D, D, generator=gen, dtype=torch.float64),
    }
    tokens = torch.randint(N, (R, 5), generator=gen)
    batch = Batch(TARGETS[tokens], tokens)
    scores, grads = heads.gradients(state, batch)
    auto_scores, auto_grads = AbstractMemory.gradients(heads, state, batch)  # by autograd
    torch.testing.assert_close(scores, auto_scores)
    torch.testing.assert_close(grads["W"], auto_grads["W"], rtol=1e-10, atol=1e-12)
    naive = sum(state["E"][:, h] @ state["W"][:, h].mT @ state["U"][:, h].mT for h in range(2))
    torch.testing.assert_close(heads.scores(state, None), naive)


@pytest.mark.parametrize("runs", [(), (R,)])
def test_series_and_hidden_first_gradients_are_autograds(runs):
    """The memories in series and the matrix memory formed hidden states first, with a run
    axis or none (one run), against the autograd default of the interface."""
    gen = torch.Generator().manual_seed(7)

    def draw(*shape):
        return torch.randn(*runs, *shape, generator=gen, dtype=torch.float64)

    tokens = torch.randint(N, (*runs, 6), generator=gen)
    batch = Batch(TARGETS[tokens], tokens)
    series = {"E": draw(N, D), "U": draw(M, D), "W1": draw(D, D), "keys": draw(3, D)}
    series |= {"values": draw(3, D), "W2": draw(D, D)}
    direct = {"E": draw(N, D), "U": draw(M, D), "W": draw(D, D)}
    for memory, state in ((MEMORIES["series"](), series), (MEMORIES["matrix"](True), direct)):
        scores, grads = memory.gradients(state, batch)
        if not runs:  # the interface's autograd reads a run axis
            state = {k: v[None] for k, v in state.items()}
            batch1 = Batch(batch.targets[None], tokens[None])
            grads = {k: v[None] for k, v in grads.items()}
            scores = scores[None]
        else:
            batch1 = batch
        auto_scores, auto_grads = AbstractMemory.gradients(memory, state, batch1)
        torch.testing.assert_close(scores, auto_scores)
        for name in memory.learned:
            torch.testing.assert_close(grads[name], auto_grads[name], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", MEMORY_CASES)
@pytest.mark.parametrize("optimizer", sorted(OPTIMIZERS))
def test_ops_per_step_do_not_grow_with_the_runs(name, optimizer):
    """Batched means batched: the trainer's torch dispatches for R = 2 and R = 7 runs of every
    registered memory × optimiser are the same (a loop over runs would multiply them)."""
    memory = MEMORY_CASES[name]()

    def training(runs):
        gen = torch.Generator().manual_seed(0)
        fixed = {"E": torch.randn(runs, N, D, generator=gen)}
        fixed |= {"U": torch.randn(runs, M, D, generator=gen)}
        fixed["W"] = torch.randn(runs, D, D, generator=gen)
        lr = torch.full((runs,), 0.1)
        rule = AnyOf(TargetAccuracy(1.1), GiveUp(1.1, 2, 1000), Steps(4))
        return lambda: train(memory, FullBatch(TARGETS), fixed=fixed,
                             optimizer=OPTIMIZERS[optimizer](), lr=lr, stop=rule)  # fmt: skip

    assert dispatches(training(2)) == dispatches(training(7))


def test_the_facts_memories_take_a_convergence_stop():
    """The facts study's train_memory with the trainer's convergence rule in place of the
    searches' rules (what a capacity search by convergence needs)."""
    from assocmem import rng
    from assocmem.studies.facts.capacity import facts_problem
    from assocmem.studies.facts.memories import TrainSettings, train_memory

    E, U, targets = facts_problem(30, 16, 2, 0)
    settings = TrainSettings(model="linear", optimizer="sgd", lr=5.0, max_steps=3000)
    rule = AnyOf(Converged(tolerance=0.02, window=20, statistic=Mean()), Steps(3000))
    result = train_memory(E, U, targets, rng.generator(0, "i"), tau=1.0, settings=settings,
                          stop=rule)  # fmt: skip
    assert result.stopped == "converged" and 20 < result.steps < 3000

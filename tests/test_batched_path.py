"""The batched path (the path CUDA runs), forced on CPU tensors.

- Its number of torch ops per step, and per evaluation, does not grow with the number of runs R
  of a group: counted with a TorchDispatchMode at R = 1 and R = 32 for every model × optimiser
  × layer norm of the authors' grid (``paper_training_grid``), with mini-batches and full batch.
- Its numbers are the per-run kernels' numbers up to float rounding (same law, other bits).
"""

import itertools
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest
import torch
from dispatches import OpCounter

from assocmem.ops.population import population_metrics
from assocmem.runtime import batched_path, uses_batched_path
from assocmem.studies.hierarchy.train import (
    BottleneckConfig,
    Trials,
    draw_trial,
    evaluate_trials,
    fit_trials,
    train_bottleneck,
)
from assocmem.studies.superposition.train import HeadsTraining, train_heads
from assocmem.sweep.spec import load_spec
from assocmem.training import TrainConfig, train
from assocmem.training.engine import run_group, stack_runs, step_weights, train_steps
from assocmem.training.kernels import AbstractKernel, DenseKernel, RunInputs, select_kernel
from assocmem.training.memorize import AdamSettings, memorize
from assocmem.training.optimizers.adam import Adam
from assocmem.training.optimizers.base import StepClock
from assocmem.training.records import Recorder
from assocmem.training.task import Task
from assocmem.training.trajectories import share_trajectories, trajectory_key


def grid_combinations() -> list[tuple[str, str, bool]]:
    """model × optimizer × layer_norm of the shipped grid spec."""
    axes = load_spec("paper_training_grid").axes
    return list(itertools.product(axes["model"], axes["optimizer"], axes["layer_norm"]))


def group(runs: int, **fields: Any) -> list[TrainConfig]:
    base = {"n_inputs": 30, "dim": 12, "n_samples": 64, "batch_size": 8} | fields
    return [TrainConfig(seed=seed, lr=0.1 * (1 + seed % 4), **base) for seed in range(runs)]


def built_kernel(configs: list[TrainConfig]) -> tuple[AbstractKernel, Task, Any]:
    cfg = configs[0]
    task = Task.of(cfg)
    kernel_class = select_kernel(cfg)
    inputs = stack_runs(configs, w_product=kernel_class.w_product)
    if kernel_class.w_product:
        inputs.W = None
    return kernel_class(cfg, inputs, task.targets), task, inputs


def counted_ops(configs: list[TrainConfig]) -> dict[str, Counter[str]]:
    """Ops of two steps (after two warm-up steps) and of one evaluation of a group."""
    cfg = configs[0]
    kernel, task, inputs = built_kernel(configs)
    runs, B = len(configs), cfg.batch_size

    def span(t0: int, steps: int) -> tuple[torch.Tensor | None, torch.Tensor, torch.Tensor]:
        tokens = None
        if inputs.tokens is not None:
            tokens = inputs.tokens[:, t0 * B : (t0 + steps) * B].reshape(runs, steps, B)
        weights = step_weights(tokens, task.probs, runs, steps, B)
        return tokens, weights, inputs.lr[:, None].expand(-1, steps)

    kernel.advance(0, *span(0, 2))  # warm-up: optimiser slots and buffers are made once
    with OpCounter() as steps:
        kernel.advance(2, *span(2, 2))
    with OpCounter() as evaluation:
        population_metrics(kernel.logits(), task.targets, task.probs)
    return {"steps": steps.ops, "evaluation": evaluation.ops}


@pytest.mark.parametrize("full_batch", [False, True], ids=["minibatch", "full-batch"])
@pytest.mark.parametrize(("model", "optimizer", "layer_norm"), grid_combinations())
def test_ops_per_step_do_not_grow_with_runs(
    model: str, optimizer: str, layer_norm: bool, full_batch: bool
) -> None:
    fields = {"model": model, "optimizer": optimizer, "layer_norm": layer_norm}
    fields |= {"full_batch": True, "n_steps": 4} if full_batch else {}
    with batched_path():
        one, many = counted_ops(group(1, **fields)), counted_ops(group(32, **fields))
    assert sum(one["steps"].values()) > 0
    assert one["steps"] == many["steps"], many["steps"] - one["steps"]
    assert one["evaluation"] == many["evaluation"]


def test_per_run_path_grows_with_runs() -> None:
    """The counter sees the per-run loops the batched path removes (so the test can fail)."""
    fields = {"model": "matrix", "optimizer": "adam", "n_outputs": 12}  # M > 8: no compiled kernel
    one, many = counted_ops(group(1, **fields)), counted_ops(group(4, **fields))
    assert sum(many["steps"].values()) > sum(one["steps"].values())


def test_batched_path_switch() -> None:
    assert not uses_batched_path("cpu")
    with batched_path():
        assert uses_batched_path("cpu")
        assert not DenseKernel.supports(group(1, model="learned")[0])
    assert uses_batched_path("meta")  # any device but the CPU


@pytest.mark.parametrize(("model", "optimizer", "layer_norm"), grid_combinations())
def test_batched_path_agrees_with_per_run_kernels(
    model: str, optimizer: str, layer_norm: bool
) -> None:
    """Same runs, same law: a few steps' final logits agree to float rounding (2e-5 of their
    scale, the tolerance of the kernels' comparisons with autograd; sign-like steps amplify
    rounding over many steps, so few are taken)."""
    fields = {"model": model, "optimizer": optimizer, "layer_norm": layer_norm}
    configs = group(5, **fields, n_samples=64, batch_size=16)
    _, per_run = run_group(configs)
    with batched_path():
        results, batched = run_group(configs)
    assert all("compiled" not in r.kernel for r in results)
    scale = 1 + per_run.abs().max().item()
    assert (batched - per_run).abs().max().item() <= 2e-5 * scale


cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")


def cuda_group(model: str, optimizer: str, layer_norm: bool) -> list[TrainConfig]:
    fields = {"model": model, "optimizer": optimizer, "layer_norm": layer_norm, "device": "cuda"}
    return group(6, **fields, n_samples=256, batch_size=16)


@cuda
@pytest.mark.parametrize(("model", "optimizer", "layer_norm"), grid_combinations())
def test_cuda_graph_replay_is_bit_identical_to_eager(
    model: str, optimizer: str, layer_norm: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    configs = cuda_group(model, optimizer, layer_norm)
    _, replayed = run_group(configs)
    monkeypatch.setenv("ASSOCMEM_CUDA_GRAPHS", "0")
    _, eager = run_group(configs)
    assert torch.equal(replayed, eager)


@cuda
@pytest.mark.parametrize("model", ["matrix", "learned", "relu"])
@pytest.mark.parametrize("full_batch", [False, True])
def test_cuda_graph_replay_of_adam_with_momentum_is_bit_identical_to_eager(
    model: str, full_batch: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Adam(0.9, 0.999) reads t (its bias corrections): replayed, from a StepClock."""
    fields = {"model": model, "optimizer": Adam(betas=(0.9, 0.999)), "device": "cuda"}
    extra = {"full_batch": True, "n_steps": 40} if full_batch else {"n_samples": 256}
    configs = group(6, **fields, **extra, batch_size=16)
    _, replayed = run_group(configs)
    monkeypatch.setenv("ASSOCMEM_CUDA_GRAPHS", "0")
    _, eager = run_group(configs)
    assert torch.equal(replayed, eager)


def test_adam_under_a_step_clock_tracks_its_eager_steps() -> None:
    """On CPU tensors the clock's step (× float32 reciprocals, the rule off the CPU) stays within
    float32 rounding of the CPU's eager step (÷ the divisors) over 200 steps; a wrong or stale
    divisor (the clock not set, the two corrections swapped) moves it by far more."""
    adam = Adam(betas=(0.9, 0.999))
    clock = StepClock(adam, "cpu")
    gen = torch.Generator().manual_seed(0)
    start = torch.randn(3, 20, generator=gen)
    grads = torch.randn(200, 3, 20, generator=gen)
    lr = torch.tensor([0.1, 0.01, 0.001])
    eager, clocked = start.clone(), start.clone()
    slot_e: dict[str, torch.Tensor] = {}
    slot_c: dict[str, torch.Tensor] = {}
    for t in range(1, 201):
        adam.step(slot_e, eager, grads[t - 1], lr, t)
        clock.set(t)
        adam.step(slot_c, clocked, grads[t - 1], lr, clock)
    moved = (eager - start).abs()
    assert ((clocked - eager).abs() <= 1e-5 * moved + 1e-7).all()


def train_on(device: str, configs: list[TrainConfig]) -> torch.Tensor:
    """The final logits of a group trained on ``device`` from the CPU's draws of its runs (the
    same inputs on both devices: their random streams differ), (R, N, M) on the CPU."""
    cfg = replace(configs[0], device=device)
    kernel_class = select_kernel(cfg)
    drawn = stack_runs(configs, w_product=kernel_class.w_product)
    moved = {k: v.to(device) if isinstance(v, torch.Tensor) else v for k, v in vars(drawn).items()}
    inputs = RunInputs(**moved | {"W": None if kernel_class.w_product else moved["W"]})
    task = Task.of(cfg)
    kernel = kernel_class(cfg, inputs, task.targets)
    train_steps(kernel, cfg, inputs, task, Recorder(cfg, len(configs), task), None)
    return kernel.logits().cpu()


@cuda
@pytest.mark.parametrize(("model", "optimizer", "layer_norm"), grid_combinations())
def test_cuda_same_spec_same_numbers(model: str, optimizer: str, layer_norm: bool) -> None:
    """Same spec on the same card: the same bits; from the same draws, the CPU's batched path
    within float rounding (a few steps, as test_batched_path_agrees_with_per_run_kernels). The
    two devices draw different streams: across devices runs agree in law (the claims of
    ``reproduce --device cuda``)."""
    configs = cuda_group(model, optimizer, layer_norm)
    _, first = run_group(configs)
    _, second = run_group(configs)
    assert torch.equal(first, second)
    short = [replace(c, n_samples=64, device="cpu") for c in configs]
    with batched_path():
        on_cpu = train_on("cpu", short)
    on_cuda = train_on("cuda", short)
    scale = 1 + on_cpu.abs().max().item()
    assert (on_cuda - on_cpu).abs().max().item() <= 2e-5 * scale


def ops_of(run: Any, *, views: bool = True) -> int:
    """Ops dispatched by ``run()``; without ``views``, only those that are not views (a view
    only relabels memory: no kernel runs)."""
    with OpCounter() as counter:
        run()
    return sum(n for name, n in counter.ops.items() if views or name not in counter.views)


@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
def test_superposition_trainer_ops_per_step_do_not_grow_with_runs(optimizer: str) -> None:
    """The trainer of memories in parallel: ops of 8 more steps at R = 2 and R = 32 (the draws
    and the evaluation, one run at a time, are outside the difference). From R = 2 on: at R = 1
    its broadcast (R, H, ·, ·) products are views where more runs need a copy (one op a step
    more, whatever R)."""

    def per_steps(runs: int) -> int:
        def train(n_samples: int) -> Callable[[], Any]:
            setting = HeadsTraining(30, 5, 2.0, 2, 6, n_samples, 8, optimizer)
            return lambda: train_heads(setting, list(range(runs)), [0.1] * runs)

        return ops_of(train(128)) - ops_of(train(64))

    assert per_steps(2) == per_steps(32) > 0


def test_capacity_trainer_ops_do_not_grow_with_runs() -> None:
    """Full-batch memorisation (the trained capacity frontier): every op but views, at R = 1 and
    32 (a batched product of one run takes one view more a step than of many)."""
    targets = torch.arange(40) % 7

    def memorised(runs: int) -> Callable[[], Any]:
        E, U = torch.randn(runs, 40, 8), torch.randn(runs, 7, 8)
        settings = AdamSettings(max_steps=5, window=0)
        return lambda: memorize(E, U, targets, tau=1.1, settings=settings)

    assert ops_of(memorised(1), views=False) == ops_of(memorised(32), views=False)


@pytest.mark.parametrize(
    "fields",
    [
        {"model": "matrix", "optimizer": "adam"},
        {"model": "matrix", "optimizer": "sgd", "eval_every": 4},
        {"model": "learned", "optimizer": "adam", "layer_norm": True},
        {"model": "relu", "optimizer": "sgd", "snapshot_steps": (2, 12)},
        {"model": "matrix", "optimizer": "sgd", "layer_norm": True},
        {"model": "qupdate", "optimizer": "sgd"},
    ],
    ids=lambda f: "-".join(str(v) for v in f.values()),
)
def test_runs_that_differ_in_t_share_one_trajectory_exactly(fields: dict[str, Any]) -> None:
    """T ∈ {32, 96, 160} (4, 12, 20 steps) trained as one trajectory give the records of the
    runs trained alone, bit for bit on the CPU (and a T that is no multiple of B)."""
    base = {"n_inputs": 30, "dim": 12, "batch_size": 8} | fields
    configs = [
        TrainConfig(n_samples=t, seed=s, lr=lr, **base)
        for t in (160, 32, 101, 96)
        for s, lr in ((0, 0.5), (1, 2.0))
    ]
    assert len(share_trajectories(configs)[0]) == 2  # two trajectories: (seed, lr) pairs
    shared = train(configs)
    alone = [train([cfg])[0] for cfg in configs]
    assert [r.to_dict() for r in shared] == [r.to_dict() for r in alone]


def test_only_exact_families_share() -> None:
    one_pass = TrainConfig(n_inputs=30, dim=8, n_samples=64, batch_size=8)
    assert trajectory_key(one_pass) == trajectory_key(replace(one_pass, n_samples=640))
    assert trajectory_key(one_pass) != trajectory_key(replace(one_pass, seed=1))
    assert trajectory_key(replace(one_pass, label_noise=0.1)) is None
    assert trajectory_key(replace(one_pass, full_batch=True, n_steps=3)) is None


# ---------------------------------------------------------------- memories in series, trained

SERIES = BottleneckConfig(
    n_inputs=30, n_concepts=6, n_outputs=3, dim=16, n_samples=200, batch_size=8, n_steps=40
)


def series_trials(runs: int, n_steps: int) -> Trials:
    cfg = replace(SERIES, n_steps=n_steps)
    return Trials.stack([draw_trial(cfg, trial) for trial in range(runs)])


def test_series_trainer_ops_do_not_grow_with_runs() -> None:
    """The hierarchy's batched path (on CUDA, and forced here): ops of 8 more steps, and of one
    evaluation, at R = 1 and R = 32 (the draws, one trial at a time, are outside)."""

    def per_steps(runs: int) -> int:
        def train(n_steps: int) -> Callable[[], Any]:
            trials = series_trials(runs, n_steps)
            return lambda: fit_trials(replace(SERIES, n_steps=n_steps), trials)

        return ops_of(train(16)) - ops_of(train(8))

    def per_evaluation(runs: int) -> int:
        trials = series_trials(runs, 8)
        return ops_of(lambda: evaluate_trials(SERIES, trials))

    assert per_steps(1) == per_steps(32) > 0
    assert per_evaluation(1) == per_evaluation(32) > 0


def test_series_trials_together_match_trials_alone() -> None:
    """Stacked trials train to the tensors of trials trained one by one (float rounding: their
    products are batched) and evaluate to the same metrics; train_bottleneck takes that path
    inside batched_path()."""
    together = series_trials(3, SERIES.n_steps)
    fit_trials(SERIES, together)
    for r in range(3):
        alone = draw_trial(SERIES, r)
        fit_trials(SERIES, alone)
        for a, b in zip(alone.model.tensors(), together.model.tensors(), strict=True):
            torch.testing.assert_close(b[r], a, rtol=1e-4, atol=1e-5)
        torch.testing.assert_close(together.matrix[r], alone.matrix, rtol=1e-4, atol=1e-5)
    with batched_path():
        batched = train_bottleneck(SERIES, [0, 1, 2])
    for got, want in zip(batched, train_bottleneck(SERIES, [0, 1, 2]), strict=True):
        assert got == pytest.approx(want, rel=1e-9, abs=1e-12)

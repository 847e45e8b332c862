"""The batched path (the path CUDA runs), forced on CPU tensors.

- Its number of torch ops per step, and per evaluation, does not grow with the number of runs R
  of a group: counted with a TorchDispatchMode at R = 1 and R = 32 for every model × optimiser
  × layer norm of the authors' grid (``paper_training_grid``), with mini-batches and full batch.
- Its numbers are the per-run kernels' numbers up to float rounding (same law, other bits).
"""

import itertools
from collections import Counter
from typing import Any

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

from assocmem.ops.population import population_metrics
from assocmem.runtime import batched_path, uses_batched_path
from assocmem.sweep.spec import load_spec
from assocmem.training import TrainConfig
from assocmem.training.engine import run_group, stack_runs, step_weights
from assocmem.training.kernels import AbstractKernel, DenseKernel, select_kernel
from assocmem.training.task import Task


class OpCounter(TorchDispatchMode):
    """Counts every aten op dispatched inside the block, by name."""

    def __init__(self) -> None:
        super().__init__()
        self.ops: Counter[str] = Counter()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
        self.ops[str(func)] += 1
        return func(*args, **(kwargs or {}))


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

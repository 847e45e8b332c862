"""Runs of different d share one zero-padded program on the batched path (training/padding.py).

Forced on CPU tensors (``batched_path()``), as CUDA runs it:

- a group with d ∈ {8, 12, 16} padded to 16 gives each run the records and final logits of the
  run trained alone at its own d, for every model × optimiser × layer norm of the authors' grid,
  ``qupdate``, and the other optimisers; the padding of every state tensor stays exactly zero;
- the logits agree within 2e-5 of their scale (the tolerance of the batched path's comparison
  with the per-run kernels, tests/test_batched_path.py): the sums over 16 coordinates, 4 or 8 of
  them zero, round otherwise than over 8 or 12 on the CPU (the runs at d = 16 are bit for bit
  those alone; the padded runs differ in their last bits, each record's error is the same).
  Measured on this VM: at most 2.2e-6 of the scale; 64 of the 120 runs bit-identical (the 40 at
  d = 16 and 24 padded ones);
- the number of torch ops a step and an evaluation take does not grow with R;
- the planner pads only there: never on the CPU's default path, nor with ``keep_w``, nor past
  ``PAD_WASTE``, nor for a kernel that does not pad exactly.
"""

from dataclasses import replace
from typing import Any

import pytest
import torch
from test_batched_path import counted_ops, grid_combinations

from assocmem.runtime import batched_path
from assocmem.training import TrainConfig, train
from assocmem.training.engine import run_group, stack_runs, train_steps
from assocmem.training.kernels import TableSGDKernel, select_kernel
from assocmem.training.optimizers.adam import Adam
from assocmem.training.optimizers.sgd import SGD
from assocmem.training.padding import DIM_AXES, padding_key
from assocmem.training.planning import PAD_WASTE, group_runs, state_bytes
from assocmem.training.records import Recorder
from assocmem.training.task import Task

DIMS = (16, 8, 12)
COMBINATIONS = [
    *({"model": m, "optimizer": o, "layer_norm": ln} for m, o, ln in grid_combinations()),
    {"model": "qupdate"},
    {"model": "matrix", "optimizer": "sign_sgd"},
    {"model": "learned", "optimizer": "normalized_sgd", "layer_norm": True},
    {"model": "matrix", "optimizer": "normalized_sgd"},
    {"model": "learned", "optimizer": Adam(betas=(0.9, 0.999), weight_decay=0.01)},
    {"model": "relu", "optimizer": SGD(momentum=0.9, weight_decay=0.01), "layer_norm": True},
    {"model": "matrix", "optimizer": "adam", "full_batch": True, "n_steps": 6},
    {"model": "learned", "optimizer": "sgd", "label_noise": 0.1},
]


def name(fields: dict[str, Any]) -> str:
    return "-".join(str(getattr(v, "name", v)) for v in fields.values())


def runs(dims: tuple[int, ...] = DIMS, **fields: Any) -> list[TrainConfig]:
    base = {"n_inputs": 30, "n_samples": 64, "batch_size": 8} | fields
    pairs = ((0, 0.5), (1, 2.0))
    return [TrainConfig(dim=d, seed=s, lr=lr, **base) for d in dims for s, lr in pairs]


@pytest.mark.parametrize("fields", COMBINATIONS, ids=name)
def test_padded_group_gives_each_run_its_own_numbers(fields: dict[str, Any]) -> None:
    configs = runs(**fields)
    with batched_path():
        assert [sorted(chunk) for chunk in group_runs(configs)] == [list(range(len(configs)))]
        together, logits = run_group(configs)
        alone = [run_group([cfg]) for cfg in configs]
    for r, (result, ((own,), own_logits)) in enumerate(zip(together, alone, strict=True)):
        assert result.config == own.config
        assert result.error == own.error
        assert result.cross_entropy == pytest.approx(own.cross_entropy, rel=1e-5, abs=1e-6)
        scale = 1 + own_logits.abs().max().item()
        assert (logits[r] - own_logits[0]).abs().max().item() <= 2e-5 * scale
        if configs[r].dim == max(DIMS):  # unpadded: the same sums, the same bits
            assert torch.equal(logits[r], own_logits[0])


@pytest.mark.parametrize("fields", COMBINATIONS, ids=name)
def test_padding_stays_exactly_zero(fields: dict[str, Any]) -> None:
    configs = runs(**fields)
    cfg = replace(configs[0], dim=max(DIMS))
    with batched_path():
        kernel_class = select_kernel(cfg)
        inputs = stack_runs(configs, w_product=kernel_class.w_product)
        inputs.W = None if kernel_class.w_product else inputs.W
        task = Task.of(cfg)
        kernel = kernel_class(cfg, inputs, task.targets)
        train_steps(kernel, cfg, inputs, task, Recorder(cfg, len(configs), task), None)
    held = kernel.memory_tensors() | getattr(kernel, "state", {})
    assert held.keys() & DIM_AXES.keys() or "EWU" in held or "q" in held
    for tensor_name, tensor in held.items():
        for r, run in enumerate(configs):
            for axis in DIM_AXES.get(tensor_name, ()):
                padding = tensor[r].narrow(axis, run.dim, max(DIMS) - run.dim)
                assert torch.equal(padding, torch.zeros_like(padding)), (tensor_name, run.dim)
    for slot in kernel.slots.values():  # optimiser state (Adam's moments, momentum)
        for tensor in slot.values():
            assert torch.isfinite(tensor).all()


def test_return_state_is_read_back_at_each_runs_d() -> None:
    configs = runs(model="learned", optimizer="adam", layer_norm=True)
    with batched_path():
        together = train(configs, return_state=True)
        alone = [train([cfg], return_state=True)[0] for cfg in configs]
    for result, own in zip(together, alone, strict=True):
        assert result.state is not None and own.state is not None
        got, want = result.state.tensors(), own.state.tensors()
        assert {k: v.shape for k, v in got.items()} == {k: v.shape for k, v in want.items()}
        assert result.state.E.shape == (30, result.config.dim)
        for key in want:
            torch.testing.assert_close(got[key], want[key], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("full_batch", [False, True], ids=["minibatch", "full-batch"])
@pytest.mark.parametrize(("model", "optimizer", "layer_norm"), grid_combinations())
def test_padded_ops_do_not_grow_with_runs(
    model: str, optimizer: str, layer_norm: bool, full_batch: bool
) -> None:
    """One run at d = 16 and 32 runs of d ∈ {16, 8, 12} padded to 16: the same ops a step and
    an evaluation (the per-run learning-rate factors are one tensor)."""
    fields: dict[str, Any] = {"model": model, "optimizer": optimizer, "layer_norm": layer_norm}
    fields |= {"full_batch": True, "n_steps": 4} if full_batch else {}
    many = [c for c in runs(**fields) for _ in range(6)][:32]
    assert len(many) == 32 and len({c.dim for c in many}) == 3
    with batched_path():
        one, padded = counted_ops(many[:1]), counted_ops(many)
    assert sum(one["steps"].values()) > 0
    assert one["steps"] == padded["steps"], padded["steps"] - one["steps"]
    assert one["evaluation"] == padded["evaluation"]


def test_planner_pads_only_on_the_batched_path_and_where_exact(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    configs = runs(model="matrix", optimizer="sgd")
    by_dim = [[0, 1], [2, 3], [4, 5]]
    assert group_runs(configs) == by_dim  # the CPU's default path: one program per d
    assert padding_key(configs[0]) is None
    with batched_path():
        assert group_runs(configs) == [[0, 1, 4, 5, 2, 3]]  # d = 16, then 12, then 8
        assert group_runs(configs, pad=False) == by_dim  # train(keep_w=True)
        assert padding_key(configs[0]) == padding_key(configs[2])
        assert padding_key(configs[0]) != padding_key(replace(configs[2], layer_norm=True))
        monkeypatch.setattr(TableSGDKernel, "pads_exactly", False)
        assert padding_key(configs[0]) is None
        assert group_runs(configs) == by_dim


def test_padding_waste_is_capped() -> None:
    """The cap is on a chunk's totals: two runs of d = 256 carry two of d = 8 (four padded runs,
    within twice the state of two at 256 and two at 8), not a third (five padded runs > twice
    three small and two large); the runs of d = 4 form their own program."""
    big = {"model": "learned", "optimizer": "adam", "full_batch": True, "n_steps": 2}
    configs = runs((256, 8, 4), **big)
    with batched_path():  # the batched path's kernel sizes the state
        large, small = state_bytes(configs[0]), state_bytes(configs[2])
        assert 4 * large <= PAD_WASTE * (2 * large + 2 * small)
        assert 5 * large > PAD_WASTE * (2 * large + 3 * small)
        assert group_runs(configs) == [[0, 1, 2, 3], [4, 5]]
        chunks = group_runs(configs, budget=2 * large)  # two padded runs fit the budget
    assert chunks == [[0, 1], [2, 3, 4, 5]]


def test_cpu_default_path_unchanged_by_dims_mixed_in_one_call() -> None:
    """On the CPU's default path a call mixing d trains each d as its own programs: every
    record is bit for bit the record of the run trained alone."""
    configs = runs(model="learned", optimizer="adam")
    mixed = train(configs)
    alone = [train([cfg])[0] for cfg in configs]
    assert [r.to_dict() for r in mixed] == [r.to_dict() for r in alone]


def test_grid_combinations_all_pad() -> None:
    """Every model × optimiser × layer norm of the authors' grid pads exactly (none is left
    out: the "layer norm" divides by the norm, which zeros leave unchanged)."""
    with batched_path():
        for model, optimizer, layer_norm in grid_combinations():
            cfg = TrainConfig(model=model, optimizer=optimizer, layer_norm=layer_norm)
            assert padding_key(cfg) is not None

"""The trained state API: ``train(..., return_state=True)`` gives each run's final memory, bit
for bit what the engine trained, whatever runs shared its tensor program."""

import json
from typing import Any

import pytest
import torch

from assocmem.training import TrainConfig, TrainedState, native, select_kernel, train
from assocmem.training.engine import run_group
from assocmem.training.kernels import (
    AnalyticKernel,
    DenseKernel,
    LabelLawAutogradKernel,
    LayerNormSGDKernel,
    ProjectedMatrixKernel,
    QUpdateKernel,
    TableSGDKernel,
)

# Few, small steps: the runs are far from zero error, so equal errors say something.
SMALL = {"n_inputs": 30, "dim": 8, "n_samples": 48, "batch_size": 8}
# One config per kernel of the fast order (the autograd kernel: fast=False below).
KERNELS: dict[str, tuple[dict[str, Any], type]] = {
    "table": ({"optimizer": "sgd", "lr": 1.0}, TableSGDKernel),
    "layer_norm_sgd": ({"optimizer": "sgd", "layer_norm": True, "lr": 3.0}, LayerNormSGDKernel),
    "projected": ({"optimizer": "adam", "lr": 0.3}, ProjectedMatrixKernel),
    "projected_torch": ({"optimizer": "normalized_sgd", "lr": 0.5}, ProjectedMatrixKernel),
    "dense": ({"model": "learned", "optimizer": "sgd", "lr": 1.0}, DenseKernel),
    "dense_relu": ({"model": "relu", "optimizer": "sgd", "lr": 1.0}, DenseKernel),
    "analytic": ({"optimizer": "adam", "betas": (0.9, 0.999), "lr": 0.1}, AnalyticKernel),
    "label_law": ({"model": "learned", "label_noise": 0.2, "lr": 1.0}, LabelLawAutogradKernel),
    "qupdate": ({"model": "qupdate", "lr": 2.0}, QUpdateKernel),
}
METRICS = ("error", "head_error", "tail_error", "cross_entropy", "p_correct")


def small(**changes: Any) -> TrainConfig:
    return TrainConfig.from_flat({**SMALL, **changes})


def cases() -> list[tuple[str, bool]]:
    return [(name, True) for name in KERNELS] + [("dense", False), ("table", False)]


@pytest.mark.parametrize(("name", "fast"), cases())
def test_state_reproduces_the_run_metrics_exactly(name: str, fast: bool) -> None:
    """Alone, the state's logits are the engine's final logits bit for bit, so every metric
    recomputed from them (evaluation.population_metrics) equals the run's, the continuous
    cross-entropy and p_correct included. Beside companions the state and the whole record are
    the same bits too (the tests below)."""
    values, kernel = KERNELS[name]
    cfg = small(**values)
    if fast:
        assert select_kernel(cfg) is kernel  # the case covers the kernel it names
    (result,), logits = run_group([cfg], fast=fast, return_state=True)
    state = result.state
    assert state is not None and state.config == cfg
    assert torch.equal(state.logits(), logits[0])
    recomputed = state.metrics()
    for metric in METRICS:
        assert float(getattr(recomputed, metric)[0]) == getattr(result, metric), metric
    assert 0 < result.error < 1 or name == "qupdate"  # not a trivial run
    beside = train([cfg.with_(seed=4), cfg], fast=fast, return_state=True)[1]
    assert beside.state is not None
    assert float(beside.state.metrics().error[0]) == beside.error == result.error


@pytest.mark.parametrize(("name", "fast"), cases())
def test_state_alone_equals_state_beside_companions_bitwise(name: str, fast: bool) -> None:
    cfg = small(**KERNELS[name][0])
    companions = [cfg.with_(seed=3), cfg, cfg.with_(lr=cfg.lr / 2, seed=1)]
    (alone,) = train([cfg], fast=fast, return_state=True)
    together = train(companions, fast=fast, return_state=True)[1]
    assert alone.state is not None and together.state is not None
    mine, theirs = alone.state.tensors(), together.state.tensors()
    assert mine.keys() == theirs.keys()
    assert all(torch.equal(mine[k], theirs[k]) for k in mine)


@pytest.mark.parametrize(("name", "fast"), cases())
def test_state_tensors_have_the_documented_shapes(name: str, fast: bool) -> None:
    cfg = small(**KERNELS[name][0])
    (result,) = train([cfg], fast=fast, return_state=True)
    state = result.state
    assert state is not None
    n, m, d = cfg.n_inputs, cfg.n_outputs, cfg.dim
    shapes = {"E": (n, d), "U": (m, d), "W": (d, d), "EW": (n, d), "WU": (d, m), "EWU": (n, m)}
    tensors = state.tensors()
    assert {"E", "U"} <= tensors.keys() and len(tensors) <= 3
    for key, tensor in tensors.items():
        assert tuple(tensor.shape) == shapes.get(key, (n,)), key
        assert tensor.dtype == torch.float32 and tensor.device.type == "cpu"
        assert tensor.is_contiguous()
    if not fast and cfg.model != "qupdate":
        assert state.W is not None or cfg.model == "relu"


def test_products_are_the_products_of_w() -> None:
    """What the fast kernels hold instead of W is what the fields say (EWU = E Wᵀ Uᵀ, WU =
    Wᵀ Uᵀ, EW = E Wᵀ): compared with W trained by autograd (fast=False) on the same draws, to
    float32 rounding of a few steps (2e-5 of the largest entry)."""
    for name, field in (("table", "EWU"), ("projected", "WU"), ("layer_norm_sgd", "EW")):
        cfg = small(**KERNELS[name][0])
        (fast,) = train([cfg], return_state=True)
        (slow,) = train([cfg], fast=False, return_state=True)
        assert fast.state is not None and slow.state is not None and slow.state.W is not None
        E, W, U = slow.state.E, slow.state.W, slow.state.U
        expected = {"EWU": E @ W.T @ U.T, "WU": W.T @ U.T, "EW": E @ W.T}[field]
        held = getattr(fast.state, field)
        scale = expected.abs().max().item()
        assert (held - expected).abs().max().item() <= 2e-5 * scale, name
        assert torch.equal(fast.state.E, E) and torch.equal(fast.state.U, U)  # fixed: as drawn


def test_hidden_is_w_times_e_and_refuses_where_w_is_not_kept() -> None:
    cfg = small(**KERNELS["dense"][0])
    (result,) = train([cfg], return_state=True)
    state = result.state
    assert state is not None and state.W is not None
    assert torch.equal(state.hidden(), state.E @ state.W.T)
    (projected,) = train([small(**KERNELS["projected"][0])], return_state=True)
    assert projected.state is not None
    with pytest.raises(ValueError, match="fast=False"):
        projected.state.hidden()


def test_state_is_off_by_default_and_never_stored() -> None:
    cfg = small(**KERNELS["table"][0])
    (plain,) = train([cfg])
    (with_state,) = train([cfg], return_state=True)
    assert plain.state is None and isinstance(with_state.state, TrainedState)
    assert "state" not in with_state.to_dict()
    assert with_state.to_dict() == plain.to_dict()  # asking for the state changes no number


@pytest.mark.parametrize(("name", "fast"), cases())
def test_run_result_alone_equals_result_beside_companions_bitwise(name: str, fast: bool) -> None:
    """A run's whole record (every metric, the continuous cross-entropy and p_correct included,
    its error curve and softmax snapshots) and its state are the same bits whatever runs share
    its tensor program: every kernel computes a run's logits with products of that run alone.
    The record is compared as JSON (floats printed exactly, so equal text is equal bits)."""
    cfg = small(**KERNELS[name][0], eval_every=2, snapshot_steps=(3,))
    companions = [cfg.with_(seed=3), cfg, cfg.with_(lr=cfg.lr / 2, seed=1)]
    (alone,) = train([cfg], fast=fast, return_state=True)
    together = train(companions, fast=fast, return_state=True)[1]
    assert json.dumps(alone.to_dict()) == json.dumps(together.to_dict())
    assert alone.state is not None and together.state is not None
    mine, theirs = alone.state.tensors(), together.state.tensors()
    assert mine.keys() == theirs.keys() and all(torch.equal(mine[k], theirs[k]) for k in mine)


@pytest.mark.parametrize(
    ("name", "compiled"),
    [("projected", False), ("projected_torch", True), ("qupdate", True)],
)
def test_larger_run_alone_equals_run_beside_companions_bitwise(
    name: str, compiled: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The torch-ops steps at a size where a batched product over the group rounds a run's
    numbers differently from the same product alone (N = 1000, d = 50): the projected kernel's
    steps without a compiled library (the sign-like projection) and under normalised SGD, and
    the q-update's logits."""
    if not compiled:
        monkeypatch.setattr(native, "load", lambda: None)
    cfg = TrainConfig.from_flat(
        {**KERNELS[name][0], "n_inputs": 1000, "dim": 50, "n_samples": 256, "batch_size": 16}
    )
    companions = [cfg.with_(seed=3), cfg, cfg.with_(lr=cfg.lr / 2, seed=1), cfg.with_(seed=7)]
    (alone,) = train([cfg])
    together = train(companions)[1]
    assert ("compiled" in alone.kernel) is (name == "projected" and compiled)
    assert json.dumps(alone.to_dict()) == json.dumps(together.to_dict())


# keep_w: W itself from every fast kernel, against the plain torch path (autograd, fast=False).
KEEP_W: dict[str, dict[str, Any]] = {
    **{name: values for name, (values, _) in KERNELS.items()},
    "table_momentum": {"optimizer": "sgd", "momentum": 0.9, "weight_decay": 0.1, "lr": 0.5},
    "layer_norm_nesterov": {"optimizer": "nesterov", "momentum": 0.5, "layer_norm": True},
    "sign_sgd": {"optimizer": "sign_sgd", "lr": 0.3},
}
PRODUCT_OF_W = {
    "EWU": lambda E, W, U: E @ W.T @ U.T,
    "WU": lambda E, W, U: W.T @ U.T,
    "EW": lambda E, W, U: E @ W.T,
}


def keep_w_cases() -> list[tuple[str, bool]]:
    """Every case with the compiled kernels, and the compiled kernels' cases without them."""
    return [(name, True) for name in KEEP_W] + [
        (name, False) for name in ("table", "projected", "sign_sgd", "dense")
    ]


@pytest.mark.parametrize(("name", "compiled"), keep_w_cases())
def test_keep_w_gives_w_of_every_fast_kernel_as_the_torch_path_trains_it(
    name: str, compiled: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``keep_w=True`` sets W for every fast kernel (compiled or torch ops): equal to the W that
    autograd trains (``fast=False``) to float32 rounding of a few steps (2e-5 of its largest
    entry), its product equal to what the kernel holds, and the run's record and held tensors
    the same bits as without it. The q-update's W is ``W_q`` built entry by entry."""
    if not compiled:
        monkeypatch.setattr(native, "load", lambda: None)
    cfg = small(**KEEP_W[name])
    (kept,) = train([cfg], keep_w=True)
    (plain,) = train([cfg], return_state=True)
    assert ("compiled" in kept.kernel) is ("compiled" in plain.kernel)
    assert json.dumps(kept.to_dict()) == json.dumps(plain.to_dict())
    state, held = kept.state, plain.state
    assert state is not None and held is not None
    assert all(torch.equal(state.tensors()[k], t) for k, t in held.tensors().items())
    if cfg.model == "relu":
        assert state.W is None
        return
    W = state.W
    assert W is not None and W.shape == (cfg.dim, cfg.dim) and W.dtype == torch.float32
    if cfg.model == "qupdate":
        assert state.q is not None
        expected = torch.zeros(cfg.dim, cfg.dim)
        for x in range(cfg.n_inputs):
            expected += state.q[x] * torch.outer(state.U[x % cfg.n_outputs], state.E[x])
    else:
        (slow,) = train([cfg], fast=False, return_state=True)
        assert slow.state is not None and slow.state.W is not None
        expected = slow.state.W
    scale = expected.abs().max().item()
    assert (W - expected).abs().max().item() <= 2e-5 * scale, name
    for field, product in PRODUCT_OF_W.items():
        value = getattr(state, field)
        if value is not None:
            image = product(state.E, W, state.U)
            assert (value - image).abs().max().item() <= 2e-5 * image.abs().max().item(), field


@pytest.mark.parametrize("name", ["table", "projected", "layer_norm_sgd"])
def test_kept_w_alone_equals_kept_w_beside_companions_bitwise(name: str) -> None:
    cfg = small(**KEEP_W[name])
    companions = [cfg.with_(seed=3), cfg, cfg.with_(lr=cfg.lr / 2, seed=1)]
    (alone,) = train([cfg], keep_w=True)
    together = train(companions, keep_w=True)[1]
    assert alone.state is not None and together.state is not None
    assert alone.state.W is not None and together.state.W is not None
    assert torch.equal(alone.state.W, together.state.W)

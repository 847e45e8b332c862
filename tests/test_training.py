"""The batched training engine against one-at-a-time runs and torch.optim (issue 4)."""

import math
from typing import Any

import pytest
import torch

from assocmem.config.errors import ConfigError
from assocmem.ops.population import population_metrics
from assocmem.training import TrainConfig, native, select_kernel, train
from assocmem.training.engine import draw_run, run_group, stack_runs
from assocmem.training.grid import expand_grid, summarize
from assocmem.training.kernels import (
    AnalyticKernel,
    AutogradKernel,
    DenseKernel,
    LabelLawAutogradKernel,
    ProjectedMatrixKernel,
    QUpdateKernel,
    TableSGDKernel,
)
from assocmem.training.reference import reference_train

SMALL = {"n_inputs": 20, "dim": 12, "n_samples": 96, "batch_size": 8}

CASES: dict[str, dict[str, Any]] = {
    "sgd": {"optimizer": "sgd", "lr": 3.0},
    "sgd_momentum_wd": {"optimizer": "sgd", "momentum": 0.9, "weight_decay": 0.01},
    "sgd_schedule": {"optimizer": "sgd", "lr": 10.0, "schedule": "step", "decay_steps": (4,)},
    "sgd_zero_init": {"optimizer": "sgd", "init": "zero", "batch_size": 32},
    "sgd_full_batch": {"optimizer": "sgd", "full_batch": True, "n_steps": 10, "lr": 5.0},
    "sign_adam": {"optimizer": "adam", "lr": 1.0},
    "sign_adam_full_batch": {"optimizer": "adam", "full_batch": True, "n_steps": 10},
    "adam": {"optimizer": "adam", "betas": (0.9, 0.999), "lr": 0.1, "weight_decay": 0.01},
    "learned_sgd": {"model": "learned", "optimizer": "sgd"},
    "learned_adam": {"model": "learned", "optimizer": "adam", "batch_size": 32},
    "relu_sgd": {"model": "relu", "optimizer": "sgd", "lr": 5.0},
    "relu_adam_ln": {"model": "relu", "optimizer": "adam", "layer_norm": True},
    "matrix_ln_sgd": {"optimizer": "sgd", "layer_norm": True, "lr": 10.0},
    "matrix_ln_adam": {"optimizer": "adam", "layer_norm": True, "batch_size": 32},
}
ENGINE_ONLY: dict[str, dict[str, Any]] = {
    "sign_sgd": {"optimizer": "sign_sgd", "lr": 0.05},
    "normalized_sgd": {"optimizer": "normalized_sgd", "lr": 0.5},
    "qupdate": {"model": "qupdate", "lr": 5.0},
}


def small(**changes: object) -> TrainConfig:
    return TrainConfig.from_flat({**SMALL, **changes})


@pytest.mark.parametrize("name", [*CASES, *ENGINE_ONLY])
def test_batched_equals_one_at_a_time_bitwise(name: str) -> None:
    cfg = small(**{**CASES, **ENGINE_ONLY}[name])
    companions = [cfg.with_(seed=3), cfg, cfg.with_(lr=cfg.lr / 2, seed=1)]
    _, together = run_group(companions)
    _, alone = run_group([cfg])
    assert torch.equal(together[1], alone[0])


@pytest.mark.parametrize("name", list(CASES))
def test_engine_matches_torch_optim_reference(name: str) -> None:
    cfg = small(**CASES[name])
    expected = reference_train(cfg)
    for fast in (True, False):
        _, logits = run_group([cfg, cfg.with_(seed=5)], fast=fast)
        scale = 1 + expected.abs().max().item()
        assert (logits[0] - expected).abs().max().item() <= 2e-5 * scale, (name, fast)


@pytest.mark.parametrize("steps", [1, 2, 3, 4, 5])
def test_sign_adam_matches_torch_adam_step_for_step(steps: int) -> None:
    cfg = TrainConfig(dim=40, n_samples=16 * steps, batch_size=16, optimizer="adam", lr=10.0)
    assert select_kernel(cfg) is ProjectedMatrixKernel
    _, logits = run_group([cfg])
    assert torch.allclose(logits[0], reference_train(cfg), atol=1e-5, rtol=1e-6)


def test_sign_like_kernels_match_autograd() -> None:
    for name in ("sign_sgd", "normalized_sgd"):
        cfg = small(**ENGINE_ONLY[name])
        assert select_kernel(cfg) is ProjectedMatrixKernel
        _, fast = run_group([cfg])
        _, slow = run_group([cfg], fast=False)
        assert torch.allclose(fast, slow, atol=1e-5), name


@pytest.mark.parametrize("compiled", [True, False])
def test_kernel_selection(compiled: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    # Selection reads the config only: the same kernels with and without a compiled kernel,
    # and it never asks for one (planning must not compile).
    monkeypatch.setattr(native, "load", lambda: pytest.fail("selection compiled the kernels"))
    assert select_kernel(small(optimizer="sgd")) is TableSGDKernel
    assert select_kernel(small(optimizer="sgd", momentum=0.9)) is TableSGDKernel
    assert select_kernel(small(optimizer="nesterov")) is TableSGDKernel
    assert select_kernel(small(optimizer="adam")) is ProjectedMatrixKernel
    assert select_kernel(small(optimizer="normalized_sgd")) is ProjectedMatrixKernel
    assert select_kernel(small(optimizer="adam", weight_decay=0.1)) is AnalyticKernel
    assert select_kernel(small(optimizer="adam", betas=(0.9, 0.99))) is AnalyticKernel
    assert select_kernel(small(optimizer="adam", layer_norm=True)) is DenseKernel
    assert select_kernel(small(model="learned")) is DenseKernel
    assert select_kernel(small(model="learned", optimizer="nesterov")) is AnalyticKernel
    assert select_kernel(small(model="learned", device="cpu"), fast=False) is AutogradKernel
    assert select_kernel(small(model="learned", label_noise=0.1)) is LabelLawAutogradKernel
    assert select_kernel(small(label_noise=0.1)) is TableSGDKernel
    assert select_kernel(small(model="qupdate")) is QUpdateKernel
    assert select_kernel(small(model="qupdate"), fast=False) is QUpdateKernel
    # Whether the compiled kernel takes the steps is decided when the kernel is built.
    monkeypatch.setattr(native, "load", lambda: object() if compiled else None)
    cfg = small(model="learned")
    kernel = DenseKernel(cfg, stack_runs([cfg]), torch.arange(cfg.n_inputs) % cfg.n_outputs)
    assert kernel.steps_by == ("compiled" if compiled else "batch")


def test_qupdate_follows_equation_16() -> None:
    cfg = small(model="qupdate", lr=4.0)
    tokens = draw_run(cfg)["tokens"]
    assert tokens is not None
    q = [0.0] * cfg.n_inputs
    gamma = cfg.lr / cfg.batch_size
    for t in range(cfg.steps):
        batch = tokens[t * cfg.batch_size : (t + 1) * cfg.batch_size].tolist()
        gains = [1 / (1 + math.exp(v) / (cfg.n_outputs - 1)) for v in q]  # W fixed in a batch
        for x in batch:
            q[x] += gamma * gains[x]
    _, logits = run_group([cfg])
    draws = draw_run(cfg)
    E, U = draws["E"], draws["U"]
    assert E is not None and U is not None
    targets = torch.arange(cfg.n_inputs) % cfg.n_outputs
    W = sum(q[x] * torch.outer(U[targets[x]], E[x]) for x in range(cfg.n_inputs))
    assert isinstance(W, torch.Tensor)
    assert torch.allclose(logits[0], E @ W.T @ U.T, atol=1e-5)


def test_population_metrics_ties_and_split() -> None:
    logits = torch.tensor([[[2.0, 1.0], [1.0, 1.0], [0.0, 3.0], [float("nan"), 0.0]]])
    targets = torch.tensor([0, 1, 0, 1])
    probs = torch.tensor([0.4, 0.3, 0.2, 0.1])
    metrics = population_metrics(logits, targets, probs)
    # token 0 correct, 1 tie (error), 2 wrong, 3 non-finite (error); head = ⌈4/10⌉ = 1 token
    assert metrics.error.item() == pytest.approx(0.6)
    assert metrics.head_error.item() == 0.0
    assert metrics.tail_error.item() == pytest.approx(0.6)
    assert not bool(metrics.finite[0])


def test_results_record_curve_snapshots_and_split() -> None:
    cfg = small(eval_every=4, snapshot_steps=(0, 12))
    (result,) = train([cfg])
    assert [step for step, _ in result.curve] == [0, 4, 8, 12]
    assert result.curve[-1][1] == pytest.approx(result.error)
    table = torch.tensor(result.snapshots[12], dtype=torch.float64)
    assert table.shape == (cfg.n_inputs, cfg.n_outputs)
    assert torch.allclose(table.sum(1), torch.ones(cfg.n_inputs, dtype=torch.float64))
    assert result.head_error + result.tail_error == pytest.approx(result.error)
    assert result.status == "ok" and result.cross_entropy > 0


def test_divergence_is_a_status() -> None:
    ok, bad = train([small(optimizer="sign_sgd"), small(optimizer="sign_sgd", lr=1e38)])
    assert ok.status == "ok"
    assert bad.status == "diverged" and math.isnan(bad.cross_entropy)
    assert bad.error > ok.error


def test_runs_share_streams_across_lr_and_batch_size() -> None:
    a, b = draw_run(small(lr=1.0)), draw_run(small(lr=10.0, batch_size=16))
    assert a["E"] is not None and b["E"] is not None
    assert torch.equal(a["E"], b["E"])
    assert a["tokens"] is not None and b["tokens"] is not None
    assert torch.equal(a["tokens"], b["tokens"])
    c = draw_run(small(seed=1))
    assert c["E"] is not None and not torch.equal(a["E"], c["E"])


def test_larger_steps_memorise_more() -> None:
    configs = [
        TrainConfig(dim=100, n_samples=2048, lr=lr, seed=s) for lr in (0.1, 10.0) for s in range(3)
    ]
    rows = summarize(train(configs))
    assert rows[0]["error"] > rows[1]["error"]


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"model": "mlp"}, "model"),
        ({"optimizer": "lbfgs"}, "optimizer"),
        ({"lr": 0.0}, "lr"),
        ({"lr": math.nan}, "lr"),
        ({"dim": 0}, "dim"),
        ({"batch_size": 10**6}, "batch_size"),
        ({"optimizer": "adam", "betas": (1.0, 0.0)}, "betas"),
        ({"optimizer": "adam", "eps": 0.0}, "eps"),
        ({"betas": (0.9, 0.99)}, "betas"),  # SGD has no betas
        ({"optimizer": "adam", "momentum": 0.9}, "momentum"),  # Adam has no momentum
        ({"optimizer": "nesterov", "momentum": 0.0}, "momentum"),
        ({"momentum": 1.0}, "momentum"),
        ({"full_batch": True, "n_steps": 0}, "n_steps"),
        ({"model": "qupdate", "optimizer": "adam"}, "model"),
        ({"seed": -1}, "seed"),
        ({"layer_norm": "yes"}, "layer_norm"),
    ],
)
def test_invalid_configs_name_their_field(changes: dict[str, object], field: str) -> None:
    with pytest.raises(ConfigError) as err:
        small(**changes)
    assert err.value.field == field


def test_expand_grid() -> None:
    configs = expand_grid({"optimizers": ["sgd", "adam"], "dims": [10, 20], "seeds": 3, "lr": 2})
    assert len(configs) == 12
    assert {c.lr for c in configs} == {2.0}
    with pytest.raises(ConfigError, match="unknown setting"):
        expand_grid({"learning_rate": 1})


def test_rechunking_does_not_change_results() -> None:
    configs = [small(optimizer="adam", lr=lr, seed=s) for lr in (1.0, 10.0) for s in range(3)]
    whole = train(configs)
    pieces = train(configs, budget=1)  # one run per chunk
    assert [r.error for r in whole] == [r.error for r in pieces]
    assert [r.cross_entropy for r in whole] == [r.cross_entropy for r in pieces]

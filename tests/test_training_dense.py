"""The analytic per-run kernel for learned embeddings and layer norm against autograd (issue 4)."""

from typing import Any

import pytest
import torch

from assocmem.training import TrainConfig, native, select_kernel
from assocmem.training.engine import run_group, stack_runs
from assocmem.training.kernels import (
    AnalyticKernel,
    AutogradKernel,
    DenseKernel,
    LayerNormSGDKernel,
)
from assocmem.training.kernels import dense as dense_module
from assocmem.training.reference import reference_train

SMALL = {"n_inputs": 20, "dim": 12, "n_samples": 96, "batch_size": 8}

CASES: dict[str, dict[str, Any]] = {
    "learned_sgd": {"model": "learned", "optimizer": "sgd"},
    "learned_ln_sgd": {"model": "learned", "layer_norm": True, "optimizer": "sgd", "lr": 2.0},
    "matrix_ln_sgd": {"optimizer": "sgd", "layer_norm": True, "lr": 10.0},  # (d ≥ 200 only)
    "relu_sgd": {"model": "relu", "optimizer": "sgd", "lr": 5.0},
    "relu_ln_sgd_full_batch": {
        "model": "relu",
        "layer_norm": True,
        "full_batch": True,
        "n_steps": 8,
        "lr": 2.0,
    },
    "learned_adam": {"model": "learned", "optimizer": "adam", "batch_size": 32},
    "learned_ln_adam": {"model": "learned", "layer_norm": True, "optimizer": "adam"},
    "matrix_ln_adam": {"optimizer": "adam", "layer_norm": True, "batch_size": 32},
    "relu_adam_ln": {"model": "relu", "optimizer": "adam", "layer_norm": True},
    "learned_sign_sgd": {"model": "learned", "optimizer": "sign_sgd", "lr": 0.05},
}
TORCH_OPTIM = [name for name in CASES if "sign_sgd" not in name]


def small(**changes: object) -> TrainConfig:
    return TrainConfig.from_flat({**SMALL, **changes})


@pytest.mark.parametrize("name", list(CASES))
def test_dense_kernel_matches_autograd(name: str) -> None:
    cfg = small(**CASES[name])
    configs = [cfg, cfg.with_(seed=4, lr=cfg.lr * 2)]
    _, dense = run_group(configs, kernel_class=DenseKernel)
    _, autograd = run_group(configs, kernel_class=AutogradKernel)
    scale = 1 + autograd.abs().max().item()
    assert (dense - autograd).abs().max().item() <= 2e-5 * scale, name


@pytest.mark.parametrize("name", TORCH_OPTIM)
def test_dense_kernel_matches_torch_optim(name: str) -> None:
    cfg = small(**CASES[name])
    _, dense = run_group([cfg], kernel_class=DenseKernel)
    expected = reference_train(cfg)
    scale = 1 + expected.abs().max().item()
    assert (dense[0] - expected).abs().max().item() <= 2e-5 * scale, name


@pytest.mark.parametrize("name", list(CASES))
def test_dense_kernel_is_batch_invariant(name: str) -> None:
    cfg = small(**CASES[name])
    companions = [cfg.with_(seed=3), cfg, cfg.with_(lr=cfg.lr / 2, seed=1)]
    _, together = run_group(companions, kernel_class=DenseKernel)
    _, alone = run_group([cfg], kernel_class=DenseKernel)
    assert torch.equal(together[1], alone[0])


@pytest.mark.parametrize("compiled", [True, False])
def test_dense_kernel_selection(compiled: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    # The kernel class from the config alone; its way of stepping from the compiled kernel's
    # availability (patched both ways) and the config.
    monkeypatch.setattr(native, "load", lambda: object() if compiled else None)
    big = {"dim": 512}
    expected = {  # config → (kernel, steps_by with the compiled kernel, without)
        "learned_big": ({"model": "learned", **big}, DenseKernel, "compiled", "runs"),
        "ln_adam_big": ({"optimizer": "adam", "layer_norm": True, **big}, DenseKernel,
                        "compiled", "runs"),
        "learned_small": ({"model": "learned"}, DenseKernel, "compiled", "batch"),
        "relu_big": ({"model": "relu", **big}, DenseKernel, "compiled", "batch"),
        "learned_momentum": ({"model": "learned", "momentum": 0.9, **big}, AnalyticKernel,
                             None, None),
    }  # fmt: skip
    for name, (changes, kernel_class, with_compiled, without) in expected.items():
        cfg = small(**changes)
        assert select_kernel(cfg) is kernel_class, name
        if kernel_class is DenseKernel:
            targets = torch.arange(cfg.n_inputs) % cfg.n_outputs
            kernel = DenseKernel(cfg, stack_runs([cfg]), targets)
            assert kernel.steps_by == (with_compiled if compiled else without), name


@pytest.mark.parametrize("name", ["learned_adam", "matrix_ln_adam", "learned_sign_sgd"])
def test_dense_kernel_without_compiled_kernels(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = small(**CASES[name])
    _, autograd = run_group([cfg], kernel_class=AutogradKernel)
    monkeypatch.setenv("ASSOCMEM_NATIVE", "0")
    monkeypatch.setattr(dense_module, "DENSE_MIN_DIM", 1)  # torch ops a run at a time, small d
    _, dense = run_group([cfg], kernel_class=DenseKernel)
    assert (dense - autograd).abs().max().item() <= 2e-5 * (1 + autograd.abs().max().item())


LAYER_NORM_SGD: dict[str, dict[str, Any]] = {
    "few_samples": {"lr": 10.0},
    "large_batch": {"batch_size": 32, "lr": 10.0},  # B ≥ N: every token weighted by its count
    "momentum_wd": {"momentum": 0.9, "weight_decay": 0.01},
    "zero_init": {"init": "zero", "lr": 5.0},
    "full_batch": {"full_batch": True, "n_steps": 10, "lr": 5.0},
}


@pytest.mark.parametrize("name", list(LAYER_NORM_SGD))
def test_layer_norm_sgd_kernel(name: str) -> None:
    cfg = small(optimizer="sgd", layer_norm=True, **LAYER_NORM_SGD[name])
    assert select_kernel(cfg) is LayerNormSGDKernel
    companions = [cfg.with_(seed=3), cfg, cfg.with_(lr=cfg.lr / 2, seed=1)]
    _, together = run_group(companions)
    _, alone = run_group([cfg])
    assert torch.equal(together[1], alone[0])
    _, autograd = run_group(companions, kernel_class=AutogradKernel)
    scale = 1 + autograd.abs().max().item()
    assert (together - autograd).abs().max().item() <= 2e-5 * scale, name
    expected = reference_train(cfg)
    assert (alone[0] - expected).abs().max().item() <= 2e-5 * scale, name


ANALYTIC: dict[str, dict[str, Any]] = {
    **CASES,
    "learned_momentum_wd": {"model": "learned", "momentum": 0.9, "weight_decay": 0.01},
    "relu_adam_betas": {"model": "relu", "optimizer": "adam", "betas": (0.9, 0.999), "lr": 0.1},
    "learned_normalized_sgd": {"model": "learned", "optimizer": "normalized_sgd", "lr": 0.5},
    "relu_sign_sgd_large_batch": {"model": "relu", "optimizer": "sign_sgd", "batch_size": 32},
    "matrix_ln_adam_full_batch": {
        "layer_norm": True,
        "optimizer": "adam",
        "full_batch": True,
        "n_steps": 6,
    },
}


@pytest.mark.parametrize("name", list(ANALYTIC))
def test_analytic_kernel_matches_autograd_and_is_batch_invariant(name: str) -> None:
    cfg = small(**ANALYTIC[name])
    companions = [cfg.with_(seed=3), cfg, cfg.with_(lr=cfg.lr / 2, seed=1)]
    _, analytic = run_group(companions, kernel_class=AnalyticKernel)
    _, autograd = run_group(companions, kernel_class=AutogradKernel)
    scale = 1 + autograd.abs().max().item()
    assert (analytic - autograd).abs().max().item() <= 2e-5 * scale, name
    _, alone = run_group([cfg], kernel_class=AnalyticKernel)
    assert torch.equal(analytic[1], alone[0])

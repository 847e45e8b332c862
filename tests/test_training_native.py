"""The compiled sign-projection kernel against the torch ops it replaces (issue 4, speed)."""

import os
import shutil

import pytest
import torch

from assocmem.training import TrainConfig, native, select_kernel
from assocmem.training.engine import ProjectedMatrixKernel, run_group, softmax_error
from assocmem.training.reference import reference_train

needs_native = pytest.mark.skipif(native.load() is None, reason="no C compiler")


def torch_sign_project(P_t: torch.Tensor, U: torch.Tensor, eps: float, sign: bool) -> torch.Tensor:
    """The naive computation: form the d×d matrix, shape it, project it back, in float64."""
    G = torch.bmm(P_t.transpose(1, 2).double(), U.double())  # (R, d, d)
    shaped = G.sign() if sign else G / (G.abs() + eps)
    return torch.bmm(shaped, U.transpose(1, 2).double())


def random_inputs(runs: int, dim: int, m: int, seed: int = 0) -> tuple[torch.Tensor, ...]:
    gen = torch.Generator().manual_seed(seed)
    P_t = torch.randn(runs, m, dim, generator=gen) * 1e-3
    U = torch.randn(runs, m, dim, generator=gen) / dim**0.5
    return P_t, U


@needs_native
@pytest.mark.parametrize("sign", [False, True])
@pytest.mark.parametrize(("dim", "m"), [(1, 2), (37, 5), (200, 3), (64, 8)])
def test_sign_project_matches_naive(dim: int, m: int, sign: bool) -> None:
    P_t, U = random_inputs(3, dim, m)
    P_t[1, :, : dim // 2] = 0.0  # exact zeros in P U: shape(0) = 0 in both modes
    ours = native.sign_project(P_t, U, 1e-8, sign=sign)
    expected = torch_sign_project(P_t, U, 1e-8, sign)
    assert ours.shape == (3, dim, m)
    # float32 accumulation of d terms of size |U| against float64; signs of tiny g may differ
    assert torch.allclose(ours.double(), expected, atol=1e-4 * dim**0.5, rtol=1e-4)


@needs_native
def test_sign_project_eps_semantics() -> None:
    # With |g| comparable to eps, g / (|g| + eps) is far from ±1: the kernel must divide.
    U = torch.ones(1, 1, 20)
    P_t = torch.full((1, 1, 20), 1e-8)
    out = native.sign_project(P_t, U, 1e-8, sign=False)
    assert torch.allclose(out, torch.full((1, 20, 1), 10.0))  # 20 × 0.5
    assert torch.allclose(
        native.sign_project(P_t, U, 1e-8, sign=True), torch.full((1, 20, 1), 20.0)
    )


@needs_native
@pytest.mark.parametrize("threads", [1, 2])
def test_sign_project_is_batch_invariant(threads: int) -> None:
    P_t, U = random_inputs(5, 300, 5, seed=1)
    previous = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        together = native.sign_project(P_t, U, 1e-8, sign=False)
        for r in range(5):
            alone = native.sign_project(P_t[r : r + 1], U[r : r + 1], 1e-8, sign=False)
            assert torch.equal(together[r], alone[0])
    finally:
        torch.set_num_threads(previous)


@needs_native
@pytest.mark.parametrize("optimizer", ["adam", "sign_sgd"])
def test_native_and_torch_kernels_agree(optimizer: str, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = TrainConfig(dim=50, n_samples=64, batch_size=16, optimizer=optimizer, lr=0.5)
    assert select_kernel(cfg) is ProjectedMatrixKernel
    configs = [cfg, cfg.with_(seed=1)]
    _, fast = run_group(configs)
    monkeypatch.setenv("ASSOCMEM_NATIVE", "0")
    assert not native.supports(torch.zeros(1, 5, 3))
    _, slow = run_group(configs)
    assert torch.allclose(fast, slow, atol=1e-5)


@needs_native
def test_native_sign_adam_matches_torch_adam() -> None:
    cfg = TrainConfig(dim=100, n_samples=48, batch_size=16, optimizer="adam", lr=10.0)
    _, logits = run_group([cfg])
    assert torch.allclose(logits[0], reference_train(cfg), atol=1e-5, rtol=1e-6)


@needs_native
def test_softmax_error_matches_torch_and_is_row_by_row() -> None:
    gen = torch.Generator().manual_seed(2)
    logits = (
        torch.randn(7, 13, 5, generator=gen)
        * torch.tensor([1.0, 30.0, 300.0]).repeat(3)[:7, None, None]
    )
    targets = torch.arange(13) % 5
    weights = torch.rand(7, 13, generator=gen)
    ours = native.softmax_error(logits, targets, weights)
    expected = softmax_error(logits.double(), targets) * weights.double()[:, :, None]
    assert torch.allclose(ours.double(), expected, atol=3e-7, rtol=0)
    for r in range(7):
        alone = native.softmax_error(logits[r : r + 1], targets, weights[r : r + 1])
        assert torch.equal(ours[r], alone[0])


def test_kernels_compile_where_a_compiler_exists() -> None:
    # A broken C source would otherwise fall back to torch silently and skip the tests above.
    if shutil.which(os.environ.get("CC", "cc")) is None:
        pytest.skip("no C compiler")
    assert native.load() is not None


@needs_native
@pytest.mark.parametrize("sign", [False, True])
@pytest.mark.parametrize(("k", "p", "q"), [(1, 5, 7), (6, 40, 37), (3, 17, 64)])
def test_sign_update_matches_naive(k: int, p: int, q: int, sign: bool) -> None:
    gen = torch.Generator().manual_seed(k)
    A, B = torch.randn(k, p, generator=gen) * 1e-3, torch.randn(k, q, generator=gen)
    A[:, 0] = 0.0  # a zero row of the gradient: no step
    W = torch.randn(p, q, generator=gen)
    G = A.double().T @ B.double()
    expected = W.double() - 0.1 * (G.sign() if sign else G / (G.abs() + 1e-8))
    native.sign_update(W, A, B, 0.1, 1e-8, sign=sign)
    assert torch.allclose(W.double(), expected, atol=1e-6, rtol=0)

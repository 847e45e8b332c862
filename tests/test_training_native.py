"""The compiled kernels against the torch ops they replace (issue 4, speed)."""

import os
import shutil
import threading

import pytest
import torch

from assocmem import runtime
from assocmem.runtime import flush_denormals, intra_op_threads
from assocmem.training import TrainConfig, native, native_library, select_kernel
from assocmem.training.engine import run_group
from assocmem.training.kernels import (
    DenseKernel,
    ProjectedMatrixKernel,
    TableSGDKernel,
    dense,
    softmax_error,
)
from assocmem.training.reference import reference_train

needs_native = pytest.mark.skipif(
    native_library.load() is None,
    reason=f"compiled kernel unavailable: {native_library.reason_unavailable()}",
)


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
@pytest.mark.parametrize("batch_size", [16, 128])  # 128 > N: every token has a weight
@pytest.mark.parametrize(
    ("optimizer", "kernel"),
    [("adam", ProjectedMatrixKernel), ("sign_sgd", ProjectedMatrixKernel), ("sgd", TableSGDKernel)],
)
def test_native_and_torch_kernels_agree(
    optimizer: str, kernel: type, batch_size: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    cfg = TrainConfig(
        dim=50, n_samples=4 * batch_size, batch_size=batch_size, optimizer=optimizer, lr=0.5
    )
    assert select_kernel(cfg) is kernel
    configs = [cfg, cfg.with_(seed=1)]
    _, fast = run_group(configs)
    _, alone = run_group(configs[1:])
    assert torch.equal(fast[1], alone[0])  # batching never changes a run
    _, split = run_group([c.with_(eval_every=3) for c in configs])  # spans cut at other steps
    assert torch.equal(fast, split)
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
    assert native_library.load() is not None


DENSE: dict[str, dict[str, object]] = {
    # d = 70: two-vector and one-vector column chunks and a row tail (70 = 4·17 + 2). Small
    # rates: once a token's softmax rounds to 1, Adam's g / (|g| + 1e-8) of its near-zero,
    # float32-quantised gradient differs between any two summation orders, and sign-like steps
    # amplify that; the comparison must stay before that regime.
    "learned_adam": {"model": "learned", "optimizer": "adam", "lr": 0.1},
    "learned_ln_sgd": {"model": "learned", "layer_norm": True, "optimizer": "sgd", "lr": 2.0},
    "learned_sign_sgd_large_batch": {"model": "learned", "optimizer": "sign_sgd", "lr": 0.01,
                                     "batch_size": 64, "n_samples": 256},
    "matrix_ln_adam": {"layer_norm": True, "optimizer": "adam", "lr": 0.1},
    "relu_ln_adam": {"model": "relu", "layer_norm": True, "optimizer": "adam", "lr": 0.1},
    "relu_sgd_large_batch": {"model": "relu", "optimizer": "sgd", "lr": 5.0, "batch_size": 64,
                             "n_samples": 256},
    # k = N = 100 distinct tokens: the column blocks of the W pass (32768 / k < d)
    "learned_ln_adam_full_batch_blocked": {"model": "learned", "layer_norm": True,
                                           "optimizer": "adam", "full_batch": True, "n_steps": 3,
                                           "n_inputs": 100, "dim": 400, "lr": 0.1},
}  # fmt: skip


@needs_native
@pytest.mark.parametrize("name", list(DENSE))
def test_compiled_dense_step_matches_torch_ops(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    settings = {"n_inputs": 20, "dim": 70, "n_samples": 48, "batch_size": 8, **DENSE[name]}
    cfg = TrainConfig(**settings)  # type: ignore[arg-type]
    companions = [cfg.with_(seed=3), cfg, cfg.with_(lr=cfg.lr / 2, seed=1)]
    _, together = run_group(companions, kernel_class=DenseKernel)
    _, alone = run_group([cfg], kernel_class=DenseKernel)
    assert torch.equal(together[1], alone[0])  # batching never changes a run
    monkeypatch.setenv("ASSOCMEM_NATIVE", "0")
    monkeypatch.setattr(dense, "DENSE_MIN_DIM", 1)  # torch ops a run at a time (not relu)
    _, torch_ops = run_group(companions, kernel_class=DenseKernel)
    scale = 1 + torch_ops.abs().max().item()
    assert (together - torch_ops).abs().max().item() <= 2e-5 * scale, name


def test_kernel_threads_copy_the_callers_flush_to_zero_mode() -> None:
    # flush-to-zero is per thread: the pool's threads must follow the training loop's setting
    def denormal_product(_: range) -> None:
        seen.append((torch.tensor([1e-39]) * torch.tensor([1.0])).item())

    for flush in (True, False, True):
        seen: list[float] = []
        with intra_op_threads(2), flush_denormals(flush):
            native.run_blocks(denormal_product, 2, native.PARALLEL_ELEMENTS)
        assert len(seen) == 2
        if torch.set_flush_denormal(False):  # the CPU supports flushing
            assert all((value == 0.0) == flush for value in seen), (flush, seen)


def test_flush_blocks_of_concurrent_threads_do_not_leak() -> None:
    """Two threads enter and leave flush-to-zero blocks interleaved (A in, B in, A out, B out):
    afterwards no thread, the caller included, believes denormals are flushed. (With one
    process-wide record, B restored A's "on" and left it on for every later kernel pool.)"""
    a_in, b_in, a_out = threading.Event(), threading.Event(), threading.Event()
    inside: dict[str, bool] = {}

    def first() -> None:
        with flush_denormals():
            inside["a"] = runtime.flushing()
            a_in.set()
            b_in.wait(5)
        a_out.set()

    def second() -> None:
        a_in.wait(5)
        with flush_denormals():
            inside["b"] = runtime.flushing()
            b_in.set()
            a_out.wait(5)

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert inside == {"a": True, "b": True} or not torch.set_flush_denormal(False)
    assert runtime.flushing() is False

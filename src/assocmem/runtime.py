"""Torch runtime settings for a block of work, restored afterwards.

- Intra-op thread counts: tiny tensor programs (a few thousand elements per op) run fastest on
  one thread: the hand-off between OpenMP threads costs more than the op, and much more on a
  loaded machine, where a spinning thread waits for a core.
- Flush-to-zero: denormal floats (|x| < 1.2e-38: gradients of well-learned tokens, underflowing
  softmax tails) cost 40–60× per operation on x86 CPUs, in torch's GEMMs and in compiled
  kernels alike. Training loops run with them flushed to zero: only values below 1.2e-38
  change, which moves no logit or step above that size.
- The batched path: on CUDA a group of R runs advances with a number of torch ops per step that
  does not grow with R (batched products, no per-run loops, no compiled CPU kernels); on the CPU
  the per-run kernels keep a run's bits independent of its companions. :func:`batched_path`
  forces CUDA's path on any device (the tests count its ops on CPU tensors).
"""

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import torch

from assocmem import cpu_pin
from assocmem.config.errors import ConfigError


@contextmanager
def intra_op_threads(count: int) -> Iterator[None]:
    """Run the block with ``count`` (≥ 1) torch intra-op threads, then restore the previous
    count."""
    previous = torch.get_num_threads()
    torch.set_num_threads(max(1, count))
    try:
        yield
    finally:
        torch.set_num_threads(previous)


class _FlushState(threading.local):
    """Whether a flush_denormals block is active in this thread (the mode is per thread, so is
    this record: blocks entered by concurrent threads never see or restore each other's)."""

    active = False


_state = _FlushState()


def flushing() -> bool:
    """Whether this thread is flushing denormals (the state its worker threads should copy)."""
    return _state.active


@contextmanager
def flush_denormals(enabled: bool = True) -> Iterator[None]:
    """Run the block with denormal floats flushed to zero (this thread, CPU; a no-op where the
    CPU cannot), then back to the previous state. The setting is per thread: pools that run
    kernels for the block copy it into their threads (see :func:`flushing`)."""
    previous = _state.active
    switched = enabled and not previous and torch.set_flush_denormal(True)
    _state.active = previous or switched
    try:
        yield
    finally:
        _state.active = previous
        if switched:
            torch.set_flush_denormal(False)


_forced_batched: ContextVar[bool] = ContextVar("assocmem_batched_path", default=False)


@contextmanager
def batched_path(enabled: bool = True) -> Iterator[None]:
    """Run the block on the batched path whatever the device (see :func:`uses_batched_path`),
    then back to the previous setting. The path CUDA runs, forced on CPU tensors: the tests
    count its ops, and benchmarks compare it with the per-run kernels."""
    token = _forced_batched.set(enabled)
    try:
        yield
    finally:
        _forced_batched.reset(token)


def uses_batched_path(device: torch.device | str) -> bool:
    """Whether work on ``device`` takes the batched path: always off the CPU (a GPU pays for
    large programs, not for per-run loops), and on the CPU inside :func:`batched_path`."""
    return torch.device(device).type != "cpu" or _forced_batched.get()


TF32_SWITCH = "ASSOCMEM_TF32"  # "1": TF32 matrix products on CUDA (faster, ~1e-3 relative)
DETERMINISTIC_SWITCH = "ASSOCMEM_DETERMINISTIC"  # "0": torch's default (faster) CUDA algorithms
CUBLAS_WORKSPACE = ":4096:8"  # cuBLAS's setting for reproducible products (its docs)


def cuda_numerics(device: torch.device | str) -> dict[str, bool]:
    """How CUDA work on ``device`` computes, for a run's provenance: deterministic algorithms
    unless ``ASSOCMEM_DETERMINISTIC=0``, and TF32 products only where ``ASSOCMEM_TF32=1`` asks
    for them. Empty off CUDA."""
    if torch.device(device).type != "cuda":
        return {}
    return {
        "deterministic": os.environ.get(DETERMINISTIC_SWITCH, "1") != "0",
        "tf32": os.environ.get(TF32_SWITCH, "0") == "1",
    }


def numerics(device: torch.device | str) -> dict[str, Any]:
    """How work on ``device`` computes, for a run's provenance: on CUDA
    :func:`cuda_numerics`; on the CPU ``{"cpu_pin": {"mkl_cbwr": …, "aten": …}, "cpu_vendor":
    …}``, the code paths MKL and ATen run (:func:`assocmem.cpu_pin.in_effect`: ``"AVX2,STRICT"``
    on Intel, ``"AUTO,STRICT"`` elsewhere, and ``"AVX2"`` under the pin: the same bits on every
    x86-64 host of one vendor with AVX2) and the CPU's vendor (None where it cannot be read)."""
    if torch.device(device).type == "cpu":
        return {"cpu_pin": cpu_pin.in_effect(), "cpu_vendor": cpu_pin.cpu_vendor()}
    return cuda_numerics(device)


@contextmanager
def device_numerics(device: torch.device | str) -> Iterator[None]:
    """Run the block with :func:`cuda_numerics` in force on CUDA (deterministic algorithms and
    TF32 as asked), then restore torch's previous settings; a no-op on the CPU.

    The same spec, device kind and torch version then give the same numbers (docs:
    reproducibility.md)."""
    numerics = cuda_numerics(device)
    if not numerics:
        yield
        return
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", CUBLAS_WORKSPACE)
    previous = (
        torch.are_deterministic_algorithms_enabled(),
        torch.backends.cuda.matmul.allow_tf32,
        torch.backends.cudnn.allow_tf32,
    )
    torch.use_deterministic_algorithms(numerics["deterministic"])
    torch.backends.cuda.matmul.allow_tf32 = numerics["tf32"]
    torch.backends.cudnn.allow_tf32 = numerics["tf32"]
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(previous[0])
        torch.backends.cuda.matmul.allow_tf32 = previous[1]
        torch.backends.cudnn.allow_tf32 = previous[2]


def check_device(device: str) -> None:
    """A ConfigError (field ``device``) unless ``device`` is cpu, or a CUDA device this machine
    has (``cuda`` or ``cuda:K``): the one device check of every configuration and command."""
    try:
        dev = torch.device(device)
    except RuntimeError:
        raise ConfigError(
            "device", f"unknown device {device!r}; allowed: cpu, cuda, cuda:K"
        ) from None
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ConfigError("device", "cuda is not available on this machine; allowed: cpu")
    if dev.type not in ("cpu", "cuda"):
        raise ConfigError("device", f"unsupported device {device!r}; allowed: cpu, cuda, cuda:K")

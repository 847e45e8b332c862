r"""Compiled CPU kernels of the training engine (docs: kernels.md), source ``kernels.c``.

- ``projected_steps`` (``ProjectedMatrixKernel``): under sign-like Adam (β = (0, 0)) and
  sign-SGD the matrix model's step needs, for every run, the d×M change :math:`S U^\top` where
  :math:`S = \operatorname{shape}(P U)` is the elementwise shape of the rank-≤M gradient
  :math:`G^\top = P U` (d×d), :math:`\operatorname{shape}(g) = g / (|g| + \mathrm{eps})` (Adam,
  exactly as ``torch.optim`` divides) or ``sign(g)``. Each row of :math:`G^\top` is formed a vector
  at a time in registers, shaped and projected straight away, so the d×d matrix is never stored
  (``sign_project``, also callable alone); the batch's logits, softmax error and :math:`P^\top` are
  computed in C too, and a run takes a span of steps per call: about 0.4 ms per run-step at d = 1000
  on one core, against about 2.3 ms for torch ops.
- ``dense_steps`` (``DenseKernel``): whole optimiser steps of a model :math:`h = W e_x` (learned
  embeddings, or layer norm) or :math:`h = \operatorname{ReLU}(e_x)` for each run: the forward pass
  over the batch's distinct tokens, the hand-written backward pass, then one pass over W that forms
  its rank-k gradient a block at a time, shapes it (Adam, sign or SGD), updates W and accumulates
  the embeddings' gradient through the old W. A run takes a span of steps per call, and the
  runs of a group are split over threads.
- ``table_steps`` (``TableSGDKernel``): whole plain SGD steps of the matrix model in its N×M
  logit table, a span of steps per call.
- ``softmax_error``: the weighted softmax error of every row, one row at a time.

The source is compiled once per instruction set, when the package is built or installed, and
the best library this CPU runs is chosen at run time and called with ``ctypes`` (which
releases the GIL, so blocks of runs go to threads): :mod:`assocmem.training.native_library`.
Every library gives the same bits on the same inputs (vectors of a fixed width, fixed reduction
orders, no fused multiply-add; ``tests/test_native_build.py``), and each run's numbers depend
only on that run's inputs, so batching never changes results. Where no library can be used,
the engine uses torch ops instead; the two agree to float rounding (tested).
"""

import functools
import itertools
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

import torch

from assocmem import runtime
from assocmem.training.native_library import load
from assocmem.training.optimizers import AbstractOptimizer
from assocmem.training.optimizers.adam import Adam
from assocmem.training.optimizers.sign_sgd import SignSGD

PARALLEL_ELEMENTS = 2**20  # d² × runs above which the runs are split over threads
VECTOR = 16  # floats per vector in kernels.c (VW)
MAX_OUTPUTS = 8  # M ≤ 8 is compiled with register accumulators; larger M uses torch ops


def available(tensor: torch.Tensor) -> bool:
    """Whether the compiled kernels take this tensor: CPU float32, off the batched path
    (:func:`~assocmem.runtime.uses_batched_path`), and a library was loaded."""
    cpu_float = tensor.device.type == "cpu" and tensor.dtype == torch.float32
    return cpu_float and not runtime.uses_batched_path(tensor.device) and load() is not None


def supports(tensor: torch.Tensor) -> bool:
    """:func:`available` for an (R, ·, M) tensor with M ≤ 8 (M is held in registers)."""
    return tensor.shape[-1] <= MAX_OUTPUTS and available(tensor)


def sign_project(P_t: torch.Tensor, U: torch.Tensor, eps: float, *, sign: bool) -> torch.Tensor:
    r""":math:`\operatorname{shape}(P U) U^\top` for every run without forming the d×d matrix
    ``P U``: (R, d, M).

    P_t: (R, M, d) holds :math:`P^\top`; U: (R, M, d); float32 on the CPU. The shape is
    :math:`g / (|g| + \mathrm{eps})`, or ``sign(g)`` when ``sign``. The step of
    :func:`projected_steps`, on its own (for tests). Large batches of runs are split into contiguous
    blocks over ``torch.get_num_threads()`` threads.
    """
    lib = load()
    assert lib is not None and supports(P_t.transpose(1, 2))
    P_t, U_padded = P_t.contiguous(), padded(U)
    runs, m, d = P_t.shape
    out = torch.empty(runs, d, m, dtype=P_t.dtype)
    mode = (SignSGD if sign else Adam).native_mode

    def block(runs_: range) -> None:
        first, count = runs_.start, len(runs_)
        status = lib.sign_project(
            count, d, U_padded.shape[2], m, P_t[first].data_ptr(), U_padded[first].data_ptr(),
            eps, mode, out[first].data_ptr(),
        )  # fmt: skip
        assert status == 0

    run_blocks(block, runs, runs * d * d)
    return out


def run_blocks(block: Callable[[range], None], runs: int, elements: int) -> None:
    """``block`` over contiguous blocks of the runs, on ``torch.get_num_threads()`` threads when
    the work (``elements``) is large enough to pay for them (ctypes releases the GIL)."""
    workers = min(runs, torch.get_num_threads()) if elements >= PARALLEL_ELEMENTS else 1
    if workers <= 1:
        block(range(runs))
        return
    flush = runtime.flushing()

    def in_worker(runs_: range) -> None:  # the caller's flush-to-zero mode (per thread)
        torch.set_flush_denormal(flush)
        block(runs_)

    bounds = [runs * w // workers for w in range(workers + 1)]
    blocks = [range(a, b) for a, b in itertools.pairwise(bounds)]
    list(thread_pool(workers).map(in_worker, blocks))


@functools.cache
def thread_pool(workers: int) -> ThreadPoolExecutor:
    """A pool kept for the process: training calls the kernels once per step."""
    return ThreadPoolExecutor(workers, thread_name_prefix="assocmem-kernel")


def softmax_error(
    logits: torch.Tensor, targets: torch.Tensor, weights: torch.Tensor
) -> torch.Tensor:
    r""":math:`w(x) (\operatorname{softmax}(\mathrm{logits}) - \operatorname{onehot}(f^*))` of every
    run and token, (R, N, M).

    logits: (R, N, M) float32 on the CPU; targets: (N,) or (R, N) int64; weights: (R, N)
    float32. One row at a time, so each run's numbers are independent of its batch companions
    (torch's fast softmax along N vectorises across rows and is not).
    """
    lib = load()
    assert lib is not None
    logits, weights = logits.contiguous(), weights.contiguous()
    targets = targets.to(torch.int64).contiguous()
    runs, n, m = logits.shape
    assert targets.shape[-1] == n and weights.shape == (runs, n)
    out = torch.empty_like(logits)
    rows = logits.data_ptr(), targets.data_ptr(), weights.data_ptr(), out.data_ptr()
    lib.softmax_error(runs * n, m, targets.numel(), *rows)
    return out


def padded_length(d: int) -> int:
    """The row stride that makes every row of a d-column matrix start on a vector boundary."""
    return -(-d // VECTOR) * VECTOR


def padded(x: torch.Tensor) -> torch.Tensor:
    """x (…, d) copied into zeros (…, :func:`padded_length` (d)): aligned rows, zeros beyond d."""
    out = x.new_zeros(*x.shape[:-1], padded_length(x.shape[-1]))
    out[..., : x.shape[-1]] = x
    return out


def dense_steps(
    W: torch.Tensor | None,
    E: torch.Tensor,
    U: torch.Tensor,
    weights: torch.Tensor,
    targets: torch.Tensor,
    lr: torch.Tensor,
    *,
    learned: Sequence[str],
    layer_norm: bool,
    optimizer: AbstractOptimizer,
) -> None:
    r"""S optimiser steps of every run of a model :math:`h = W e_x` or
    :math:`h = \operatorname{ReLU}(e_x)`, in place.

    W (R, d, d) with rows of stride :math:`\mathrm{ld} \ge d` (a view of a padded tensor, see
    :func:`padded_length`), or None for the ReLU model; E (R, N, d), U (R, M, d): float32 on the
    CPU. W (if any) always learns, E and U when ``learned`` names them. ``weights`` (R, S, N):
    c(x)/B or p(x) of every token at every step (a step uses the tokens of nonzero weight);
    targets (N,); ``lr`` (R, S, 3) the rates of W, E and U. ``optimizer``: a stateless entry
    with a ``native_mode`` (sign-like Adam, sign-SGD or plain SGD). The d×d gradient is never
    stored: one pass over W forms it a block at a time, shapes it, updates W and accumulates E's
    gradient through the old W. A run takes its S steps in a row, so its W stays in cache;
    blocks of runs go to threads.
    """
    lib = load()
    assert lib is not None and all(t.is_contiguous() and available(t) for t in (E, U))
    runs, n, d = E.shape
    m, ld = U.shape[1], padded_length(d) if W is None else W.stride(1)
    if W is not None:
        assert available(W) and W.shape == (runs, d, d) and W.stride() == (d * ld, ld, 1)
    assert lr.shape == (*weights.shape[:2], 3)
    learn = (1 if "E" in learned else 0) | (2 if "U" in learned else 0)
    run_spans(
        lib.dense_steps, (d, ld, n, m), (W, E, U), weights, targets,
        (int(layer_norm), learn, *_mode_eps(optimizer)), lr,
        scratch=lambda k: lib.dense_scratch(d, ld, m, k), elements=d * d,
    )  # fmt: skip


def projected_steps(
    V: torch.Tensor,
    E: torch.Tensor,
    U: torch.Tensor,
    weights: torch.Tensor,
    targets: torch.Tensor,
    lr: torch.Tensor,
    *,
    optimizer: AbstractOptimizer,
) -> None:
    r"""S sign-like steps of every run of the matrix model (fixed E, U), in place on the state
    :math:`V = W^\top U^\top` (R, d, M), M ≤ 8: the batch's logits ``e_x V``, its weighted softmax
    error :math:`\Delta`, :math:`P^\top = \Delta^\top e` and
    :math:`V \mathrel{-}= \mathrm{lr} \cdot \operatorname{shape}(P U) U^\top` (as
    :func:`sign_project`), a span of steps of a run per call. E (R, N, d); U (R, M, ld) as
    :func:`padded` makes it; weights and targets as in :func:`dense_steps`; lr (R, S); optimizer:
    sign-like Adam or sign-SGD.
    """
    lib = load()
    assert lib is not None and supports(V) and all(t.is_contiguous() for t in (V, E, U))
    runs, n, d = E.shape
    m, ld = U.shape[1], U.shape[2]
    assert V.shape == (runs, d, m) and ld == padded_length(d) and lr.shape == weights.shape[:2]
    run_spans(
        lib.projected_steps, (d, ld, n, m), (E, U, V), weights, targets,
        _mode_eps(optimizer), lr, scratch=lambda k: lib.projected_scratch(d, m),
        elements=d * d,
    )  # fmt: skip


def _mode_eps(optimizer: AbstractOptimizer) -> tuple[int, float]:
    """The compiled kernels' (mode, eps) of a stateless optimiser entry: its own
    ``native_mode``, never its name."""
    assert optimizer.stateless and optimizer.native_mode is not None, optimizer
    return optimizer.native_mode, getattr(optimizer, "eps", 0.0)


def table_steps(
    table: torch.Tensor,
    gram_inputs: torch.Tensor,
    gram_outputs: torch.Tensor,
    weights: torch.Tensor,
    targets: torch.Tensor,
    lr: torch.Tensor,
) -> None:
    r"""S plain SGD steps of every run of the matrix model, in place on its logit table
    :math:`T = E W^\top U^\top` (R, N, M):
    :math:`T \mathrel{-}= \mathrm{lr} \cdot (E E^\top)[:, x] \Delta (U U^\top)` over the k distinct
    tokens x of each step's batch, a span of steps of a run per call. gram_inputs (R, N, N),
    gram_outputs (R, M, M); weights and targets as in :func:`dense_steps`; lr (R, S).
    """
    lib = load()
    assert lib is not None
    assert all(t.is_contiguous() and available(t) for t in (table, gram_inputs, gram_outputs))
    _, n, m = table.shape
    assert lr.shape == weights.shape[:2]
    run_spans(
        lib.table_steps, (n, m), (table, gram_inputs, gram_outputs), weights, targets, (), lr,
        scratch=lambda k: 2 * n * m, elements=16 * n * m,
    )  # fmt: skip


def run_spans(
    function: Callable[..., int],
    dims: Sequence[int],
    state: Sequence[torch.Tensor | None],
    weights: torch.Tensor,
    targets: torch.Tensor,
    options: Sequence[int | float],
    lr: torch.Tensor,
    *,
    scratch: Callable[[int], int],
    elements: int,
) -> None:
    """Call a span kernel of ``kernels.c`` on blocks of runs (over threads). Its arguments are
    ``(runs, steps, *dims, *state, counts, rows, weights, targets, *options, lr, scratch)``:
    pointers to the first run's ``state`` tensors (R, ·) (NULL for None), and the steps' tables
    in (run, step) order, made here from ``weights`` (R, S, N): the number of distinct tokens
    of every step (those of nonzero weight), their ids and their weights. ``scratch(k)``: the
    floats a run-step with k distinct tokens needs; ``elements``: the work of a run-step, for
    :func:`run_blocks`.
    """
    runs, steps = weights.shape[:2]
    present = weights > 0
    counts = present.sum(2).contiguous()  # int64
    rows = present.nonzero()[:, 2].contiguous()
    row_weights = weights[present].to(torch.float32).contiguous()
    targets, lr = targets.to(torch.int64).contiguous(), lr.to(torch.float32).contiguous()
    offsets = [0, *itertools.accumulate(counts.sum(1).tolist())]
    size = scratch(int(counts.max()) if counts.numel() else 0)

    def block(runs_: range) -> None:
        first, count = runs_.start, len(runs_)
        pointers = [0 if t is None else t[first].data_ptr() for t in state]
        work = torch.empty(size, dtype=torch.float32)  # held while the kernel runs
        status = function(
            count, steps, *dims, *pointers, counts[first].data_ptr(),
            rows[offsets[first] :].data_ptr(), row_weights[offsets[first] :].data_ptr(),
            targets.data_ptr(), *options, lr[first].data_ptr(), work.data_ptr(),
        )  # fmt: skip
        assert status == 0

    run_blocks(block, runs, runs * steps * elements)

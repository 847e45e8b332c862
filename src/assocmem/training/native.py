"""A fused CPU kernel for the sign-like step of the matrix model (ARCHITECTURE.md idea 4).

Under sign-like Adam (β = (0, 0)) and sign-SGD the matrix model's step needs, for every run,
the d×M change ``S Uᵀ`` where ``S = shape(P U)`` is the elementwise sign of the rank-≤M
gradient ``Gᵀ = P U`` (d×d), ``shape(g) = g / (|g| + eps)`` (Adam, exactly as ``torch.optim``
divides) or ``sign(g)``. Done with torch ops this is three elementwise passes and two skinny
matmuls over d² entries per run and step, all memory-bound. The C kernel below forms each row
of ``Gᵀ`` a vector at a time in registers, shapes it and accumulates its contribution to the
d×M result straight away, so the d×d matrix is never stored: about 0.5 ms per run-step at
d = 1000 on one core, against about 2 ms for the torch ops.

The kernel is compiled on first use with the system C compiler (``$CC`` or ``cc``), loaded with
:mod:`ctypes` and called on a few threads (one run at a time each; ctypes releases the GIL).
Each run's numbers depend only on that run's inputs, so batching never changes results. When no
compiler is available (or ``ASSOCMEM_NATIVE=0``), :func:`load` returns None and the engine uses
the torch ops instead; the two agree to float rounding (tested).
"""

import ctypes
import itertools
import os
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import torch

PARALLEL_ELEMENTS = 2**20  # d² × runs above which the runs are split over threads
MAX_OUTPUTS = 8  # M ≤ 8 is compiled with register accumulators; larger M uses torch ops

SOURCE = r"""
#include <math.h>
#define VW 16
#define NR 2
typedef float vf __attribute__((vector_size(VW * 4)));
typedef int vi __attribute__((vector_size(VW * 4)));
typedef float vfu __attribute__((vector_size(VW * 4), aligned(4)));

/* mode 0: g / (|g| + eps) (Adam with betas (0, 0)); mode 1: sign(g) (0 and NaN kept). */
static inline __attribute__((always_inline)) vf shape(vf g, vf eps, int mode) {
    vi bits = (vi)g;
    if (mode == 0) return g / ((vf)(bits & 0x7fffffff) + eps);
    vi s = (bits & (int)0x80000000) | (vi)((vf){0} + 1.0f);
    vi keep = (g == 0.0f) | (g != g);
    return (vf)((s & ~keep) | (bits & keep));
}
static inline float shape1(float g, float eps, int mode) {
    if (mode == 0) return g / (fabsf(g) + eps);
    return g > 0.0f ? 1.0f : (g < 0.0f ? -1.0f : g);
}
/* nr rows of one run: out[r, k] = sum_j shape(sum_k' p[k', r] U[k', j]) U[k, j]. */
static inline __attribute__((always_inline)) void rows(const int m, const int nr, long d,
        const float *p, const float *U, float eps, int mode, float *out) {
    vf acc[NR][8], pk[NR][8];
    vf veps = (vf){0} + eps;
    for (int r = 0; r < nr; r++)
        for (int k = 0; k < m; k++) { acc[r][k] = (vf){0}; pk[r][k] = (vf){0} + p[k * d + r]; }
    long j = 0;
    for (; j + VW <= d; j += VW) {
        vf u[8];
        for (int k = 0; k < m; k++) u[k] = *(const vfu *)(U + k * d + j);
        for (int r = 0; r < nr; r++) {
            vf g = pk[r][0] * u[0];
            for (int k = 1; k < m; k++) g += pk[r][k] * u[k];
            vf s = shape(g, veps, mode);
            for (int k = 0; k < m; k++) acc[r][k] += s * u[k];
        }
    }
    for (int r = 0; r < nr; r++)
        for (int k = 0; k < m; k++) {
            float total = 0.0f;
            for (int l = 0; l < VW; l++) total += acc[r][k][l];
            out[r * m + k] = total;
        }
    for (; j < d; j++)
        for (int r = 0; r < nr; r++) {
            float g = p[r] * U[j];
            for (int k = 1; k < m; k++) g += p[k * d + r] * U[k * d + j];
            float s = shape1(g, eps, mode);
            for (int k = 0; k < m; k++) out[r * m + k] += s * U[k * d + j];
        }
}
#define CASE(M) case M: \
    for (; i + NR <= d; i += NR) rows(M, NR, d, P + i, U, eps, mode, out + i * M); \
    for (; i < d; i++) rows(M, 1, d, P + i, U, eps, mode, out + i * M); \
    break;
/* Runs one after the other: P (runs, m, d), U (runs, m, d), out (runs, d, m), C-contiguous. */
int sign_project(long runs, long d, long m, const float *P, const float *U, float eps,
                 int mode, float *out) {
    if (m < 1 || m > 8) return -1;
    for (long r = 0; r < runs; r++, P += d * m, U += m * d, out += d * m) {
        long i = 0;
        switch (m) { CASE(1) CASE(2) CASE(3) CASE(4) CASE(5) CASE(6) CASE(7) CASE(8) }
    }
    return 0;
}

/* W (rows, cols) -= lr shape(Aᵀ B) with A (k, rows), B (k, cols): the sign-like step of a
   dense matrix from its rank-k gradient, one row of Aᵀ B at a time (never stored). */
int sign_update(long rows, long cols, long k, const float *A, const float *B, float eps,
                int mode, float lr, float *W) {
    vf veps = (vf){0} + eps, vlr = (vf){0} + lr;
    for (long i = 0; i < rows; i++) {
        float *w = W + i * cols;
        long j = 0;
        for (; j + VW <= cols; j += VW) {
            vf g = ((vf){0} + A[i]) * *(const vfu *)(B + j);
            for (long x = 1; x < k; x++)
                g += ((vf){0} + A[x * rows + i]) * *(const vfu *)(B + x * cols + j);
            *(vfu *)(w + j) = *(vfu *)(w + j) - vlr * shape(g, veps, mode);
        }
        for (; j < cols; j++) {
            float g = A[i] * B[j];
            for (long x = 1; x < k; x++) g += A[x * rows + i] * B[x * cols + j];
            w[j] = w[j] - lr * shape1(g, eps, mode);
        }
    }
    return 0;
}

/* exp(x) for x <= 0 from IEEE add/mul/fma only (within 2 ulp; 0 below -87), so the vector
   loop and its scalar tail give the same bits wherever a row falls. */
static inline float exp_nonpositive(float x) {
    x = x < -87.0f ? -87.0f : x;
    float k = (x * 1.44269504f + 12582912.0f) - 12582912.0f; /* round to nearest */
    float r = x - k * 0.693145752f - k * 1.42860677e-6f;
    float p = 1.98756912e-4f;
    p = p * r + 1.39819994e-3f;
    p = p * r + 8.33345205e-3f;
    p = p * r + 4.16657962e-2f;
    p = p * r + 1.66666657e-1f;
    p = p * r + 0.5f;
    p = p * r * r + r + 1.0f;
    union { float f; int i; } scale = { .i = ((int)k + 127) << 23 };
    return x <= -87.0f ? 0.0f : p * scale.f;
}
/* Rows of logits (rows, m): out = weight[row] (softmax(row) - onehot(targets[row % n])). */
void softmax_error(long rows, long m, long n, const float *logits, const long *targets,
                   const float *weights, float *out) {
    for (long row = 0; row < rows; row++) {
        const float *x = logits + row * m;
        float top = x[0];
        for (long k = 1; k < m; k++) top = x[k] > top ? x[k] : top;
        for (long k = 0; k < m; k++) out[row * m + k] = x[k] - top;
    }
    for (long i = 0; i < rows * m; i++) out[i] = exp_nonpositive(out[i]);
    for (long row = 0; row < rows; row++) {
        float *e = out + row * m, total = 0.0f;
        for (long k = 0; k < m; k++) total += e[k];
        float scale = weights[row] / total;
        for (long k = 0; k < m; k++) e[k] *= scale;
        e[targets[row % n]] -= weights[row];
    }
}
"""

FLAGS = ("-O3", "-march=native", "-fno-math-errno", "-shared", "-fPIC")

_loaded: dict[str, ctypes.CDLL | None] = {}


def _compile() -> ctypes.CDLL | None:
    compiler = os.environ.get("CC", "cc")
    with tempfile.TemporaryDirectory(prefix="assocmem-") as folder:
        source, library = Path(folder) / "sign.c", Path(folder) / "sign.so"
        source.write_text(SOURCE)
        try:
            subprocess.run(
                [compiler, *FLAGS, str(source), "-o", str(library)],
                check=True,
                capture_output=True,
                timeout=120,
            )
            lib = ctypes.CDLL(str(library))  # stays mapped after the folder is removed
        except (OSError, subprocess.SubprocessError):
            return None
    lib.sign_project.restype = ctypes.c_int
    lib.sign_project.argtypes = [
        ctypes.c_long,
        ctypes.c_long,
        ctypes.c_long,
        ctypes.c_void_p,
        ctypes.c_void_p,
        ctypes.c_float,
        ctypes.c_int,
        ctypes.c_void_p,
    ]
    lib.sign_update.restype = ctypes.c_int
    lib.sign_update.argtypes = (
        [ctypes.c_long] * 3
        + [ctypes.c_void_p] * 2
        + [
            ctypes.c_float,
            ctypes.c_int,
            ctypes.c_float,
            ctypes.c_void_p,
        ]
    )
    lib.softmax_error.restype = None
    lib.softmax_error.argtypes = [ctypes.c_long] * 3 + [ctypes.c_void_p] * 4
    return lib


def load() -> ctypes.CDLL | None:
    """The compiled kernel (compiled once per process), or None where it is unavailable."""
    if os.environ.get("ASSOCMEM_NATIVE", "1") == "0":
        return None
    if "lib" not in _loaded:
        _loaded["lib"] = _compile()
    return _loaded["lib"]


def available(tensor: torch.Tensor) -> bool:
    """Whether the compiled kernels take this tensor: CPU float32, and a compiler was found."""
    cpu_float = tensor.device.type == "cpu" and tensor.dtype == torch.float32
    return cpu_float and load() is not None


def supports(tensor: torch.Tensor) -> bool:
    """:func:`available` for an (R, ·, M) tensor with M ≤ 8 (M is held in registers)."""
    return tensor.shape[-1] <= MAX_OUTPUTS and available(tensor)


def sign_project(P_t: torch.Tensor, U: torch.Tensor, eps: float, *, sign: bool) -> torch.Tensor:
    """``shape(P U) Uᵀ`` for every run without forming the d×d matrix ``P U``: (R, d, M).

    P_t: (R, M, d) holds ``Pᵀ``; U: (R, M, d); float32 on the CPU. The shape is
    ``g / (|g| + eps)``, or ``sign(g)`` when ``sign``. Large batches of runs are split into
    contiguous blocks over ``torch.get_num_threads()`` threads.
    """
    lib = load()
    assert lib is not None and supports(P_t.transpose(1, 2))
    P_t, U = P_t.contiguous(), U.contiguous()
    runs, m, d = P_t.shape
    out = torch.empty(runs, d, m, dtype=P_t.dtype)
    mode = 1 if sign else 0

    def block(runs_: range) -> None:
        first, count = runs_.start, len(runs_)
        pointers = (P_t[first].data_ptr(), U[first].data_ptr(), out[first].data_ptr())
        status = lib.sign_project(count, d, m, pointers[0], pointers[1], eps, mode, pointers[2])
        assert status == 0

    workers = min(runs, torch.get_num_threads()) if runs * d * d >= PARALLEL_ELEMENTS else 1
    if workers <= 1:
        block(range(runs))
    else:
        bounds = [runs * w // workers for w in range(workers + 1)]
        with ThreadPoolExecutor(workers) as pool:
            list(pool.map(block, [range(a, b) for a, b in itertools.pairwise(bounds)]))
    return out


def softmax_error(
    logits: torch.Tensor, targets: torch.Tensor, weights: torch.Tensor
) -> torch.Tensor:
    """``w(x) (softmax(logits) − onehot(f*))`` of every run and token, (R, N, M).

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


def sign_update(
    W: torch.Tensor, A: torch.Tensor, B: torch.Tensor, lr: float, eps: float, *, sign: bool
) -> None:
    """``W −= lr · shape(Aᵀ B)`` in place, one run: W (p, q), A (k, p), B (k, q) float32 CPU.

    The sign-like step of a dense matrix whose gradient ``Aᵀ B`` has rank ≤ k (a learned W:
    ``A`` the hidden-state gradients, ``B`` the embeddings of the k distinct tokens of a batch);
    shape as in :func:`sign_project`. The gradient is never stored.
    """
    lib = load()
    assert lib is not None and available(W) and W.is_contiguous()
    A, B = A.contiguous(), B.contiguous()
    (k, p), q = A.shape, B.shape[1]
    assert W.shape == (p, q) and B.shape[0] == k
    status = lib.sign_update(
        p, q, k, A.data_ptr(), B.data_ptr(), eps, 1 if sign else 0, lr, W.data_ptr()
    )
    assert status == 0

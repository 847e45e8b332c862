/* Compiled CPU kernels of the training engine (see native.py, which loads them; setup.py
   builds this one source into several libraries, one per instruction set).

   sign_project: the sign-like step of the matrix model, projected on U (ProjectedMatrixKernel).
   projected_steps: whole steps of that model, a span of steps of a run per call.
   softmax_error: weighted softmax errors, one row at a time.
   dense_steps: a whole optimiser step of runs of h = W e_x models (DenseKernel).
   table_steps: plain SGD steps of the matrix model in its logit table (TableSGDKernel).
   Every run is computed on its own, so batching never changes a run's numbers.

   Bit-identical on every instruction set: the vectors are GCC/clang generic vectors of a fixed
   width (VW floats), whose operations are lane-wise IEEE operations whatever registers they
   land in; reductions go in a fixed order (hsum: halves, then quarters, ...; dot products: a
   fixed set of accumulators); there is no fused multiply-add (built with -ffp-contract=off),
   exp is exp_nonpositive (IEEE additions and multiplications, not the C library's expf, which
   differs between systems) and sqrt is IEEE's correctly rounded one. So the library
   built for AVX-512, the one for AVX2 and the portable one give the same bits (tested). */
#include <math.h>
#include <stdint.h>
#define VW 16
#define NR 2
typedef float vf __attribute__((vector_size(VW * 4)));
typedef float vf8 __attribute__((vector_size(VW * 2)));
typedef float vf4 __attribute__((vector_size(VW)));
typedef int vi __attribute__((vector_size(VW * 4)));
typedef float vfu __attribute__((vector_size(VW * 4), aligned(4)));

/* mode 0: g / (|g| + eps) (Adam with betas (0, 0)); mode 1: sign(g) (0 and NaN kept);
   mode 2: g (SGD). */
static inline __attribute__((always_inline)) vf shape(vf g, vf eps, int mode) {
    if (mode == 2) return g;
    vi bits = (vi)g;
    if (mode == 0) return g / ((vf)(bits & 0x7fffffff) + eps);
    /* Exact bit operations: ±1 with g's sign bit, except ±0 and NaN, which are kept. */
    vi s = (bits & (int)0x80000000) | (vi)((vf){0} + 1.0f);
    vi keep = (g == 0.0f) | (g != g);
    return (vf)((s & ~keep) | (bits & keep));
}
static inline float shape1(float g, float eps, int mode) {
    if (mode == 2) return g;
    if (mode == 0) return g / (fabsf(g) + eps);
    return g > 0.0f ? 1.0f : (g < 0.0f ? -1.0f : g);
}
/* The sum of a vector's lanes in a fixed order: lane i + lane i + 8, then i + 4, i + 2, i + 1
   (pairwise, the same bits on every instruction set). */
static inline float hsum(vf v) {
    union { vf whole; vf8 half[2]; } a = {v};
    union { vf8 whole; vf4 half[2]; } b = {a.half[0] + a.half[1]};
    vf4 q = b.half[0] + b.half[1];
    float pair0 = q[0] + q[2], pair1 = q[1] + q[3];
    return pair0 + pair1;
}
/* nr rows of one run: out[r, k] = sum_j shape(sum_k' p[k', r] U[k', j]) U[k, j], U's rows of
   stride ld (a multiple of VW, zero beyond d: there g = 0 and shape(0) = 0 adds nothing). */
static inline __attribute__((always_inline)) void rows(const int m, const int nr, int64_t d,
        int64_t ld, const float *p, const float *U, float eps, int mode, float *out) {
    vf acc[NR][8], pk[NR][8];
    vf veps = (vf){0} + eps;
    for (int r = 0; r < nr; r++)
        for (int k = 0; k < m; k++) { acc[r][k] = (vf){0}; pk[r][k] = (vf){0} + p[k * d + r]; }
    for (int64_t j = 0; j < ld; j += VW) {
        vf u[8];
        for (int k = 0; k < m; k++) u[k] = *(const vfu *)(U + k * ld + j);
        for (int r = 0; r < nr; r++) {
            vf g = pk[r][0] * u[0];
            for (int k = 1; k < m; k++) g += pk[r][k] * u[k];
            vf s = shape(g, veps, mode);
            for (int k = 0; k < m; k++) acc[r][k] += s * u[k];
        }
    }
    for (int r = 0; r < nr; r++)
        for (int k = 0; k < m; k++) out[r * m + k] = hsum(acc[r][k]);
}
#define CASE(M) case M: \
    for (; i + NR <= d; i += NR) rows(M, NR, d, ld, P + i, U, eps, mode, out + i * M); \
    for (; i < d; i++) rows(M, 1, d, ld, P + i, U, eps, mode, out + i * M); \
    break;
/* One run: P (m, d) holds Pᵀ, U (m, ld) zero-padded rows, out (d, m); 1 <= m <= 8. */
static void project(int64_t d, int64_t ld, int64_t m, const float *P, const float *U, float eps,
                    int mode, float *out) {
    int64_t i = 0;
    switch (m) { CASE(1) CASE(2) CASE(3) CASE(4) CASE(5) CASE(6) CASE(7) CASE(8) }
}
/* Runs one after the other: P (runs, m, d), U (runs, m, ld), out (runs, d, m), C-contiguous. */
int sign_project(int64_t runs, int64_t d, int64_t ld, int64_t m, const float *P, const float *U,
                 float eps, int mode, float *out) {
    if (m < 1 || m > 8 || ld < d || ld % VW) return -1;
    for (int64_t r = 0; r < runs; r++, P += d * m, U += m * ld, out += d * m)
        project(d, ld, m, P, U, eps, mode, out);
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
void softmax_error(int64_t rows, int64_t m, int64_t n, const float *logits, const int64_t *targets,
                   const float *weights, float *out) {
    for (int64_t row = 0; row < rows; row++) {
        const float *x = logits + row * m;
        float top = x[0];
        for (int64_t k = 1; k < m; k++) top = x[k] > top ? x[k] : top;
        for (int64_t k = 0; k < m; k++) out[row * m + k] = x[k] - top;
    }
    for (int64_t i = 0; i < rows * m; i++) out[i] = exp_nonpositive(out[i]);
    for (int64_t row = 0; row < rows; row++) {
        float *e = out + row * m, total = 0.0f;
        for (int64_t k = 0; k < m; k++) total += e[k];
        float scale = weights[row] / total;
        for (int64_t k = 0; k < m; k++) e[k] *= scale;
        e[targets[row % n]] -= weights[row];
    }
}

/* A row of m logits, in place: weight (softmax(row) − onehot(target)). */
static void softmax_row(int64_t m, float *row, float weight, int64_t target) {
    float top = -INFINITY, total = 0.0f;
    for (int64_t c = 0; c < m; c++) top = row[c] > top ? row[c] : top;
    for (int64_t c = 0; c < m; c++) total += (row[c] = exp_nonpositive(row[c] - top));
    for (int64_t c = 0; c < m; c++) row[c] = weight * (row[c] / total);
    row[target] -= weight;
}

/* ---- dense_steps: one optimiser step of h = W e_x models, a run at a time ----
   W's rows have stride ld ≥ d (DenseKernel pads them to a multiple of VW floats, so every row
   is aligned and the column loops have no tail); the token rows e gathered from E get the same
   stride, padded with zeros, which makes W's padding columns inert: they add nothing to h or
   to E's gradient, and their gradient is 0, so they never move. */

#define SPLAT(x) ((vf){x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x})

/* Σ a[i] b[i] over n floats (any alignment), four vector accumulators. */
static float dot(const float *a, const float *b, int64_t n) {
    vf acc[4] = {{0}, {0}, {0}, {0}};
    int64_t i = 0;
    for (; i + 4 * VW <= n; i += 4 * VW)
        for (int v = 0; v < 4; v++)
            acc[v] += *(const vfu *)(a + i + v * VW) * *(const vfu *)(b + i + v * VW);
    for (; i + VW <= n; i += VW) acc[0] += *(const vfu *)(a + i) * *(const vfu *)(b + i);
    float total = hsum(acc[0] + acc[1] + acc[2] + acc[3]);
    for (; i < n; i++) total += a[i] * b[i];
    return total;
}

/* h (k, ld) = e (k, ld) Wᵀ for the d rows of W, 4 rows of W by 4 tokens at a time (indices
   clamped at the edges, their extra results dropped). */
static void forward(int64_t d, int64_t ld, int64_t k, const float *W, const float *e, float *h) {
    for (int64_t i = 0; i < d; i += 4) {
        const float *w[4];
        for (int r = 0; r < 4; r++) w[r] = W + (i + r < d ? i + r : d - 1) * ld;
        for (int64_t x = 0; x < k; x += 4) {
            const float *ex[4];
            for (int c = 0; c < 4; c++) ex[c] = e + (x + c < k ? x + c : k - 1) * ld;
            vf acc[4][4];
            for (int r = 0; r < 4; r++)
                for (int c = 0; c < 4; c++) acc[r][c] = (vf){0};
            int64_t j = 0;
            for (; j + VW <= ld; j += VW) {
                vf wv[4], ev[4];
                for (int r = 0; r < 4; r++) wv[r] = *(const vfu *)(w[r] + j);
                for (int c = 0; c < 4; c++) ev[c] = *(const vfu *)(ex[c] + j);
                for (int r = 0; r < 4; r++)
                    for (int c = 0; c < 4; c++) acc[r][c] += wv[r] * ev[c];
            }
            for (int r = 0; r < 4; r++)
                for (int c = 0; c < 4; c++) {
                    float total = hsum(acc[r][c]);
                    for (int64_t jj = j; jj < ld; jj++) total += w[r][jj] * ex[c][jj];
                    if (i + r < d && x + c < k) h[(x + c) * ld + i + r] = total;
                }
        }
    }
}

/* nj vectors at column j of rows i..i+nr of W: g = (ghᵀ e)[rows, cols]; with learn_e, first
   de[:, cols] += gh[:, rows] W_old[rows, cols]; then W[rows, cols] -= lr shape(g). */
static inline __attribute__((always_inline)) void chunk(const int nr, const int nj,
        const int learn_e, int64_t ld, int64_t k, int64_t i, int64_t j, float *W, const float *ghT,
        const float *e, float *de, vf vlr, vf veps, int mode) {
    vf w[4][2], g[4][2];
    for (int r = 0; r < nr; r++)
        for (int v = 0; v < nj; v++) {
            w[r][v] = *(vfu *)(W + (i + r) * ld + j + v * VW);
            g[r][v] = (vf){0};
        }
    for (int64_t x = 0; x < k; x++) {
        vf ev[2], dv[2];
        for (int v = 0; v < nj; v++) {
            ev[v] = *(const vfu *)(e + x * ld + j + v * VW);
            if (learn_e) dv[v] = *(vfu *)(de + x * ld + j + v * VW);
        }
        for (int r = 0; r < nr; r++) {
            float scalar = ghT[(i + r) * k + x];
            vf a = SPLAT(scalar);
            for (int v = 0; v < nj; v++) {
                g[r][v] += a * ev[v];
                if (learn_e) dv[v] += a * w[r][v];
            }
        }
        if (learn_e)
            for (int v = 0; v < nj; v++) *(vfu *)(de + x * ld + j + v * VW) = dv[v];
    }
    for (int r = 0; r < nr; r++)
        for (int v = 0; v < nj; v++)
            *(vfu *)(W + (i + r) * ld + j + v * VW) = w[r][v] - vlr * shape(g[r][v], veps, mode);
}

static inline __attribute__((always_inline)) void rows_of_W(const int nr, const int learn_e,
        int64_t ld, int64_t k, int64_t i, int64_t j0, int64_t j1, float *W, const float *ghT, const float *e,
        float *de, float lr, float eps, int mode) {
    vf vlr = SPLAT(lr), veps = SPLAT(eps);
    int64_t j = j0;
    for (; j + 2 * VW <= j1; j += 2 * VW)
        chunk(nr, 2, learn_e, ld, k, i, j, W, ghT, e, de, vlr, veps, mode);
    for (; j + VW <= j1; j += VW) chunk(nr, 1, learn_e, ld, k, i, j, W, ghT, e, de, vlr, veps, mode);
    for (; j < j1; j++)
        for (int r = 0; r < nr; r++) {
            float *w = W + (i + r) * ld + j, g = 0.0f;
            for (int64_t x = 0; x < k; x++) {
                float a = ghT[(i + r) * k + x];
                g += a * e[x * ld + j];
                if (learn_e) de[x * ld + j] += a * *w;
            }
            *w = *w - lr * shape1(g, eps, mode);
        }
}

/* W (d rows of stride ld) -= lr shape(ghᵀ e), the rank-k gradient never stored; with de
   (k, ld) != NULL, first de += gh W (the gradient of the embeddings, through the old W).
   Columns go in blocks that keep the k-row slabs of e and de in cache. */
static void update_W(int64_t d, int64_t ld, int64_t k, float *W, const float *ghT, const float *e,
                     float *de, float lr, float eps, int mode) {
    int64_t block = 32768 / (k > 0 ? k : 1);
    block = block < 64 ? 64 : block - block % (2 * VW);
    for (int64_t j0 = 0; j0 < ld; j0 += block) {
        int64_t j1 = j0 + block < ld ? j0 + block : ld, i = 0;
        if (de) {
            for (; i + 4 <= d; i += 4) rows_of_W(4, 1, ld, k, i, j0, j1, W, ghT, e, de, lr, eps, mode);
            for (; i < d; i++) rows_of_W(1, 1, ld, k, i, j0, j1, W, ghT, e, de, lr, eps, mode);
        } else {
            for (; i + 4 <= d; i += 4) rows_of_W(4, 0, ld, k, i, j0, j1, W, ghT, e, de, lr, eps, mode);
            for (; i < d; i++) rows_of_W(1, 0, ld, k, i, j0, j1, W, ghT, e, de, lr, eps, mode);
        }
    }
}

/* param (count) -= lr shape(grad) */
static void descend(int64_t count, float *param, const float *grad, float lr, float eps, int mode) {
    for (int64_t i = 0; i < count; i++) param[i] = param[i] - lr * shape1(grad[i], eps, mode);
}

/* Scratch floats one run-step needs for k distinct tokens (the ld-strided rows first). */
int64_t dense_scratch(int64_t d, int64_t ld, int64_t m, int64_t k) { return 4 * k * ld + d * k + m * d + k * m + k; }

/* One step of one run: W (d rows, stride ld) always learned, or NULL for the ReLU model
   h = max(e, 0); E (n, d) when learn & 1, U (m, d) when learn & 2. rows (k) are distinct token ids with weights (k) = c(x)/B or p(x), targets
   (n). Mirrors DenseKernel.step_run: h = W e, optional layer norm z = h / sqrt(|h|² + 1e-6),
   delta = w (softmax(z Uᵀ) − onehot), back-propagated by hand; E's gradient goes through the
   old W, U's through the old U. */
static void dense_step(int64_t d, int64_t ld, int64_t m, int64_t k, float *W, float *E, float *U,
        const int64_t *rows, const float *weights, const int64_t *targets, int layer_norm, int learn,
        int mode, float eps, float lr_w, float lr_e, float lr_u, float *scratch) {
    float *e = scratch, *z = e + k * ld, *gh = z + k * ld, *de = gh + k * ld, *ghT = de + k * ld;
    float *gU = ghT + d * k, *delta = gU + m * d, *scale = delta + k * m;
    for (int64_t x = 0; x < k; x++)
        for (int64_t j = 0; j < ld; j++) e[x * ld + j] = j < d ? E[rows[x] * d + j] : 0.0f;
    if (W)
        forward(d, ld, k, W, e, z);
    else /* the ReLU model: h = max(e, 0) */
        for (int64_t i = 0; i < k * ld; i++) z[i] = e[i] > 0.0f ? e[i] : 0.0f;
    for (int64_t x = 0; x < k; x++) {
        float *zx = z + x * ld, *gx = gh + x * ld, *dx = delta + x * m;
        scale[x] = 1.0f;
        if (layer_norm) {
            scale[x] = sqrtf(dot(zx, zx, d) + 1e-6f);
            for (int64_t i = 0; i < d; i++) zx[i] = zx[i] / scale[x];
        }
        for (int64_t c = 0; c < m; c++) dx[c] = dot(zx, U + c * d, d);
        softmax_row(m, dx, weights[x], targets[rows[x]]);
        for (int64_t i = 0; i < d; i++) {
            float sum = 0.0f;
            for (int64_t c = 0; c < m; c++) sum += dx[c] * U[c * d + i];
            gx[i] = sum;
        }
        if (layer_norm) {
            float along = dot(zx, gx, d);
            for (int64_t i = 0; i < d; i++) gx[i] = (gx[i] - zx[i] * along) / scale[x];
        }
    }
    if (learn & 2)
        for (int64_t c = 0; c < m; c++) {
            float *row = gU + c * d;
            for (int64_t i = 0; i < d; i++) row[i] = 0.0f;
            for (int64_t x = 0; x < k; x++)
                for (int64_t i = 0; i < d; i++) row[i] += delta[x * m + c] * z[x * ld + i];
        }
    if (W) {
        for (int64_t x = 0; x < k; x++)
            for (int64_t i = 0; i < d; i++) ghT[i * k + x] = gh[x * ld + i];
        if (learn & 1)
            for (int64_t i = 0; i < k * ld; i++) de[i] = 0.0f;
        update_W(d, ld, k, W, ghT, e, (learn & 1) ? de : 0, lr_w, eps, mode);
    } else
        for (int64_t i = 0; i < k * ld; i++) de[i] = e[i] > 0.0f ? gh[i] : 0.0f;
    if (learn & 1)
        for (int64_t x = 0; x < k; x++) descend(d, E + rows[x] * d, de + x * ld, lr_e, eps, mode);
    if (learn & 2) descend(m * d, U, gU, lr_u, eps, mode);
}

/* `steps` optimiser steps of each run, the runs one after another (so a run's W stays in cache
   from one step to the next): W (runs, d, ld) or NULL (ReLU model), E (runs, n, d), U (runs, m, d). Step s of run r
   is entry r * steps + s of counts (its number of rows), of the concatenated rows and weights,
   and of lr (3 rates each: W, E, U). scratch holds dense_scratch(d, ld, m, max count) floats. */
int dense_steps(int64_t runs, int64_t steps, int64_t d, int64_t ld, int64_t n, int64_t m, float *W, float *E,
                float *U, const int64_t *counts, const int64_t *rows, const float *weights,
                const int64_t *targets, int layer_norm, int learn, int mode, float eps,
                const float *lr, float *scratch) {
    if (mode < 0 || mode > 2 || ld < d) return -1;
    for (int64_t r = 0; r < runs; r++)
        for (int64_t s = 0; s < steps; s++, counts++, lr += 3) {
            dense_step(d, ld, m, *counts, W ? W + r * d * ld : 0, E + r * n * d, U + r * m * d, rows,
                       weights, targets, layer_norm, learn, mode, eps, lr[0], lr[1], lr[2],
                       scratch);
            rows += *counts;
            weights += *counts;
        }
    return 0;
}

/* ---- projected_steps: whole steps of the matrix model under sign-like steps ----
   The state is V = Wᵀ Uᵀ (d, m); E (n, d) and U (m, d) are fixed. A step over k distinct
   tokens x with weights w(x): logits e_x V, delta = w (softmax − onehot) (k, m),
   Pᵀ = deltaᵀ e (m, d), then V -= lr shape(P U) Uᵀ (see project). */
int64_t projected_scratch(int64_t d, int64_t m) { return 3 * m * d; }

static void projected_step(int64_t d, int64_t ld, int64_t m, const float *E, const float *U, float *V,
        int64_t k, const int64_t *rows, const float *weights, const int64_t *targets, int mode,
        float eps, float lr, float *scratch) {
    float *Pt = scratch, *out = Pt + m * d, *Vt = out + m * d, delta[8];
    for (int64_t i = 0; i < d; i++)
        for (int64_t c = 0; c < m; c++) {
            Vt[c * d + i] = V[i * m + c];
            Pt[c * d + i] = 0.0f;
        }
    for (int64_t x = 0; x < k; x++) {
        const float *e = E + rows[x] * d;
        for (int64_t c = 0; c < m; c++) delta[c] = dot(e, Vt + c * d, d);
        softmax_row(m, delta, weights[x], targets[rows[x]]);
        for (int64_t c = 0; c < m; c++)
            for (int64_t i = 0; i < d; i++) Pt[c * d + i] += delta[c] * e[i];
    }
    project(d, ld, m, Pt, U, eps, mode, out);
    for (int64_t i = 0; i < d * m; i++) V[i] = V[i] - lr * out[i];
}

/* `steps` steps of each run, the runs one after another: E (runs, n, d), U (runs, m, ld)
   zero-padded as in project, V (runs, d, m). Step s of run r is entry r * steps + s of counts (its number of distinct
   tokens), of the concatenated rows and weights, and of lr. scratch: projected_scratch(d, m). */
int projected_steps(int64_t runs, int64_t steps, int64_t d, int64_t ld, int64_t n, int64_t m, const float *E,
                    const float *U, float *V, const int64_t *counts, const int64_t *rows,
                    const float *weights, const int64_t *targets, int mode, float eps,
                    const float *lr, float *scratch) {
    if (m < 1 || m > 8 || mode < 0 || mode > 1 || ld < d || ld % VW) return -1;
    for (int64_t r = 0; r < runs; r++)
        for (int64_t s = 0; s < steps; s++, counts++, lr++) {
            projected_step(d, ld, m, E + r * n * d, U + r * m * ld, V + r * d * m, *counts, rows,
                           weights, targets, mode, eps, *lr, scratch);
            rows += *counts;
            weights += *counts;
        }
    return 0;
}

/* ---- table_steps: whole SGD steps of the matrix model in its logit table ----
   The state is T = E Wᵀ Uᵀ (n, m); an SGD step over k distinct tokens x with weights w(x)
   moves it by -lr Gin[:, x] delta Gout, delta = w (softmax(T[x]) − onehot) (k, m), with
   Gin = E Eᵀ (n, n) and Gout = U Uᵀ (m, m): O(n k m) per step. scratch: 2 k m floats. */
static void table_step(int64_t n, int64_t m, float *T, const float *Gin, const float *Gout, int64_t k,
        const int64_t *rows, const float *weights, const int64_t *targets, float lr, float *scratch) {
    float *delta = scratch, *change = delta + k * m;
    for (int64_t x = 0; x < k; x++) {
        float *dx = delta + x * m;
        for (int64_t c = 0; c < m; c++) dx[c] = T[rows[x] * m + c];
        softmax_row(m, dx, weights[x], targets[rows[x]]);
        for (int64_t c = 0; c < m; c++) { /* (delta Gout)[x] */
            float sum = 0.0f;
            for (int64_t c2 = 0; c2 < m; c2++) sum += dx[c2] * Gout[c2 * m + c];
            change[x * m + c] = sum;
        }
    }
    for (int64_t i = 0; i < n; i++)
        for (int64_t c = 0; c < m; c++) {
            float sum = 0.0f;
            for (int64_t x = 0; x < k; x++) sum += Gin[i * n + rows[x]] * change[x * m + c];
            T[i * m + c] = T[i * m + c] - lr * sum;
        }
}

/* `steps` steps of each run: T (runs, n, m), Gin (runs, n, n), Gout (runs, m, m); counts,
   rows, weights and lr as in projected_steps. scratch: 2 n m floats (k <= n). */
int table_steps(int64_t runs, int64_t steps, int64_t n, int64_t m, float *T, const float *Gin,
                const float *Gout, const int64_t *counts, const int64_t *rows, const float *weights,
                const int64_t *targets, const float *lr, float *scratch) {
    for (int64_t r = 0; r < runs; r++)
        for (int64_t s = 0; s < steps; s++, counts++, lr++) {
            if (*counts > n) return -1;
            table_step(n, m, T + r * n * m, Gin + r * n * n, Gout + r * m * m, *counts, rows,
                       weights, targets, *lr, scratch);
            rows += *counts;
            weights += *counts;
        }
    return 0;
}

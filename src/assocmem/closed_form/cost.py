r"""The cost model of the closed-form samplers, from the configuration alone.

Per trial, each sampler draws some standard normal numbers and does some floating-point work;
``auto`` picks the exact-in-law sampler when it is exact (i.i.d. Gaussian input embeddings) and
this model says it is cheaper, never from the device, free memory or timings, so the choice
(part of a run's identity) is the same on every host. See ``docs/kernels-sampling.md``.

Explicit embeddings (docs: kernels-sampling.md): :math:`N\cdot D` numbers (D = d_max) and about
:math:`4\cdot N\cdot M\cdot (K_f\cdot D + K_v\cdot \sum_i d_i)` flops (K_f weightings fixed along d,
K_v changing with d).

Exact in law (idea 8): with ``c`` distinct stored columns (``M`` per distinct weighting) and a
basis of rank :math:`r \le \min(N, c)`:
:math:`r \cdot D + N \cdot \sum_{\mathrm{blocks}} \min(\text{width}, \text{live columns}, r)`
numbers, where a block is the coordinates :math:`(d_{i-1}, d_i]` and its live columns those still
used at some dimension ≥ d_i; flops: the basis (:math:`4\cdot N\cdot c^2`, per class without label
noise), the draws (:math:`2\cdot N\cdot k\cdot \mathrm{live}` per block) and the assembly at each d
(:math:`4 \cdot N \cdot r \cdot \text{columns at } d`).

This module reads a config through the attributes it names (no import of the config module:
the config's validation calls it).
"""

import math
from dataclasses import dataclass
from typing import Any

from assocmem.embeddings import CLUSTERED, DRAW_BLOCK, is_iid_gaussian
from assocmem.ops.scores import STORE_BLOCK
from assocmem.ops.top1 import bytes_per_row

SAMPLERS = ("explicit", "in_law")  # the registry's names (checked by a test)
CHOICES = ("auto", *SAMPLERS)
# One standard normal costs about as much as this many flops of a skinny matrix product
# (torch on CPU: ~1.4e8 normals/s against ~9e9 flop/s on 2 cores). A constant, not a
# measurement taken at run time: the resolved sampler must not depend on the machine.
FLOPS_PER_NORMAL = 64.0
BYTES = {"float32": 4, "float64": 8}
# Top-1 in blocks of inputs (closed_form/blocked.py) from this many scores N·M on: decided by
# the config alone, never the memory budget, as the two paths round differently
BLOCKED_FROM = 2**27
BLOCK_SHARE = 0.125  # of the memory budget, at most, for one block's scores
MAX_BLOCK_ROWS = 2**13  # more rows per block gain nothing on any device
DRAW_AHEAD_BYTES = 2**26  # the in-law sampler draws a trial's block normals ahead below this
STACK_DIMS_BYTES = 2**22  # ... and assembles every d at once when its H R at every d fits this


@dataclass(frozen=True)
class Cost:
    """One trial's cost under one sampler: normal numbers drawn, flops, peak working set, and
    what its draws hold when made ahead (in a helper thread, while the previous trial runs)."""

    sampler: str
    numbers: float
    flops: float
    working_set: int  # bytes
    draw_ahead: int  # bytes, at most working_set

    @property
    def units(self) -> float:
        """Numbers plus flops in normal-number equivalents (what ``auto`` compares)."""
        return self.numbers + self.flops / FLOPS_PER_NORMAL


@dataclass(frozen=True)
class Layout:
    """What the cost depends on: sizes, and the distinct weightings along the sorted dims.

    ``ends[i]`` counts the distinct d-dependent weightings last used at ``dims[i]``.
    """

    n_inputs: int
    n_outputs: int
    dims: tuple[int, ...]
    n_fixed: int  # weightings fixed along d (one per scheme × T)
    n_varying_per_dim: int  # d-dependent weightings used at each d
    ends: tuple[int, ...]
    n_sample_sizes: int
    max_samples: int
    per_value: int
    per_class_basis: bool  # noise-free labels: the basis splits by output class
    count_bytes: int = 0  # multinomial counts: their O(N)-per-T draw (max_samples is then 0)

    @property
    def n_distinct(self) -> int:
        return self.n_fixed + sum(self.ends)


def layout(cfg: Any) -> Layout:
    """The :class:`Layout` of a closed-form config (``cfg`` has its fields and parsed schemes)."""
    dims = tuple(sorted(set(cfg.dims)))
    sizes = list(dict.fromkeys(cfg.n_samples))
    finite = any(t is not None for t in sizes)
    multinomial = getattr(cfg, "counts", "tokens") == "multinomial" and finite
    n_fixed, per_dim, ends = 0, 0, [0] * len(dims)
    for scheme in cfg.parsed_schemes:
        width = len(sizes) if scheme.uses_data else 1
        if not scheme.uses_dim:
            n_fixed += width
            continue
        per_dim += width
        for i in _last_uses(scheme, dims, cfg.n_inputs):
            ends[i] += width
    return Layout(
        n_inputs=cfg.n_inputs,
        n_outputs=cfg.n_outputs,
        dims=dims,
        n_fixed=n_fixed,
        n_varying_per_dim=per_dim,
        ends=tuple(ends),
        n_sample_sizes=len(sizes),
        max_samples=0 if multinomial else max((t or 0) for t in sizes),
        per_value=BYTES[cfg.dtype],
        per_class_basis=cfg.label_noise == 0,
        count_bytes=(
            multinomial_bytes(cfg.n_inputs, cfg.n_outputs, len(sizes)) if multinomial else 0
        ),
    )


def multinomial_bytes(n_inputs: int, n_outputs: int, n_sizes: int) -> int:
    """Multinomial counts of one trial: the binomial tree (2·N₂ float64, N₂ the next power of
    two ≥ N, with a level's temporaries) and the running joint counts and their increments
    (2 · sizes · (M + 1) · N float64): O(N) per sample size, whatever T."""
    width = 1 << max(0, (n_inputs - 1).bit_length())
    return 8 * (4 * width + 2 * n_sizes * (n_outputs + 1) * n_inputs)


def _last_uses(scheme: Any, dims: tuple[int, ...], n_inputs: int) -> list[int]:
    """Index of the last d of each distinct weighting of a d-dependent scheme.

    A scheme with a size rule (thresholds: P(d) tokens) repeats its weighting while P(d) does
    not change; any other d-dependent scheme is counted as distinct at every d.
    """
    rule = getattr(scheme, "rule", None)
    if rule is None or not hasattr(rule, "size"):
        return list(range(len(dims)))
    sizes = [rule.size(d, n_inputs) for d in dims]
    return [i for i in range(len(dims)) if i + 1 == len(dims) or sizes[i + 1] != sizes[i]]


def explicit_cost(shape: Layout) -> Cost:
    """Explicit embeddings: N·D normals; flops of the nested running sums."""
    n, m, dims = shape.n_inputs, shape.n_outputs, shape.dims
    d_max = dims[-1]
    flops = 4.0 * n * m * (shape.n_fixed * d_max + shape.n_varying_per_dim * sum(dims))
    flops += _evaluation_flops(shape)
    held = _explicit_bytes(shape)  # the embeddings are the draws: count the whole trial
    return Cost("explicit", float(n * d_max + m * d_max), flops, held, held)


def in_law_cost(shape: Layout) -> Cost:
    """Exact in law: the basis coordinates Z and, per block, N × min(width, live, r) normals."""
    n, m, dims = shape.n_inputs, shape.n_outputs, shape.dims
    columns = m * shape.n_distinct
    rank = min(n, columns)
    numbers, flops, prev = float(rank * dims[-1] + m * dims[-1]), 0.0, 0
    live = columns
    for i, d in enumerate(dims):
        k = min(d - prev, live, rank)
        numbers += n * k
        flops += 2.0 * n * k * live + 2.0 * rank * rank * (d - prev)
        at_d = m * (shape.n_fixed + shape.n_varying_per_dim)
        flops += 4.0 * n * rank * at_d
        live -= m * shape.ends[i]
        prev = d
    groups = m if shape.per_class_basis else 1
    flops += 4.0 * n * columns * columns / groups + _evaluation_flops(shape)
    ahead = _basis_bytes(shape, rank, columns) + _common_bytes(shape)
    ahead += rank * dims[-1] * shape.per_value
    ahead += min(int(numbers) * shape.per_value, DRAW_AHEAD_BYTES)  # small: the blocks' normals
    working_set = _in_law_bytes(shape, rank, columns)
    return Cost("in_law", numbers, flops, working_set, min(ahead, working_set))


def _evaluation_flops(shape: Layout) -> float:
    """Scores from the aggregated columns and the argmax: the same under both samplers."""
    columns = shape.n_fixed + shape.n_varying_per_dim
    return 2.0 * len(shape.dims) * columns * shape.n_outputs**2 * shape.n_inputs


def _common_bytes(shape: Layout) -> int:
    """Weights, label laws and sample statistics of one trial (both samplers hold them)."""
    n, m = shape.n_inputs, shape.n_outputs
    columns = shape.n_fixed + shape.n_varying_per_dim * len(shape.dims)
    weights = columns * n * shape.per_value + (shape.n_fixed + shape.n_varying_per_dim) * m * n * 8
    samples = 8 * shape.max_samples * 2 + 8 * n * (shape.n_sample_sizes + 4)
    statistics = 8 * n * (m + 1) * (shape.n_sample_sizes + 2)
    return weights + samples + statistics + shape.count_bytes


def _explicit_bytes(shape: Layout) -> int:
    """The explicit kernel's estimate (unchanged: the embeddings at d_max and score tensors)."""
    n, m, d_max = shape.n_inputs, shape.n_outputs, shape.dims[-1]
    columns = shape.n_fixed + shape.n_varying_per_dim
    embeddings = (n + m) * (d_max + 16) * shape.per_value
    scores = (6 * columns + 1) * n * m * shape.per_value  # and the targets' −∞ mask
    samples = 8 * shape.max_samples * 2 + 8 * n * (shape.n_sample_sizes + 4)
    return embeddings + scores + samples + shape.count_bytes


def _basis_bytes(shape: Layout, rank: int, columns: int) -> int:
    """The basis while it is built: the stored columns, a group's float64 QR, Qᵀ's blocks."""
    n, groups = shape.n_inputs, shape.n_outputs if shape.per_class_basis else 1
    return (3 * 8 * n * columns + 8 * n * rank + rank * n * shape.per_value) // groups


def _in_law_bytes(shape: Layout, rank: int, columns: int) -> int:
    """Basis (float64 while built), running products, one d's scores, and the common arrays."""
    n, m, v = shape.n_inputs, shape.n_outputs, shape.per_value
    running = 2 * columns * n * v  # H·R for the live columns and one block of draws
    at_d = m * (shape.n_fixed + shape.n_varying_per_dim)
    scores = 8 * at_d * n * 8 + m * n * v  # one d: scores, masks, float64 copies for the
    # readout, and the targets' −∞ mask
    stacked = len(shape.dims) * columns * n * v  # every d at once (small): H R at each d,
    scores += 16 * stacked if stacked <= STACK_DIMS_BYTES else 0  # the pairs read, scores
    common = _common_bytes(shape) + rank * shape.dims[-1] * v
    return _basis_bytes(shape, rank, columns) + running + scores + common


def top1_in_blocks(cfg: Any) -> bool:
    r"""The trial is evaluated in blocks of inputs (``closed_form/blocked.py``): from
    :math:`N\cdot M \ge \mathrm{BLOCKED\_FROM}` on, where it applies (explicit embeddings, none
    orthogonal; one-hot labels: no label noise and infinite data; no softmax readout). Smaller runs
    keep the whole path and its bits."""
    return (
        cfg.n_inputs * cfg.n_outputs >= BLOCKED_FROM
        and cfg.sampler in ("auto", "explicit")
        and "orthogonal" not in (cfg.embedding, cfg.output_embedding)
        and cfg.label_noise == 0
        and all(t is None for t in cfg.n_samples)
        and not cfg.readout
    )


def _blocked_fixed_bytes(cfg: Any) -> int:
    """What a blocked trial holds beside its block: the raw input and output coordinates
    (and the temporaries of spherical norms or clustered mixing), the weights, scales,
    flags and limbs of every token, and one d's memories while they are summed."""
    n, m, d_max, v = cfg.n_inputs, cfg.n_outputs, max(cfg.dims), BYTES[cfg.dtype]
    n_dims, columns = len(set(cfg.dims)), len(cfg.schemes)
    drawn = -(-d_max // DRAW_BLOCK) * DRAW_BLOCK
    coordinates = drawn * (n + m) * v
    kinds = (cfg.embedding, cfg.output_embedding)
    if "spherical" in kinds and cfg.nested == "renormalize":  # squares and their running sums
        coordinates += 2 * drawn * max(n, m) * v
    elif "spherical" in kinds or cfg.embedding == CLUSTERED:  # norms; the mixed coordinates
        coordinates += drawn * max(n, m) * v
    per_token = n_dims * columns * (8 + v + 1) + n_dims * v + 8 * 16  # q, scales, flags, limbs
    store = columns * d_max * (2 * d_max + STORE_BLOCK) * v + d_max * STORE_BLOCK * v
    return int(coordinates + n * per_token + n_dims * m * v + store)


def top1_block(cfg: Any) -> int:
    """Inputs per block of a blocked trial: as many as :data:`BLOCK_SHARE` of the budget
    holds, within what the fixed arrays leave (at most :data:`MAX_BLOCK_ROWS`; 0 when not even
    two rows fit). Timing and memory only: the flags do not depend on it (ops/top1.py)."""
    budget = cfg.memory_gb * 2**30
    per_row = bytes_per_row(cfg.n_outputs, max(cfg.dims), len(cfg.schemes), BYTES[cfg.dtype])
    room = min(budget - _blocked_fixed_bytes(cfg), BLOCK_SHARE * budget)
    rows = MAX_BLOCK_ROWS if math.isinf(room) else int(room // per_row)  # inf: no budget
    return 0 if rows < 2 else min(rows, MAX_BLOCK_ROWS, cfg.n_inputs)


def blocked_bytes(cfg: Any) -> int:
    """Peak memory of one blocked trial at its :func:`top1_block` (two rows where none fit)."""
    per_row = bytes_per_row(cfg.n_outputs, max(cfg.dims), len(cfg.schemes), BYTES[cfg.dtype])
    return _blocked_fixed_bytes(cfg) + max(top1_block(cfg), 2) * per_row


def costs(cfg: Any) -> dict[str, Cost]:
    """Both samplers' :class:`Cost` for one trial of ``cfg``."""
    shape = layout(cfg)
    return {"explicit": explicit_cost(shape), "in_law": in_law_cost(shape)}


def in_law_exact(cfg: Any) -> bool:
    """The exact-in-law sampler is exact: i.i.d. Gaussian input embeddings."""
    return is_iid_gaussian(cfg.embedding)


def resolve(cfg: Any) -> str:
    """The sampler that runs: ``cfg.sampler``, or for ``auto`` in_law when exact and cheaper."""
    if cfg.sampler != "auto":
        return str(cfg.sampler)
    if top1_in_blocks(cfg):  # the blocked path draws E explicitly
        return "explicit"
    if not in_law_exact(cfg):
        return "explicit"
    both = costs(cfg)
    return "in_law" if both["in_law"].units < both["explicit"].units else "explicit"


def speedup(cfg: Any) -> float:
    """Explicit over in-law cost units (> 1: the model expects in_law to be faster)."""
    both = costs(cfg)
    return both["explicit"].units / max(both["in_law"].units, 1.0)

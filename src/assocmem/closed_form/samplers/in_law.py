"""The exact-in-law sampler: draw the Gaussian quantities the scores depend on, never E.

With i.i.d. Gaussian input embeddings the class-aggregated scores of a weighting
``A = diag(q) L`` (N×M) at dimension d are ``E_d E_dᵀ A`` (times the output Gram, drawn as
usual). Stack the distinct stored columns of a trial (every scheme × T, and × d where q changes
with d) and take an orthonormal basis Q (N×r) of their span, ``A_j = Q R_j``. Then, exactly in
law and jointly over every nested d (ARCHITECTURE.md, idea 8; docs/kernels-sampling.md):

- ``Z = Qᵀ E`` (r×d_max) has i.i.d. N(0, 1) entries: it is drawn directly;
- ``E_d E_dᵀ A_j = Q Z_d Z_dᵀ R_j + P⊥ H_d R_j`` with ``P⊥ = I − Q Qᵀ`` and ``H_d = Ẽ_d Z_dᵀ``
  for an independent copy Ẽ of E (``P⊥ E`` is independent of ``Qᵀ E``);
- over a block of coordinates ``(d', d]`` the increment of ``H R_live`` (R_live: the columns of
  R still used at some dimension ≥ d) has i.i.d. rows ``N(0, Wᵀ W)``, ``W = Z_blkᵀ R_live``:
  drawn as ``N × k`` standard normals times a k-row factor of ``Wᵀ W``,
  ``k = min(block width, live columns, r)``.

So a trial draws ``r·d_max + N·Σ_blocks k`` numbers instead of ``N·d_max``. The basis is built
in float64 from a QR and an SVD of its triangle (a rank-revealing step: nested thresholds give
nearly dependent columns; a plain QR would not show it); without label noise each output class
has its own block of tokens, and its own basis.
"""

from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import torch

from assocmem import rng
from assocmem.closed_form.problem import Problem
from assocmem.closed_form.samplers.base import Sampler, TrialWeights, stored_rows
from assocmem.embeddings import standard_coordinates

DRAW_AHEAD_BYTES = 2**26  # a trial's block normals drawn ahead (in the helper thread) below this
SPLIT_BASIS_ABOVE = 2**22  # N × distinct columns above which the basis is built per class
# remainder(block, z_blk, r_live, out): add the block's increment of (H R_live)ᵀ to out
Remainder = Callable[[slice, torch.Tensor, torch.Tensor, torch.Tensor], None]


@dataclass
class WeightingBasis:
    """An orthonormal basis of a trial's stored columns and their coordinates in it.

    q_t: (r, N) orthonormal rows; coeffs: (r, c), the c distinct nonzero stored columns are
    ``q_tᵀ coeffs``, ordered by their last use (latest first); index: (D, K·M) the distinct
    column of each output row at each d (−1: a zero column); live[i]: how many distinct
    columns are used at some d ≥ dims[i] (a prefix of the order).

    Tokens are held in an internal order (``tokens[i]`` is the token at position i; None: the
    natural order) in which q_t is block diagonal: ``blocks`` lists (rows, positions) of its
    nonzero blocks (one per output class without label noise), so products with Q read only
    them. The H draws are i.i.d. across tokens, so they are drawn in this order directly.
    """

    q_t: torch.Tensor
    coeffs: torch.Tensor
    index: torch.Tensor
    live: list[int]
    tokens: torch.Tensor | None
    inverse: torch.Tensor | None  # position of each token in the internal order
    blocks: list[tuple[slice, slice]]

    def internal(self, x: torch.Tensor) -> torch.Tensor:
        """``x`` (..., N) in natural token order, in the internal order."""
        return x if self.tokens is None else x.index_select(-1, self.tokens)


@dataclass
class InLawDraws:
    """One trial's basis and draws: Z (r, d_max) and, when small, every block's normals."""

    basis: WeightingBasis
    z: torch.Tensor
    normals: list[torch.Tensor] | None  # (k_b, N) per block; None: drawn as they are used
    generator: torch.Generator  # the remainder stream (after the normals drawn ahead)


class InLaw(Sampler):
    """Exact in law for i.i.d. Gaussian input embeddings (any nested convention)."""

    name = "in_law"
    draws_ahead = True
    draws_in_background = True

    def draw(self, problem: Problem, weights: TrialWeights) -> InLawDraws:
        """The basis, Z and (up to :data:`DRAW_AHEAD_BYTES`) the blocks' normals.

        The same numbers whether drawn ahead or as used: one stream, consumed in block order.
        """
        cfg, trial, device = problem.cfg, weights.trial, problem.device
        basis = weighting_basis(problem, weights)
        gen = rng.generator(cfg.seed, "in_law_basis", trial, device=device)
        # Z by blocks of coordinates (as E is drawn): Z_d is the same for every d_max ≥ d
        z = standard_coordinates(
            basis.q_t.shape[0], problem.dims[-1], gen, device=device, dtype=problem.dtype
        ).T  # (r, d_max)
        remainder = rng.generator(cfg.seed, "in_law_remainder", trial, device=device)
        sizes = block_normals(problem, basis)
        n, per_value = cfg.n_inputs, torch.finfo(problem.dtype).bits // 8
        normals = None
        if sum(sizes) * n * per_value <= DRAW_AHEAD_BYTES:
            normals = [_normals(k, n, remainder, z) for k in sizes]
        return InLawDraws(basis, z, normals, remainder)

    def aggregates(
        self, problem: Problem, weights: TrialWeights, drawn: InLawDraws
    ) -> Iterator[tuple[slice, torch.Tensor]]:
        buffers = Buffers(problem.cfg.n_inputs, drawn.z)
        if drawn.normals is not None:
            ahead = iter(drawn.normals)
            remainder = gaussian_remainder(lambda k: next(ahead))
            yield from assemble(problem, drawn.basis, drawn.z, remainder, buffers)
            return
        sizes = [k for k in block_normals(problem, drawn.basis) if k]
        with ThreadPoolExecutor(max_workers=1) as pool:
            source = _BlockNormals(sizes, buffers, drawn.generator, pool, problem.device)
            remainder = gaussian_remainder(source)
            yield from assemble(problem, drawn.basis, drawn.z, remainder, buffers)


class _BlockNormals:
    """The blocks' normals, in block order from one stream; on CPU the next block is drawn in
    a helper thread while this one computes (the generator is serial, the products are not).
    Two buffers alternate, so the numbers are the same as drawn in line."""

    def __init__(
        self,
        sizes: list[int],
        buffers: "Buffers",
        gen: torch.Generator,
        pool: ThreadPoolExecutor,
        device: torch.device,
    ) -> None:
        self.sizes, self.buffers, self.gen, self.pool = sizes, buffers, gen, pool
        self.background = device.type == "cpu"
        self.next_block = 0
        self.pending: Future[torch.Tensor] | None = None
        if self.background and sizes:
            self.pending = pool.submit(self._draw, 0)

    def _draw(self, block: int) -> torch.Tensor:
        out = self.buffers(f"normals{block % 2}", self.sizes[block])
        return torch.randn(self.sizes[block], self.buffers.n, generator=self.gen, out=out)

    def __call__(self, k: int) -> torch.Tensor:
        block = self.next_block
        assert self.sizes[block] == k  # the plan of block_normals
        self.next_block += 1
        if not self.background:
            return self._draw(block)
        assert self.pending is not None
        normals = self.pending.result()
        if block + 1 < len(self.sizes):  # its buffer held block − 1, already used
            self.pending = self.pool.submit(self._draw, block + 1)
        return normals


def _normals(k: int, n: int, gen: torch.Generator, like: torch.Tensor) -> torch.Tensor:
    return torch.randn(k, n, generator=gen, device=like.device, dtype=like.dtype)


class Buffers:
    """Named (rows, N) work tensors reused within a trial: at N = 10⁶ a fresh 40 MB tensor
    costs about as much in page faults as the product that fills it."""

    def __init__(self, n: int, like: torch.Tensor) -> None:
        self.n, self.like, self.store = n, like, dict[str, torch.Tensor]()

    def __call__(self, name: str, rows: int) -> torch.Tensor:
        buffer = self.store.get(name)
        if buffer is None or buffer.shape[0] < rows:
            buffer = self.store[name] = self.like.new_empty(rows, self.n)
        return buffer[:rows]


def _block_rank(width: int, live: int, rank: int) -> int:
    """Normals per token for a block: the rank bound of its increments' covariance ``Wᵀ W``."""
    return min(width, live, rank) if live and rank else 0


def block_normals(problem: Problem, basis: WeightingBasis) -> list[int]:
    """Standard normals per token drawn for each block ``(d_{i-1}, d_i]`` (0: none)."""
    rank, prev, out = basis.q_t.shape[0], 0, []
    for d, live in zip(problem.dims, basis.live, strict=True):
        out.append(_block_rank(d - prev, live, rank))
        prev = d
    return out


def gaussian_remainder(normals: Callable[[int], torch.Tensor]) -> Remainder:
    """Draw the block increments of ``(H R_live)ᵀ`` in law: k × N normals times a factor."""

    def add(block: slice, z_blk: torch.Tensor, r_live: torch.Tensor, out: torch.Tensor) -> None:
        rank, width = z_blk.shape
        live = r_live.shape[1]
        k = _block_rank(width, live, rank)
        if k == 0:
            return
        if k == width:  # W = Z_blkᵀ R_live itself is a factor
            factor = z_blk.T @ r_live
        elif k == live:  # Wᵀ W = R_wᵀ R_w, W = Q_w R_w
            factor = torch.linalg.qr((z_blk.T @ r_live).double(), mode="r")[1].to(out.dtype)
        else:  # Z_blk Z_blkᵀ = R_zᵀ R_z: factor R_z R_live, r rows
            r_z = torch.linalg.qr(z_blk.T.double(), mode="r")[1]
            factor = (r_z @ r_live.double()).to(out.dtype)
        out.addmm_(factor.T, normals(k))

    return add


def explicit_remainder(coords_perp: torch.Tensor) -> Remainder:
    """The increments from given coordinates ``(P⊥E)ᵀ`` (d_max, N): for the algebraic check
    that the assembly reproduces the explicit scores of one E."""

    def add(block: slice, z_blk: torch.Tensor, r_live: torch.Tensor, out: torch.Tensor) -> None:
        out.addmm_((z_blk.T @ r_live).T, coords_perp[block])

    return add


def assemble(
    problem: Problem,
    basis: WeightingBasis,
    z: torch.Tensor,
    remainder: Remainder,
    buffers: Buffers | None = None,
) -> Iterator[tuple[slice, torch.Tensor]]:
    """``(E_d E_dᵀ A)ᵀ`` at each d, one d at a time: (1, K·M, N) each, fixed columns first.

    z: (r, d_max) the basis coordinates ``Qᵀ E``; remainder adds the blocks' ``(H R)ᵀ``. Each
    yielded tensor lives in a reused buffer: valid until the next one is asked for.
    """
    q_t, coeffs = basis.q_t, basis.coeffs
    rank, n = q_t.shape
    buffers = buffers or Buffers(n, q_t)
    h_t = q_t.new_zeros(coeffs.shape[1], n)  # (H_d R)ᵀ of the distinct columns, running
    gram = q_t.new_zeros(rank, rank)  # Z_d Z_dᵀ, running
    prev = 0
    for i, d in enumerate(problem.dims):
        z_blk = z[:, prev:d]
        gram.addmm_(z_blk, z_blk.T)
        live = basis.live[i]
        remainder(slice(prev, d), z_blk, coeffs[:, :live], h_t[:live])
        prev = d
        scale = _gaussian_scale(problem, d)
        columns = _columns_at(basis, basis.index[i], gram, h_t, scale, buffers)
        yield slice(i, i + 1), columns[None]


def _columns_at(
    basis: WeightingBasis,
    index: torch.Tensor,
    gram: torch.Tensor,
    h_t: torch.Tensor,
    scale: float,
    buffers: Buffers,
) -> torch.Tensor:
    """``σ² (Q (Z_d Z_dᵀ R − Qᵀ H_d R) + H_d R)`` for the output rows (K·M, N) of one d,
    in natural token order."""
    # index_select / index_copy_, and slices where the columns run in order: advanced indexing
    # wakes the thread pool (ms per call on CPU), and at N = 10⁶ every copy is a pass over memory
    used = (index >= 0).nonzero().flatten()
    if not used.numel():
        return buffers("out", index.shape[0]).zero_()
    cols = index.index_select(0, used)
    first, count = int(cols[0]), cols.numel()
    if bool((cols == torch.arange(first, first + count, device=cols.device)).all()):
        stored, coeffs = h_t[first : first + count], basis.coeffs[:, first : first + count]
    else:
        stored = torch.index_select(h_t, 0, cols, out=buffers("stored", count))
        coeffs = basis.coeffs.index_select(1, cols)
    inner = gram @ coeffs  # (r, u), minus Qᵀ H R block by block
    for rows, positions in basis.blocks:
        inner[rows] -= basis.q_t[rows, positions] @ stored[:, positions].T
    columns = torch.mul(stored, scale, out=buffers("columns", count))  # (u, N)
    for rows, positions in basis.blocks:
        columns[:, positions].addmm_(inner[rows].T, basis.q_t[rows, positions], alpha=scale)
    if basis.inverse is not None:  # back to the natural token order
        columns = torch.index_select(columns, 1, basis.inverse, out=buffers("natural", count))
    if count == index.shape[0]:
        return columns
    return buffers("out", index.shape[0]).zero_().index_copy_(0, used, columns)


def _gaussian_scale(problem: Problem, d: int) -> float:
    """``σ_d²``: the embeddings are ``σ_d`` times standard normals (1/d_max or 1/d)."""
    ref = problem.dims[-1] if problem.cfg.nested == "truncate" else d
    return 1.0 / ref


def weighting_basis(problem: Problem, weights: TrialWeights) -> WeightingBasis:
    """The distinct stored columns of one trial and an orthonormal basis of their span."""
    rows, classes, index, last_use = _distinct_columns(problem, weights)
    order = sorted(range(len(rows)), key=lambda u: -last_use[u])  # latest last use first
    position = torch.empty(len(rows) + 1, dtype=torch.long)
    position[torch.tensor(order, dtype=torch.long)] = torch.arange(len(rows))
    position[-1] = -1  # index −1 (a zero column) stays −1
    index = position[index].to(problem.device)
    live = [sum(1 for u in order if last_use[u] >= i) for i in range(len(problem.dims))]
    n, dtype = problem.cfg.n_inputs, problem.dtype
    if not rows:
        empty = torch.zeros(0, n, device=problem.device, dtype=dtype)
        return WeightingBasis(empty, empty[:, :0], index, live, None, None, [])
    stacked = torch.stack([rows[u] for u in order])  # (c, N)
    groups = _token_groups(problem, weights.targets, [classes[u] for u in order])
    return WeightingBasis(*_orthonormal_basis(stacked, groups, dtype, index, live))


def _distinct_columns(
    problem: Problem, weights: TrialWeights
) -> tuple[list[torch.Tensor], list[int], torch.Tensor, list[int]]:
    """Distinct nonzero stored columns (each (N,)), their output class, the (D, K·M) index of
    each output row's column (−1 for zero) and each column's last dim index.

    A d-dependent column equal to the same column at the previous d is the same column (nested
    thresholds repeat while P(d) does not change).
    """
    m, n_dims = problem.cfg.n_outputs, len(problem.dims)
    fixed = stored_rows(weights.fixed_q, weights.fixed_labels)  # (K_f·M, N)
    rows: list[torch.Tensor] = []
    classes: list[int] = []
    last_use: list[int] = []

    def add(row: torch.Tensor, nonzero: bool, cls: int, last: int) -> int:
        if not nonzero:
            return -1
        rows.append(row)
        classes.append(cls)
        last_use.append(last)
        return len(rows) - 1

    fixed_nonzero = fixed.ne(0).any(1).tolist()  # one pass, not one call per row
    fixed_index = [add(row, fixed_nonzero[j], j % m, n_dims - 1) for j, row in enumerate(fixed)]
    n_var = weights.varying_q.shape[1] * m
    index = torch.full((n_dims, fixed.shape[0] + n_var), -1, dtype=torch.long)
    index[:, : fixed.shape[0]] = torch.tensor(fixed_index, dtype=torch.long)
    previous = [-1] * n_var
    for i in range(n_dims):
        varying = stored_rows(weights.varying_q[i], weights.varying_labels)  # (K_v·M, N)
        nonzero = varying.ne(0).any(1).tolist()
        for j, row in enumerate(varying):
            u = previous[j]
            if u >= 0 and torch.equal(row, rows[u]):
                last_use[u] = i
            else:
                u = previous[j] = add(row, nonzero[j], j % m, i)
            index[i, fixed.shape[0] + j] = u
    return rows, classes, index, last_use


def _token_groups(
    problem: Problem, targets: torch.Tensor, classes: list[int]
) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """(columns, tokens) blocks with disjoint supports for the basis.

    Without label noise, column y of a weighting lives on the tokens of class y: one block per
    class keeps the float64 work and memory of a large vocabulary M times smaller. Small
    problems (and noisy labels, whose columns overlap) take one block: fewer, larger calls.
    """
    n, c = problem.cfg.n_inputs, len(classes)
    device = problem.device
    if problem.cfg.label_noise != 0 or n * c < SPLIT_BASIS_ABOVE:
        return [(torch.arange(c, device=device), torch.arange(n, device=device))]
    column_class = torch.tensor(classes, device=device)
    targets = targets.to(device)
    groups = []
    for y in range(problem.cfg.n_outputs):
        columns = (column_class == y).nonzero().flatten()
        if columns.numel():
            groups.append((columns, (targets == y).nonzero().flatten()))
    return groups


def _orthonormal_basis(
    stacked: torch.Tensor,
    groups: list[tuple[torch.Tensor, torch.Tensor]],
    dtype: torch.dtype,
    index: torch.Tensor,
    live: list[int],
) -> tuple[Any, ...]:
    """The fields of :class:`WeightingBasis`: ``q_t`` (r, N) and ``coeffs`` (r, c) with
    ``stacked ≈ coeffsᵀ q_t`` to float64 rounding (q_t in the internal token order).

    Per group, a QR of the (tokens × columns) block in float64, then an SVD of its triangle:
    directions with singular values below ``σ_max · max(shape) · ε`` (numpy's matrix rank) are
    dropped. Several groups: the tokens are reordered group by group (then the tokens of no
    group), so that q_t is block diagonal.
    """
    n, c = stacked.shape[1], stacked.shape[0]
    parts = []
    for columns, tokens in groups:
        block = stacked.index_select(0, columns).index_select(1, tokens).T.double()  # (N_g, c_g)
        q, r = torch.linalg.qr(block)
        u, s, vh = torch.linalg.svd(r, full_matrices=False)
        keep = s > s.max() * max(block.shape) * torch.finfo(torch.float64).eps
        parts.append((tokens, (q @ u[:, keep]).T, columns, s[keep, None] * vh[keep]))
    rank = sum(part[1].shape[0] for part in parts)
    q_t = stacked.new_zeros(rank, n, dtype=dtype)
    coeffs = stacked.new_zeros(rank, c, dtype=dtype)
    order: torch.Tensor | None = None
    inverse: torch.Tensor | None = None
    if len(parts) > 1:
        seen = torch.zeros(n, dtype=torch.bool, device=stacked.device)
        for tokens, *_ in parts:
            seen[tokens] = True
        order = torch.cat([p[0] for p in parts] + [(~seen).nonzero().flatten()])
        inverse = torch.empty_like(order)
        inverse[order] = torch.arange(n, device=order.device)
    blocks, row, position = [], 0, 0
    for tokens, basis, columns, coord in parts:
        rows = slice(row, row + basis.shape[0])
        positions = slice(position, position + tokens.numel())
        q_t[rows, positions if order is not None else tokens] = basis.to(dtype)
        coeffs[rows, columns] = coord.to(dtype)
        blocks.append((rows, positions if order is not None else slice(0, n)))
        row, position = rows.stop, positions.stop
    return q_t, coeffs, index, live, order, inverse, blocks


__all__ = ["InLaw", "WeightingBasis", "assemble", "explicit_remainder", "weighting_basis"]

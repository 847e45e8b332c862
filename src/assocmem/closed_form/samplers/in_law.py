r"""The exact-in-law sampler: draw the Gaussian quantities the scores depend on, never E.

With i.i.d. Gaussian input embeddings the class-aggregated scores of a weighting
:math:`A = \operatorname{diag}(q) L` (N×M) at dimension d are :math:`E_d E_d^\top A` (times the
output Gram, drawn as usual). Stack the distinct stored columns of a trial (every scheme × T, and ×
d where q changes with d) and take an orthonormal basis Q (N×r) of their span, :math:`A_j = Q R_j`.
Then, exactly in law and jointly over every nested d (docs: kernels-sampling.md):

- :math:`Z = Q^\top E` (r×d_max) has i.i.d. N(0, 1) entries: it is drawn directly;
- :math:`E_d E_d^\top A_j = Q Z_d Z_d^\top R_j + P^\perp H_d R_j` with
  :math:`P^\perp = I - Q Q^\top` and :math:`H_d = \tilde{E}_d Z_d^\top` for an independent copy Ẽ of
  E (:math:`P^\perp E` is independent of :math:`Q^\top E`);
- over a block of coordinates ``(d', d]`` the increment of ``H R_live`` (R_live: the columns of
  R still used at some dimension ≥ d) has i.i.d. rows :math:`\mathcal{N}(0, W^\top W)`,
  :math:`W = Z_{\mathrm{blk}}^\top R_{\mathrm{live}}`: drawn as :math:`N \times k` standard normals
  times a k-row factor of :math:`W^\top W`,
  :math:`k = \min(\text{block width}, \text{live columns}, r)`.

So a trial draws :math:`r\cdot d_{\max} + N\cdot \sum_{\mathrm{blocks}} k` numbers instead of
:math:`N\cdot d_{\max}`. The basis is built by :mod:`assocmem.closed_form.samplers.basis`.
"""

from collections.abc import Callable, Iterator
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from dataclasses import dataclass

import torch

from assocmem import rng
from assocmem.closed_form.cost import DRAW_AHEAD_BYTES, STACK_DIMS_BYTES
from assocmem.closed_form.problem import Problem, Workspace
from assocmem.closed_form.samplers.base import Sampler, TrialWeights
from assocmem.closed_form.samplers.basis import Selection, WeightingBasis, weighting_basis
from assocmem.embeddings import standard_coordinates

# remainder(block, z_blk, r_live, out): add the block's increment of (H R_live)ᵀ to out
Remainder = Callable[[slice, torch.Tensor, torch.Tensor, torch.Tensor], None]


@dataclass
class InLawNumbers:
    """One trial's random numbers: Z (r, d_max) and, when small, every block's normals."""

    z: torch.Tensor
    normals: list[torch.Tensor] | None  # (k_b, N) per block; None: drawn as they are used
    generator: torch.Generator  # the remainder stream (after the normals drawn ahead)


@dataclass
class InLawDraws:
    """One trial's basis and its random numbers (drawn in a helper thread, or done)."""

    basis: WeightingBasis
    numbers: "Future[InLawNumbers]"


class InLaw(Sampler):
    """Exact in law for i.i.d. Gaussian input embeddings (any nested convention)."""

    name = "in_law"
    draws_ahead = True
    draws_in_background = True
    # Figure 1's grid: at N = 1000, 4.3 ms a trial with only its numbers in the helper thread,
    # 5.1 ms drawn whole there; about even at 4,096 tokens; the whole draw wins at 16,384
    ahead_from_tokens = 4096

    def draw(
        self, problem: Problem, weights: TrialWeights, helper: Executor | None = None
    ) -> InLawDraws:
        """The basis, then Z and (up to :data:`DRAW_AHEAD_BYTES`) the blocks' normals: in
        ``helper`` when given (a few calls that release the GIL, where the basis is many
        short ones). The same numbers either way: their own streams, consumed in order."""
        basis = weighting_basis(problem, weights)
        if helper is not None:
            return InLawDraws(basis, helper.submit(_numbers, problem, basis, weights.trial))
        done: Future[InLawNumbers] = Future()
        done.set_result(_numbers(problem, basis, weights.trial))
        return InLawDraws(basis, done)

    def aggregates(
        self, problem: Problem, weights: TrialWeights, drawn: InLawDraws
    ) -> Iterator[tuple[slice, torch.Tensor]]:
        numbers = drawn.numbers.result()
        buffers = Buffers(problem.workspace, problem.cfg.n_inputs, numbers.z.dtype)
        if numbers.normals is not None:
            ahead = iter(numbers.normals)
            remainder = gaussian_remainder(lambda k: next(ahead))
            yield from assemble(problem, drawn.basis, numbers.z, remainder, buffers)
            return
        sizes = [k for k in block_normals(problem, drawn.basis) if k]
        with ThreadPoolExecutor(max_workers=1) as pool:
            source = _BlockNormals(sizes, buffers, numbers.generator, pool, problem.device)
            remainder = gaussian_remainder(source)
            yield from assemble(problem, drawn.basis, numbers.z, remainder, buffers)


def _numbers(problem: Problem, basis: WeightingBasis, trial: int) -> InLawNumbers:
    """Z from the trial's ``in_law_basis`` stream and, when they fit in
    :data:`DRAW_AHEAD_BYTES`, the blocks' normals from its ``in_law_remainder`` stream."""
    cfg, device = problem.cfg, problem.device
    with torch.inference_mode():
        gen = rng.generator(cfg.seed, "in_law_basis", trial, device=device)
        # Z by blocks of coordinates (as E is drawn): Z_d is the same for every d_max ≥ d
        z = standard_coordinates(
            basis.rank, problem.dims[-1], gen, device=device, dtype=problem.dtype
        ).T  # (r, d_max)
        remainder = rng.generator(cfg.seed, "in_law_remainder", trial, device=device)
        sizes = block_normals(problem, basis)
        n, per_value = cfg.n_inputs, torch.finfo(problem.dtype).bits // 8
        normals = None
        if sum(sizes) * n * per_value <= DRAW_AHEAD_BYTES:
            normals = [_normals(k, n, remainder, z) for k in sizes]
    return InLawNumbers(z, normals, remainder)


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
    """(rows, N) work tensors in one dtype, named in a :class:`Workspace`: reused within a
    trial and, in ``Problem.workspace``, from one trial to the next."""

    def __init__(self, workspace: Workspace, n: int, dtype: torch.dtype) -> None:
        self.workspace, self.n, self.dtype = workspace, n, dtype

    def __call__(self, name: str, rows: int) -> torch.Tensor:
        return self.workspace(name, (rows, self.n), self.dtype)


def _block_rank(width: int, live: int, rank: int) -> int:
    r"""Normals per token for a block: the rank bound of its increments' covariance
    :math:`W^\top W`."""
    return min(width, live, rank) if live and rank else 0


def block_normals(problem: Problem, basis: WeightingBasis) -> list[int]:
    """Standard normals per token drawn for each block :math:`(d_{i-1}, d_i]` (0: none)."""
    rank, prev, out = basis.rank, 0, []
    for d, live in zip(problem.dims, basis.live, strict=True):
        out.append(_block_rank(d - prev, live, rank))
        prev = d
    return out


def gaussian_remainder(normals: Callable[[int], torch.Tensor]) -> Remainder:
    r"""Draw the block increments of :math:`(H R_{\mathrm{live}})^\top` in law: k × N normals times
    a factor."""

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
    r"""The increments from given coordinates :math:`(P^\perp E)^\top` (d_max, N): for the algebraic
    check that the assembly reproduces the explicit scores of one E."""

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
    r""":math:`(E_d E_d^\top A)^\top` at each d, fixed columns first: (1, K·M, N) one d at a time,
    or, when every d's distinct columns fit in :data:`STACK_DIMS_BYTES`, (D, K·M, N) at once,
    assembled by batched products (small problems are bound by the number of calls, not by their
    size).

    z: (r, d_max) the basis coordinates :math:`Q^\top E`; remainder adds the blocks'
    :math:`(H R)^\top`. Each yielded tensor lives in a reused buffer: valid until the next one is
    asked for.
    """
    coeffs, n_dims, n_rows = basis.coeffs, len(problem.dims), basis.index.shape[1]
    n_cols = coeffs.shape[1]
    buffers = buffers or Buffers(Workspace(coeffs.device), problem.cfg.n_inputs, coeffs.dtype)
    h_t = buffers("h_t", n_cols).zero_()  # (H_d R)ᵀ of the distinct columns, running
    gram = coeffs.new_zeros(basis.rank, basis.rank)  # Z_d Z_dᵀ, running
    stack = n_dims * n_cols * buffers.n * coeffs.element_size() <= STACK_DIMS_BYTES
    if stack:  # every d's H R and Z Zᵀ, then the columns of every d in a few batched products
        h_every = buffers("h_every", n_dims * n_cols)
        grams = coeffs.new_empty(n_dims, basis.rank, basis.rank)
    prev = 0
    for i, d in enumerate(problem.dims):
        z_blk = z[:, prev:d]
        gram.addmm_(z_blk, z_blk.T)
        live = basis.live[i]
        remainder(slice(prev, d), z_blk, coeffs[:, :live], h_t[:live])
        prev = d
        if stack:
            h_every[i * n_cols : (i + 1) * n_cols] = h_t
            grams[i] = gram
            continue
        scale = _gaussian_scale(problem, d)
        columns = _columns_at(basis, basis.selections[i], n_rows, gram, h_t, scale, buffers)
        yield slice(i, i + 1), columns[None]
    if stack:
        yield slice(0, n_dims), _columns_every_d(problem, basis, grams, h_every, buffers)


def _columns_every_d(
    problem: Problem,
    basis: WeightingBasis,
    grams: torch.Tensor,
    h_every: torch.Tensor,
    buffers: Buffers,
) -> torch.Tensor:
    r"""What :func:`_columns_at` gives at each d, for every d at once: (D, K·M, N).

    grams: (D, r, r) :math:`Z_d Z_d^\top`; h_every: (D·c, N), :math:`(H_d R)^\top` of every distinct
    column at each d (row i·c + j: column j at dims[i]). The (d, column) pairs some output row reads
    are assembled together, with two products per block of Qᵀ.
    """
    n_dims, n_cols, n = grams.shape[0], basis.coeffs.shape[1], buffers.n
    index = basis.index  # (D, K·M)
    pairs = index + torch.arange(n_dims, device=index.device)[:, None] * n_cols
    read = torch.zeros(n_dims * n_cols, dtype=torch.bool, device=index.device)
    read[pairs[index >= 0]] = True
    used = read.nonzero().flatten()  # the (d, column) pairs read, sorted: U of them
    n_used = used.numel()
    h_used = buffers("h_used", n_used + 1)  # + a zero row for the outputs no column fills
    torch.index_select(h_every, 0, used, out=h_used[:n_used])
    h_used[n_used].zero_()
    # (r, U): Z_d Z_dᵀ R of each pair, minus Qᵀ H R block by block
    inner = (grams @ basis.coeffs).transpose(0, 1).reshape(basis.rank, n_dims * n_cols)
    inner = inner.index_select(1, used)
    _subtract_qt(basis, inner, h_used[:n_used])
    inner_t = inner.T.contiguous()  # (U, r)
    # H R + Q (Z Zᵀ R − Qᵀ H R)
    for (rows, positions), part in zip(basis.blocks, basis.parts, strict=True):
        h_used[:n_used, positions].addmm_(inner_t[:, rows], part)
    scales = [_gaussian_scale(problem, d) for d in problem.dims]
    scales_t = torch.tensor(scales, dtype=h_used.dtype, device=h_used.device)
    h_used[:n_used].mul_(scales_t.index_select(0, used // n_cols)[:, None])
    rows_at = torch.where(index >= 0, torch.searchsorted(used, pairs), n_used)
    out = buffers("every_d", rows_at.numel())
    torch.index_select(h_used, 0, rows_at.flatten(), out=out)
    if basis.inverse is not None:  # back to the natural token order
        out = torch.index_select(
            out, 1, basis.inverse, out=buffers("every_d_natural", out.shape[0])
        )
    return out.view(n_dims, -1, n)


def _columns_at(
    basis: WeightingBasis,
    selection: Selection,
    n_rows: int,
    gram: torch.Tensor,
    h_t: torch.Tensor,
    scale: float,
    buffers: Buffers,
) -> torch.Tensor:
    r""":math:`\sigma^2 (Q (Z_d Z_d^\top R - Q^\top H_d R) + H_d R)` for the ``n_rows`` output rows
    (K·M, N) of one d, in natural token order."""
    # index_select / index_copy_, and slices where the columns run in order: advanced indexing
    # wakes the thread pool (ms per call on CPU), and at N = 10⁶ every copy is a pass over memory
    count, cols = selection.count, selection.columns
    if not count:
        return buffers("out", n_rows).zero_()
    if isinstance(cols, slice):
        stored, coeffs = h_t[cols], basis.coeffs[:, cols]
    else:
        stored = torch.index_select(h_t, 0, cols, out=buffers("stored", count))
        coeffs = basis.coeffs.index_select(1, cols)
    inner = gram @ coeffs  # (r, u), minus Qᵀ H R block by block
    _subtract_qt(basis, inner, stored)
    columns = torch.mul(stored, scale, out=buffers("columns", count))  # (u, N)
    for (rows, positions), part in zip(basis.blocks, basis.parts, strict=True):
        columns[:, positions].addmm_(inner[rows].T, part, alpha=scale)
    if basis.inverse is not None:  # back to the natural token order
        columns = torch.index_select(columns, 1, basis.inverse, out=buffers("natural", count))
    if selection.rows is None:
        return columns
    return buffers("out", n_rows).zero_().index_copy_(0, selection.rows, columns)


def _subtract_qt(basis: WeightingBasis, inner: torch.Tensor, h: torch.Tensor) -> None:
    r""":math:`\mathrm{inner} \mathrel{-}= Q^\top h^\top` for h (u, N) in the internal token order,
    one product per block."""
    for (rows, positions), part in zip(basis.blocks, basis.parts, strict=True):
        inner[rows].sub_(torch.mm(part, h[:, positions].T))


def _gaussian_scale(problem: Problem, d: int) -> float:
    r""":math:`\sigma_d^2`: the embeddings are :math:`\sigma_d` times standard normals (1/d_max or
    1/d)."""
    ref = problem.dims[-1] if problem.cfg.nested == "truncate" else d
    return 1.0 / ref


__all__ = ["InLaw", "WeightingBasis", "assemble", "explicit_remainder", "weighting_basis"]

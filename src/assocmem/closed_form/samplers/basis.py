"""The orthonormal basis of a trial's stored columns, for the exact-in-law sampler.

The distinct nonzero stored columns ``diag(q) L`` of every weighting (scheme × T, and × d where
q changes with d) are stacked; repeated columns (nested thresholds while P(d) does not change)
are merged. The basis is built in float64 from a QR and an SVD of its triangle: a rank-revealing
step, since nested weightings give dependent columns (``threshold:P=N`` equals ``uniform``) that
a plain QR would keep. Without label noise, column y of a weighting lives on the tokens of class
y: at large N the basis is built class by class, with the tokens reordered by class so that the
basis is block diagonal (a top-P threshold adds one direction per class, never P of them).
"""

from dataclasses import dataclass
from typing import Any

import torch

from assocmem.closed_form.problem import Problem
from assocmem.closed_form.samplers.base import TrialWeights, stored_rows

SPLIT_BASIS_ABOVE = 0  # N × distinct columns above which it is built per class (measured: always)


@dataclass
class WeightingBasis:
    """An orthonormal basis of a trial's stored columns and their coordinates in it.

    Qᵀ (r, N) has orthonormal rows; coeffs: (r, c), the c distinct nonzero stored columns
    are ``Q coeffs``, ordered by their last use (latest first); index: (D, K·M) the distinct
    column of each output row at each d (−1: a zero column); live[i]: how many distinct
    columns are used at some d ≥ dims[i] (a prefix of the order).

    Tokens are held in an internal order (``tokens[i]`` is the token at position i; None: the
    natural order) in which Qᵀ is block diagonal: ``blocks`` lists (rows, positions) of its
    nonzero blocks (one per output class without label noise) and ``parts`` their values, so
    products with Q read only them (Qᵀ itself, (r, N), would be 120 MB at N = 10⁶ and r = 30).
    The H draws are i.i.d. across tokens, so they are drawn in this order directly.
    """

    coeffs: torch.Tensor
    index: torch.Tensor
    live: list[int]
    tokens: torch.Tensor | None
    inverse: torch.Tensor | None  # position of each token in the internal order
    blocks: list[tuple[slice, slice]]
    parts: list[torch.Tensor]  # Qᵀ[rows, positions] of each block, row-major

    @property
    def rank(self) -> int:
        """r, the dimension of the span."""
        return self.coeffs.shape[0]

    @property
    def q_t(self) -> torch.Tensor:
        """Qᵀ (r, N) in the internal token order, built from the blocks (for checks)."""
        n = self.blocks[-1][1].stop if self.tokens is None else self.tokens.numel()
        q_t = self.coeffs.new_zeros(self.rank, n)
        for (rows, positions), part in zip(self.blocks, self.parts, strict=True):
            q_t[rows, positions] = part
        return q_t

    def internal(self, x: torch.Tensor) -> torch.Tensor:
        """``x`` (..., N) in natural token order, in the internal order."""
        return x if self.tokens is None else x.index_select(-1, self.tokens)


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
        empty = torch.zeros(0, 0, device=problem.device, dtype=dtype)
        return WeightingBasis(empty, index, live, None, None, [(slice(0, 0), slice(0, n))], [empty])
    stacked = [rows[u] for u in order]  # c columns (N,), gathered group by group below
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
    table = [list(fixed_index) for _ in range(n_dims)]
    previous, before = [-1] * n_var, None
    for i in range(n_dims):
        varying = stored_rows(weights.varying_q[i], weights.varying_labels)  # (K_v·M, N)
        nonzero = varying.ne(0).any(1).tolist()
        same = [False] * n_var if before is None else varying.eq(before).all(1).tolist()
        for j, row in enumerate(varying):
            u = previous[j]
            if u >= 0 and same[j]:  # row j at the previous d was column u (or zero: u = −1)
                last_use[u] = i
            else:
                u = previous[j] = add(row, nonzero[j], j % m, i)
            table[i].append(u)
        before = varying
    index = torch.tensor(table, dtype=torch.long).view(n_dims, fixed.shape[0] + n_var)
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
    stacked: list[torch.Tensor],
    groups: list[tuple[torch.Tensor, torch.Tensor]],
    dtype: torch.dtype,
    index: torch.Tensor,
    live: list[int],
) -> tuple[Any, ...]:
    """The fields of :class:`WeightingBasis`: Qᵀ (r, N) by blocks and ``coeffs`` (r, c) with
    ``stacked[j] ≈ Q coeffs[:, j]`` to float64 rounding (Q in the internal token order).

    Per group, a QR of the (tokens × columns) block in float64, then an SVD of its triangle:
    directions with singular values below ``σ_max · max(shape) · ε`` (numpy's matrix rank) are
    dropped. Several groups: the tokens are reordered group by group (then the tokens of no
    group), so that q_t is block diagonal.
    """
    n, c, like = stacked[0].shape[0], len(stacked), stacked[0]
    parts = []
    for columns, tokens in groups:
        block = torch.stack([stacked[j].index_select(0, tokens) for j in columns.tolist()], 1)
        block = block.double()  # (N_g, c_g): the group's columns on its tokens only
        q, r = torch.linalg.qr(block)
        u, s, vh = torch.linalg.svd(r, full_matrices=False)
        keep = s > s.max() * max(block.shape) * torch.finfo(torch.float64).eps
        parts.append((tokens, (q @ u[:, keep]).T, columns, s[keep, None] * vh[keep]))
    rank = sum(part[1].shape[0] for part in parts)
    coeffs = like.new_zeros(rank, c, dtype=dtype)
    order: torch.Tensor | None = None
    inverse: torch.Tensor | None = None
    if len(parts) > 1:
        seen = torch.zeros(n, dtype=torch.bool, device=like.device)
        for tokens, *_ in parts:
            seen[tokens] = True
        order = torch.cat([p[0] for p in parts] + [(~seen).nonzero().flatten()])
        inverse = torch.empty_like(order)
        inverse[order] = torch.arange(n, device=order.device)
    blocks, values, row, position = [], [], 0, 0
    for tokens, basis, columns, coord in parts:
        rows = slice(row, row + basis.shape[0])
        positions = slice(position, position + tokens.numel())
        if order is None:  # one group: its block spans every token, in natural order
            positions = slice(0, n)
            values.append(like.new_zeros(basis.shape[0], n, dtype=dtype))
            values[-1][:, tokens] = basis.to(dtype)
        else:
            values.append(basis.to(dtype, memory_format=torch.contiguous_format))
        coeffs[rows, columns] = coord.to(dtype)
        blocks.append((rows, positions))
        row, position = rows.stop, positions.stop
    return coeffs, index, live, order, inverse, blocks, values

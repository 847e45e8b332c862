"""The orthonormal basis of a trial's stored columns, for the exact-in-law sampler.

The distinct nonzero stored columns ``diag(q) L`` of every weighting (scheme × T, and × d where
q changes with d) are stacked; repeated columns (nested thresholds while P(d) does not change)
are merged. The basis is built in float64 from a QR and an SVD of its triangle: a rank-revealing
step, since nested weightings give dependent columns (``threshold:P=N`` equals ``uniform``) that
a plain QR would keep. Without label noise, column y of a weighting lives on the tokens of class
y: at large N the basis is built class by class, with the tokens reordered by class so that the
basis is block diagonal (a top-P threshold adds one direction per class, never P of them).
"""

import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cached_property

import torch

from assocmem.closed_form.problem import Problem, Workspace
from assocmem.closed_form.samplers.base import TrialWeights
from assocmem.ops.scores import stored_rows

SPLIT_BASIS_ABOVE = 0  # tokens from which it is built by class without label noise: always


@dataclass(frozen=True)
class Selection:
    """The distinct columns one d reads: ``columns`` (a slice where they run in order, else
    their indices), ``count`` of them, and the output rows they fill (None: every row)."""

    columns: slice | torch.Tensor
    count: int
    rows: torch.Tensor | None


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

    @cached_property
    def selections(self) -> list["Selection"]:
        """Per d, the distinct columns it reads (for one-d-at-a-time assembly)."""
        return [_selection(row, self.index.device) for row in self.index.tolist()]

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
    rows, sources, classes, table, last_use = _distinct_columns(problem, weights)
    order = sorted(range(len(sources)), key=lambda u: -last_use[u])  # latest last use first
    position = {u: k for k, u in enumerate(order)} | {-1: -1}  # a zero column stays −1
    renumbered = [[position[u] for u in row] for row in table]
    index = torch.tensor(renumbered, dtype=torch.long, device=problem.device)  # (D, K·M)
    ends = [0] * len(problem.dims)  # live[i]: the columns last used at some dims[j], j ≥ i
    for last in last_use:
        ends[last] += 1
    live = list(itertools.accumulate(reversed(ends)))[::-1]
    n, dtype = problem.cfg.n_inputs, problem.dtype
    if not sources:
        empty = torch.zeros(0, 0, device=problem.device, dtype=dtype)
        blocks = [(slice(0, 0), slice(0, n))]
        return WeightingBasis(empty, index, live, None, None, blocks, [empty.new_zeros(0, n)])
    groups = _token_groups(problem, weights.targets, [classes[u] for u in order])
    tokens = inverse = None
    if len(groups) > 1:  # the same every trial with mod targets and the same classes stored
        key = f"token_order:{sorted(set(classes))}"
        tokens, inverse = problem.shared(key, lambda: _token_order(groups, n, problem.device))
    in_order = [sources[u] for u in order]  # the row of each distinct column, by last use
    coeffs, blocks, q_blocks = _orthonormal_basis(
        rows, in_order, groups, dtype, problem.draw_workspace, split=tokens is not None
    )
    return WeightingBasis(coeffs, index, live, tokens, inverse, blocks, q_blocks)


def _token_order(
    groups: list[tuple[list[int], torch.Tensor]], n: int, device: torch.device
) -> tuple[torch.Tensor, torch.Tensor]:
    """The internal token order (the tokens group by group, then those of no group) and the
    position of each token in it."""
    order = torch.cat([tokens for _, tokens in groups])
    if order.numel() < n:
        seen = torch.zeros(n, dtype=torch.bool, device=device)
        seen[order] = True
        order = torch.cat([order, (~seen).nonzero().flatten()])
    inverse = torch.empty_like(order)
    inverse[order] = torch.arange(n, device=device)
    return order, inverse


def _distinct_columns(
    problem: Problem, weights: TrialWeights
) -> tuple[torch.Tensor, list[int], list[int], list[list[int]], list[int]]:
    """Rows holding the stored columns (see :func:`_stored_rows`); the distinct nonzero
    columns among them (their row there), their output class; the (D, K·M) table of each
    output row's column (−1 for zero) and each column's last dim index.

    A d-dependent column equal to the same column at the previous d is the same column (nested
    thresholds repeat while P(d) does not change).
    """
    m, n_dims = problem.cfg.n_outputs, len(problem.dims)
    n_fixed, n_var = weights.fixed_q.shape[0] * m, weights.varying_q.shape[1] * m
    rows, row_of, fixed_nonzero, nonzero, same = _stored_rows(problem, weights)
    sources: list[int] = []
    classes: list[int] = []
    last_use: list[int] = []

    def add(column: int, nonzero: bool, cls: int, last: int) -> int:
        if not nonzero:
            return -1
        sources.append(row_of(column))
        classes.append(cls)
        last_use.append(last)
        return len(sources) - 1

    fixed_index = [add(j, fixed_nonzero[j], j % m, n_dims - 1) for j in range(n_fixed)]
    table = [list(fixed_index) for _ in range(n_dims)]
    previous = [-1] * n_var
    for i in range(n_dims):
        for j in range(n_var):
            u = previous[j]
            if u >= 0 and i > 0 and same[i - 1][j]:  # row j at the previous d was column u
                last_use[u] = i
            else:
                u = previous[j] = add(n_fixed + i * n_var + j, nonzero[i][j], j % m, i)
            table[i].append(u)
    return rows, sources, classes, table, last_use


def _stored_rows(
    problem: Problem, weights: TrialWeights
) -> tuple[torch.Tensor, Callable[[int], int], list[bool], list[list[bool]], list[list[bool]]]:
    r"""The stored columns ``[fixed (K_f·M); at each d (D·K_v·M)]`` as rows of one tensor, the
    row holding each (``row_of``), and which are nonzero (fixed; (D, K_v·M)) and which equal
    the same column at the previous d ((D − 1, K_v·M)).

    With label noise, the columns themselves, (R, N), tested one pass over all rows each.
    Without (the basis is built per class), column :math:`k\cdot M + y` is ``q_k(x) L_k(y | x)``,
    which is zero off the tokens of class y and :math:`q_k(x) L_k(f^*(x) | x)` on them: the rows
    hold :math:`q_k L_k(f^* | \cdot)`, one per weighting (M times fewer), and every column is tested
    on its class's tokens in one reduction by class. The values are the same products either way.
    """
    m, n_dims, n = problem.cfg.n_outputs, len(problem.dims), problem.cfg.n_inputs
    fixed_q, varying_q = weights.fixed_q, weights.varying_q
    k_f, k_v = fixed_q.shape[0], varying_q.shape[1]
    if not _by_class(problem):
        rows = fixed_q.new_empty((k_f + n_dims * k_v) * m, n)
        stored_rows(fixed_q, weights.fixed_labels, out=rows[: k_f * m])
        varying = rows[k_f * m :].view(n_dims, k_v * m, n)
        stored_rows(varying_q, weights.varying_labels, out=varying)
        fixed_nonzero = _differ(rows[: k_f * m], None).tolist() if k_f else []
        nonzero = _differ(varying, None).tolist()
        same = (~_differ(varying[1:], varying[:-1])).tolist()
        return rows, lambda column: column, fixed_nonzero, nonzero, same
    targets = weights.targets.to(problem.device)
    rows = fixed_q.new_empty(k_f + n_dims * k_v, n)
    _at_targets(fixed_q, weights.fixed_labels, targets, out=rows[:k_f])
    varying = rows[k_f:].view(n_dims, k_v, n)
    _at_targets(varying_q, weights.varying_labels, targets, out=varying)
    n_rows = rows.shape[0]
    flags = torch.empty(n_rows + (n_dims - 1) * k_v, n, dtype=torch.bool, device=rows.device)
    torch.ne(rows, 0, out=flags[:n_rows])
    torch.ne(varying[1:], varying[:-1], out=flags[n_rows:].view(n_dims - 1, k_v, n))
    by_class = (
        flags.new_zeros(flags.shape[0], m, dtype=torch.uint8)
        .scatter_reduce_(1, targets.expand(flags.shape[0], n), flags.view(torch.uint8), "amax")
        .bool()
    )  # (rows, M): whether a row has a nonzero (a change) on the tokens of each class
    n_fixed, n_var = k_f * m, k_v * m  # column k·M + y: row k, class y
    fixed_nonzero = by_class[:k_f].flatten().tolist()
    per_d = by_class[k_f:n_rows].reshape(n_dims, n_var).tolist()
    same = (~by_class[n_rows:]).reshape(n_dims - 1, n_var).tolist()

    def row_of(column: int) -> int:  # column k·M + y of the fixed, or of d_i: row k there
        if column < n_fixed:
            return column // m
        i, j = divmod(column - n_fixed, n_var)
        return k_f + i * k_v + j // m

    return rows, row_of, fixed_nonzero, per_d, same


def _at_targets(
    q: torch.Tensor, labels: torch.Tensor, targets: torch.Tensor, out: torch.Tensor
) -> torch.Tensor:
    """:math:`q_k(x) L_k(f^*(x) | x)`: q (..., K, N), label laws (K, M, N), targets (N,) → out
    (..., K, N)."""
    at = labels.gather(-2, targets.expand(labels.shape[0], 1, -1)).squeeze(-2)  # (K, N)
    return torch.mul(q, at, out=out)


def _by_class(problem: Problem) -> bool:
    """Whether the basis is built class by class: without label noise (each column lives on the
    tokens of its class), from :data:`SPLIT_BASIS_ABOVE` tokens."""
    return problem.cfg.label_noise == 0 and problem.cfg.n_inputs >= SPLIT_BASIS_ABOVE


IN_CACHE = 2**22  # elements: below, a float max beats a boolean reduction 6x; above, the reverse


def _differ(x: torch.Tensor, y: torch.Tensor | None) -> torch.Tensor:
    r"""``x.ne(y or 0).any(-1)``, by the faster route for its size: a float :math:`\max |x - y|`
    (NaN counts as different, as with ``ne``; rows are finite, so a zero difference is equality)
    in cache, torch's boolean reduction above (no float temporary of the whole tensor)."""
    if x.numel() > IN_CACHE:
        return (x.ne(0) if y is None else x.ne(y)).any(-1)
    return (x.abs() if y is None else (x - y).abs_()).amax(-1).ne(0)


GATHER_VALUES = 2**20  # groups' blocks are gathered in one call up to this many values


REUSE_FROM = 2**16  # values: a group's block from which its QR works in reused tensors (below,
# fresh ones come from malloc's free lists, and out= costs 6 µs a call)


def _group_blocks(
    rows: torch.Tensor,
    sources: list[int],
    groups: list[tuple[list[int], torch.Tensor]],
    workspace: Workspace,
) -> Iterator[torch.Tensor]:
    r"""Each group's (tokens × columns) block
    :math:`\mathrm{rows}[\mathrm{sources}[\mathrm{columns}]][:, \mathrm{tokens}]^\top` in float64,
    in group order, column-major in ``workspace`` (valid until the next is asked for): neither all
    the rows nor whole rows are copied. Consecutive groups are gathered in one call while they fit
    :data:`GATHER_VALUES` (small problems: one call); a larger group (N = 10⁶) is gathered a column
    at a time, with no index built.
    """
    n, flat_rows, start = rows.shape[1], rows.view(-1), 0
    sizes = [len(columns) * tokens.numel() for columns, tokens in groups]
    while start < len(groups):
        stop, total = start + 1, sizes[start]
        while stop < len(groups) and total + sizes[stop] <= GATHER_VALUES:
            total, stop = total + sizes[stop], stop + 1
        chunk = groups[start:stop]
        values = blocks = workspace("blocks", (total,), torch.float64)
        if rows.dtype != torch.float64:
            values = workspace("values", (total,), rows.dtype)
        if len(chunk) == 1:
            (columns, tokens), width = chunk[0], chunk[0][1].numel()
            for j, column in enumerate(columns):
                part = values[j * width : (j + 1) * width]
                torch.index_select(rows[sources[column]], 0, tokens, out=part)
        else:
            firsts = [sources[j] * n for columns, _ in chunk for j in columns]
            first_t = torch.tensor(firsts, device=rows.device)[:, None]
            at, index = 0, []
            for columns, tokens in chunk:
                index.append((first_t[at : at + len(columns)] + tokens).flatten())
                at += len(columns)
            torch.index_select(flat_rows, 0, torch.cat(index), out=values)
        if values is not blocks:
            blocks.copy_(values)
        at = 0
        for columns, tokens in chunk:
            width = tokens.numel()
            yield blocks[at : at + len(columns) * width].view(len(columns), width).T
            at += len(columns) * width
        start = stop


def _selection(row: list[int], device: torch.device) -> Selection:
    """Which distinct columns one d reads (index row ``row``), computed once per trial."""
    used = [j for j, u in enumerate(row) if u >= 0]
    cols = [row[j] for j in used]
    columns: slice | torch.Tensor
    if cols and cols == list(range(cols[0], cols[0] + len(cols))):
        columns = slice(cols[0], cols[0] + len(cols))
    else:
        columns = torch.tensor(cols, dtype=torch.long, device=device)
    rows = None if len(used) == len(row) else torch.tensor(used, dtype=torch.long, device=device)
    return Selection(columns, len(cols), rows)


def _token_groups(
    problem: Problem, targets: torch.Tensor, classes: list[int]
) -> list[tuple[list[int], torch.Tensor]]:
    """(columns, tokens) blocks with disjoint supports for the basis.

    Without label noise, column y of a weighting lives on the tokens of class y: one block per
    class keeps the float64 work and memory of a large vocabulary M times smaller. Noisy
    labels, whose columns overlap, take one block (see :func:`_by_class`).
    """
    n, c = problem.cfg.n_inputs, len(classes)
    device = problem.device
    if not _by_class(problem):
        return [(list(range(c)), torch.arange(n, device=device))]
    tokens = problem.class_tokens(targets)
    columns: list[list[int]] = [[] for _ in range(problem.cfg.n_outputs)]
    for j, cls in enumerate(classes):
        columns[cls].append(j)
    return [(cols, tokens[y]) for y, cols in enumerate(columns) if cols]


def _orthonormal_basis(
    rows: torch.Tensor,
    sources: list[int],
    groups: list[tuple[list[int], torch.Tensor]],
    dtype: torch.dtype,
    workspace: Workspace,
    split: bool,
) -> tuple[torch.Tensor, list[tuple[slice, slice]], list[torch.Tensor]]:
    r"""``coeffs``, ``blocks`` and ``parts`` of :class:`WeightingBasis`: Qᵀ (r, N) by blocks and
    ``coeffs`` (r, c) with
    :math:`\mathrm{rows}[\mathrm{sources}[j]] \approx Q \mathrm{coeffs}[:, j]` to float64 rounding
    (Q in the internal token order).

    Per group, a QR of the (tokens × columns) block in float64, then an SVD of its triangle:
    directions with singular values below
    :math:`\sigma_{\max} \cdot \max(\mathrm{shape}) \cdot \varepsilon` (numpy's matrix rank) are
    dropped. ``split``: the tokens are held group by group (:func:`_token_order`), so that q_t is
    block diagonal; else the one group's block spans every token, in natural order.
    """
    n, like = rows.shape[1], rows
    eps = torch.finfo(torch.float64).eps
    parts = []
    gathered = _group_blocks(rows, sources, groups, workspace)  # (N_g, c_g): the group's tokens
    for (columns, tokens), block in zip(groups, gathered, strict=True):
        size, width = block.shape
        reuse = block.numel() >= REUSE_FROM
        if reuse:
            rank = min(size, width)
            q_out = workspace("q", (rank, size), torch.float64).T  # column-major
            q, r = torch.linalg.qr(block, out=(q_out, block.new_empty(rank, width)))
        else:
            q, r = torch.linalg.qr(block)
        u, s, vh = torch.linalg.svd(r, full_matrices=False)
        values = s.tolist()  # descending: the kept directions are a prefix
        k = sum(1 for value in values if value > values[0] * max(block.shape) * eps)
        out = workspace("qu", (size, k), torch.float64) if reuse else None
        spanned = torch.mm(q, u[:, :k], out=out)
        basis = spanned.new_empty(k, size, dtype=dtype).copy_(spanned.T)  # its own: (k, N_g)
        parts.append((tokens, basis, columns, vh[:k], s[:k]))
    # coeffs (r, c): block diagonal in (group rows, group columns), columns back in their order
    by_group = torch.block_diag(*[part[3] for part in parts])  # type: ignore[no-untyped-call]
    by_group = by_group.mul_(torch.cat([part[4] for part in parts])[:, None]).to(dtype)  # s vh
    grouped = torch.tensor([j for part in parts for j in part[2]], device=like.device)
    coeffs = by_group.index_select(1, grouped.argsort())
    blocks, q_blocks, row, position = [], [], 0, 0
    for tokens, basis, *_ in parts:
        directions = slice(row, row + basis.shape[0])
        positions = slice(position, position + tokens.numel())
        if not split:  # one group: its block spans every token, in natural order
            positions = slice(0, n)
            q_blocks.append(like.new_zeros(basis.shape[0], n, dtype=dtype))
            q_blocks[-1][:, tokens] = basis
        else:
            q_blocks.append(basis)
        blocks.append((directions, positions))
        row, position = directions.stop, positions.stop
    return coeffs, blocks, q_blocks

r"""The explicit sampler: draw the input embeddings E themselves (N·d_max normal numbers).

For :math:`W_q = \sum_x q(x) u_{f^*(x)} e_x^\top` (Cabannes et al. 2024, §2) the score of output y
for x is

.. math::

    u_y^\top W e_x = \sum_{y'} (u_y \cdot u_{y'}) \sum_{x': f^*(x')=y'} q(x') (e_{x'} \cdot e_x),

so with :math:`S = E^\top \operatorname{diag}(q) F` (d×M, F the one-hot N×M target matrix) and
:math:`G = U U^\top` (M×M), :math:`\mathrm{scores} = (E S) G`: O(N·d·M) work per weighting instead
of the O(N·d²) of forming W (docs: kernels-sampling.md). Row k of S depends only on coordinate k of
the embeddings, so every nested d comes from one pass over the coordinates with running sums.
Weightings that change with d (thresholds with P = d/8, or per-d renormalised spherical rows) are
recomputed at each d.

Orthogonal embeddings are taken as the canonical basis: the scores :math:`u_y^\top W e_x` do not
change when the input and the output spaces are rotated (separately), so this is the same law, and
with it :math:`E E^\top = I` holds exactly, so the exact ties of unstored tokens stay exact in
floating point. Works for every embedding kind.
"""

from collections.abc import Iterator, Sequence
from concurrent.futures import Executor

import torch

from assocmem import rng
from assocmem.closed_form.problem import Problem
from assocmem.closed_form.samplers.base import Sampler, TrialWeights
from assocmem.embeddings import (
    CLUSTERED,
    clustered_coordinates,
    nested_row_scales,
    standard_coordinates,
)
from assocmem.ops.scores import stored_rows


class Explicit(Sampler):
    """E drawn in full at d_max from the trial's ``embeddings`` stream (nested d share it)."""

    name = "explicit"
    draws_ahead = True

    def draw(
        self, problem: Problem, weights: TrialWeights, helper: Executor | None = None
    ) -> torch.Tensor | None:
        """The raw N(0, 1) coordinates (d_max, N); None for orthogonal embeddings.

        Clustered embeddings mix in their groups' centres, drawn from the trial's
        ``embedding_centres`` stream (the tokens' own part is the Gaussian kind's draw)."""
        if problem.cfg.embedding == "orthogonal":
            return None
        return input_coordinates(problem, weights.trial)

    def aggregates(
        self, problem: Problem, weights: TrialWeights, drawn: torch.Tensor | None
    ) -> Iterator[tuple[slice, torch.Tensor]]:
        every_dim = slice(0, len(problem.dims))
        if drawn is None:  # orthogonal = canonical basis: E Eᵀ = I, so E S = diag(q) L exactly
            yield every_dim, stored_rows(weights.varying_q, weights.varying_labels)
            return
        labels = (weights.fixed_labels, weights.varying_labels)
        yield every_dim, nested_scores(problem, drawn, weights.fixed_q, weights.varying_q, labels)


def input_coordinates(problem: Problem, trial: int) -> torch.Tensor:
    """The raw input coordinates (d_max, N) of a trial, from its ``embeddings`` stream (and its
    ``embedding_centres`` stream for clustered embeddings); not for orthogonal embeddings."""
    cfg = problem.cfg
    gen = rng.generator(cfg.seed, "embeddings", trial, device=problem.device)
    device, dtype, d_max = problem.device, problem.dtype, problem.dims[-1]
    coords = standard_coordinates(cfg.n_inputs, d_max, gen, device=device, dtype=dtype)
    if cfg.embedding != CLUSTERED:
        return coords
    gen = rng.generator(cfg.seed, "embedding_centres", trial, device=device)
    centres = standard_coordinates(cfg.n_groups, d_max, gen, device=device, dtype=dtype)
    return clustered_coordinates(coords, centres, problem.groups(trial), cfg.similarity)


def _stored_end(q: torch.Tensor) -> list[int]:
    """For q (D, K, N): one past the last token with a nonzero weight, at each of the D dims.

    Thresholds store the most frequent tokens, which under Zipf come first: products with the
    stored side only need this prefix of the tokens (a view of the embeddings, no gather).
    """
    nonzero = q.ne(0).any(1)  # (D, N)
    position = torch.arange(1, q.shape[-1] + 1, device=q.device)
    return (nonzero * position).amax(1).clamp(min=1).tolist()


def _dim_groups(dims: Sequence[int], ratio: float = 3.0) -> list[slice]:
    """Consecutive runs of the sorted dims whose largest is at most ``ratio`` × their smallest."""
    groups, first = [], 0
    for i, d in enumerate(dims):
        if d > ratio * dims[first]:
            groups.append(slice(first, i))
            first = i
    groups.append(slice(first, len(dims)))
    return groups


def nested_scores(
    problem: Problem,
    coords: torch.Tensor,
    fixed_q: torch.Tensor,
    varying_q: torch.Tensor,
    labels: tuple[torch.Tensor, torch.Tensor],
) -> torch.Tensor:
    r""":math:`(E_d S_d)^\top` at every nested d: (D, K·M, N), fixed columns first.

    coords: (d_max, N) raw N(0, 1) coordinates; fixed_q (K_f, N); varying_q (D, K_v, N).
    """
    cfg = problem.cfg
    scales = nested_row_scales(coords, problem.dims, cfg.embedding, cfg.nested)  # (D, N)
    spherical = cfg.embedding == "spherical"
    if spherical:  # the stored side carries the row norms too
        fixed_q = fixed_q * scales[0]  # truncate: fixed along d (renormalize has no fixed columns)
        varying_q = varying_q * scales[:, None, :]
    fixed_stored = stored_rows(fixed_q, labels[0])  # (K_f·M, N)
    ends = _stored_end(varying_q) if varying_q.shape[1] else [1] * len(problem.dims)
    varying_stored = stored_rows(varying_q[..., : max(ends)], labels[1][..., : max(ends)])
    n_dims, n_var = varying_stored.shape[:2]  # (D, K_v·M, end)
    n_fixed = fixed_stored.shape[0]
    # Summaries S_dᵀ = (Eᵀ diag(q) L)ᵀ on the first d coordinates, zero beyond: (·, d_max).
    fixed_summary = (coords @ fixed_stored.T).T  # (K_f·M, d_max); this orientation is faster
    var_summary = coords.new_zeros(n_dims, n_var, coords.shape[0])
    if n_var:
        for i, (d, end) in enumerate(zip(problem.dims, ends, strict=True)):
            torch.mm(varying_stored[i, :, :end], coords[:d, :end].T, out=var_summary[i, :, :d])
    n = coords.shape[1]
    out = coords.new_empty(n_dims, n_fixed + n_var, n)
    # Fixed columns: E_d S grows block by block (one pass over the coordinates): the products of
    # the blocks, then a running sum over d.
    prev = 0
    for j, d in enumerate(problem.dims):
        torch.mm(fixed_summary[:, prev:d], coords[prev:d], out=out[j, :n_fixed])
        prev = d
    out[:, :n_fixed] = out[:, :n_fixed].cumsum(dim=0)
    # Columns that change with d: one GEMM per group of similar d (summaries are zero beyond
    # their d, so each group reads only the coordinates below its largest d).
    for group in _dim_groups(problem.dims):
        top = problem.dims[group.stop - 1]
        rows = var_summary[group, :, :top].reshape(-1, top)
        out[group, n_fixed:] = (rows @ coords[:top]).view(group.stop - group.start, n_var, n)
    # query-side row scale (for Gaussian rows, a constant covering the stored side as well)
    return out.mul_((scales if spherical else scales.square())[:, None, :])

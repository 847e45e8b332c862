"""Closed-form associative memories with exact population error, without forming W.

For ``W_q = Σ_x q(x) u_{f*(x)} e_xᵀ`` (Cabannes et al. 2024; see the docs: science/schemes.md) the
score of output y for input x is

    u_yᵀ W e_x = Σ_{y'} (u_y·u_{y'}) · Σ_{x': f*(x')=y'} q(x') (e_{x'}·e_x),

so with ``S = Eᵀ diag(q) F`` (d×M, F the one-hot N×M target matrix) and ``G = U Uᵀ`` (M×M),
``scores = (E S) G``: O(N·d·M) work per weighting instead of the O(N·d²) of forming W
(ARCHITECTURE.md, idea 1). Row k of S depends only on coordinate k of the embeddings, so every
nested d comes from one pass over the coordinates with running sums. Weightings that change with
d (thresholds with P = d/8, or per-d renormalised spherical rows) are recomputed at each d.

Each trial is computed on its own (its own 2-D matrix products), from its own named random
streams, so its numbers are identical whether it runs alone or among many trials, in any chunk.
Orthogonal embeddings are taken as the canonical basis: the scores ``u_yᵀ W e_x`` do not change
when the input and the output spaces are rotated (separately), so this is the same law, and with
it ``E Eᵀ = I`` holds exactly, so the exact ties of unstored tokens stay exact in floating point.

The correct output must be the *strict* maximum: ties count as errors (a memory that stores
nothing about x, scores 0 everywhere, never answers x correctly).
"""

import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from assocmem import rng
from assocmem.closed_form.config import ClosedFormConfig, working_set_bytes
from assocmem.closed_form.problem import Problem
from assocmem.closed_form.readout import Evaluator
from assocmem.closed_form.result import ClosedFormResult, Column, provenance
from assocmem.embeddings import nested_row_scales, standard_coordinates
from assocmem.runtime import intra_op_threads


def _stored(q: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """``(diag(q) L)ᵀ`` for every column: q (..., K, N), label laws Lᵀ (K, M, N) → (..., K·M, N).

    Without label noise L is the one-hot matrix F of f*.
    """
    return (q.unsqueeze(-2) * labels).flatten(-3, -2)


def _stored_end(q: torch.Tensor) -> list[int]:
    """For q (D, K, N): one past the last token with a nonzero weight, at each of the D dims.

    Thresholds store the most frequent tokens, which under Zipf come first: products with the
    stored side only need this prefix of the tokens (a view of the embeddings, no gather).
    """
    nonzero = q.ne(0).any(1)  # (D, N)
    position = torch.arange(1, q.shape[-1] + 1, device=q.device)
    return (nonzero * position).amax(1).clamp(min=1).tolist()


def _output_grams(problem: Problem, trial: int) -> list[torch.Tensor]:
    """``G_d = U_d U_dᵀ`` (M×M) for each d, under the output-embedding law and nested convention."""
    cfg = problem.cfg
    gen = rng.generator(cfg.seed, "output_embeddings", trial, device=problem.device)
    if cfg.output_embedding == "orthogonal":  # canonical basis: U Uᵀ = I exactly
        return [
            torch.eye(cfg.n_outputs, device=problem.device, dtype=problem.dtype)
            for _ in problem.dims
        ]
    coords = standard_coordinates(
        cfg.n_outputs, problem.dims[-1], gen, device=problem.device, dtype=problem.dtype
    )  # (d_max, M)
    scales = nested_row_scales(coords, problem.dims, cfg.output_embedding, cfg.nested)
    grams, running, prev = [], coords.new_zeros(cfg.n_outputs, cfg.n_outputs), 0
    for i, d in enumerate(problem.dims):
        block = coords[prev:d]
        running = running + block.T @ block
        grams.append(scales[i][:, None] * running * scales[i][None, :])
        prev = d
    return grams


@dataclass
class _Draws:
    """Everything random about one trial: targets, weights and label laws, output Grams and the
    raw input coordinates. Drawn ahead of time (in a helper thread) while the previous trial
    computes: the generator is serial, the matrix products are not."""

    targets: torch.Tensor
    weights: tuple[torch.Tensor, ...]  # fixed_q, varying_q, fixed_labels, varying_labels
    grams: torch.Tensor  # (D, M, M)
    coords: torch.Tensor | None  # (d_max, N) raw N(0, 1); None for orthogonal embeddings


def _draw(problem: Problem, trial: int) -> _Draws:
    cfg = problem.cfg
    with torch.inference_mode():
        targets = problem.targets(trial)
        weights = tuple(w.to(problem.dtype) for w in problem.weights(trial, targets))
        grams = torch.stack(_output_grams(problem, trial))
        coords = None
        if cfg.embedding != "orthogonal":
            gen = rng.generator(cfg.seed, "embeddings", trial, device=problem.device)
            coords = standard_coordinates(
                cfg.n_inputs, problem.dims[-1], gen, device=problem.device, dtype=problem.dtype
            )
    return _Draws(targets, weights, grams, coords)


def _aggregates(problem: Problem, draws: _Draws) -> tuple[torch.Tensor, torch.Tensor, Evaluator]:
    """One trial's ``(E_d S_d)ᵀ`` (D, K·M, N), its output Grams (D, M, M) and its evaluator."""
    evaluate = Evaluator(problem, draws.targets)
    fixed_q, varying_q, fixed_labels, varying_labels = draws.weights
    if draws.coords is None:  # orthogonal = canonical basis: E Eᵀ = I, so E S = diag(q) L exactly
        return _stored(varying_q, varying_labels), draws.grams, evaluate
    labels = (fixed_labels, varying_labels)
    aggregated = _nested_scores(problem, draws.coords, fixed_q, varying_q, labels)
    return aggregated, draws.grams, evaluate


def _trial(problem: Problem, draws: _Draws) -> dict[str, np.ndarray]:
    """Metrics of one trial (error, head, and the readout metrics if asked): (n_columns, n_dims)."""
    aggregated, grams, evaluate = _aggregates(problem, draws)
    order = problem.order
    out = {}
    for name, values in evaluate(aggregated, grams).items():
        out[name] = np.zeros((len(problem.columns), len(problem.dims)))
        out[name][order] = values.T.cpu().numpy()
    return out


def trial_scores(cfg: ClosedFormConfig, trial: int = 0) -> dict[tuple[Column, int], torch.Tensor]:
    """The score matrices ``scores[x, y] = u_yᵀ W_q e_x`` (N, M) of one trial, per (column, d).

    For pictures of what a memory stores (e.g. the softmax of the scores, the docs:
    science/figures.md).
    """
    problem = Problem(cfg)
    with torch.inference_mode():
        aggregated, grams, _ = _aggregates(problem, _draw(problem, trial))
        n_dims, _, n = aggregated.shape
        blocks = aggregated.view(n_dims, -1, cfg.n_outputs, n)  # (D, K, M, N)
        scores = (grams[:, None].transpose(-1, -2) @ blocks).transpose(-1, -2)  # (D, K, N, M)
    order = problem.order
    return {
        (problem.columns[col], d): scores[i, k].cpu()
        for k, col in enumerate(order)
        for i, d in enumerate(problem.dims)
    }


def _dim_groups(dims: Sequence[int], ratio: float = 3.0) -> list[slice]:
    """Consecutive runs of the sorted dims whose largest is at most ``ratio`` × their smallest."""
    groups, first = [], 0
    for i, d in enumerate(dims):
        if d > ratio * dims[first]:
            groups.append(slice(first, i))
            first = i
    groups.append(slice(first, len(dims)))
    return groups


def _nested_scores(
    problem: Problem,
    coords: torch.Tensor,
    fixed_q: torch.Tensor,
    varying_q: torch.Tensor,
    labels: tuple[torch.Tensor, torch.Tensor],
) -> torch.Tensor:
    """``(E_d S_d)ᵀ`` at every nested d: (D, K·M, N), fixed columns first.

    coords: (d_max, N) raw N(0, 1) coordinates; fixed_q (K_f, N); varying_q (D, K_v, N).
    """
    cfg = problem.cfg
    scales = nested_row_scales(coords, problem.dims, cfg.embedding, cfg.nested)  # (D, N)
    spherical = cfg.embedding == "spherical"
    if spherical:  # the stored side carries the row norms too
        fixed_q = fixed_q * scales[0]  # truncate: fixed along d (renormalize has no fixed columns)
        varying_q = varying_q * scales[:, None, :]
    fixed_stored = _stored(fixed_q, labels[0])  # (K_f·M, N)
    ends = _stored_end(varying_q) if varying_q.shape[1] else [1] * len(problem.dims)
    varying_stored = _stored(varying_q[..., : max(ends)], labels[1][..., : max(ends)])
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


def run_closed_form(
    cfg: ClosedFormConfig,
    *,
    trials: Iterable[int] | None = None,
    progress: bool | Callable[[int], None] = False,
) -> ClosedFormResult:
    """Run every (scheme, d, T) of ``cfg`` for each trial: the exact population error.

    Never forms W: the scores ``u_yᵀ W_q e_x`` come from ``(E S) G`` with ``S = Eᵀ diag(q) F``,
    one pass over the nested dimensions.

    Parameters
    ----------
    cfg : ClosedFormConfig
        The experiment.
    trials : iterable of int, optional
        The trial indices to run (default ``range(cfg.trials)``); a trial's result does not
        depend on which others run with it.
    progress : bool or callable, default False
        True for a progress bar on stderr, or a callable called with each finished trial.

    Returns
    -------
    ClosedFormResult
        Per-trial errors of shape (n_trials, n_columns, n_dims); ``.to_frame()`` gives tidy rows.

    Raises
    ------
    ConfigError
        If the run would exceed ``cfg.memory_gb``.

    Notes
    -----
    The closed-form memories of Cabannes et al. (2024), Theorem 1 and Proposition 4; see the docs:
    science/schemes.md.
    """
    from assocmem.progress import progress_bar

    start = time.perf_counter()
    problem = Problem(cfg)
    trial_ids = list(range(cfg.trials) if trials is None else trials)
    bar = progress_bar(len(trial_ids), "closed-form", "trial", progress is True, leave=True)
    # Draw trial t+1 while trial t computes, when two trials' embeddings fit the memory budget.
    # The generator is serial: leave it one core, and the matrix products the others.
    overlap = 2 * working_set_bytes(cfg) <= cfg.memory_gb * 2**30
    threads = torch.get_num_threads()
    if overlap and problem.device.type == "cpu":
        threads -= 1
    with intra_op_threads(threads):
        metrics = _run_trials(problem, trial_ids, overlap, bar, progress)
    return ClosedFormResult(
        config=cfg,
        trials=trial_ids,
        columns=problem.columns,
        dims=problem.dims,
        errors=metrics.pop("error"),
        head=metrics.pop("head"),
        readout=metrics,
        provenance=provenance(cfg.device, time.perf_counter() - start),
    )


def _run_trials(
    problem: Problem,
    trial_ids: list[int],
    overlap: bool,
    bar: Any,
    progress: bool | Callable[[int], None],
) -> dict[str, np.ndarray]:
    """Every trial's metrics, (n_trials, n_columns, n_dims) each; see :func:`run_closed_form`."""
    shape = (len(trial_ids), len(problem.columns), len(problem.dims))
    metrics: dict[str, np.ndarray] = {}
    with torch.inference_mode(), bar, ThreadPoolExecutor(max_workers=1) as pool:
        upcoming: Future[_Draws] | None = None
        for row, trial in enumerate(trial_ids):
            draws = upcoming.result() if upcoming else _draw(problem, trial)
            upcoming = None
            if overlap and row + 1 < len(trial_ids):
                upcoming = pool.submit(_draw, problem, trial_ids[row + 1])
            for name, values in _trial(problem, draws).items():
                metrics.setdefault(name, np.zeros(shape))[row] = values
            bar.update()
            if callable(progress):
                progress(row + 1)
    return metrics

r"""Closed-form memories at large N·M: top-1 in blocks of inputs.

The whole path holds the class-aggregated products :math:`(E_d S_d)^\top` (N×M per column) and
:math:`G = U U^\top` (M×M): 261 GiB at N = M = 10⁵. With one-hot labels (no label noise, infinite
data) the score of output y for input x is

.. math::

    s_d(x, y) = e_x^\top \Big(\sum_{x'} q(x') e_{x'} u_{f^*(x')}^\top\Big) u_y
    = e_x^\top W_d^\top u_y,

so the d×d matrix :math:`W_d^\top` (:func:`~assocmem.ops.scores.one_hot_memory`, O(N·d²)) is formed
at each d, and a block of inputs at a time is scored against all M outputs and judged by the strict
rule (:func:`~assocmem.ops.top1.wrong_in_blocks`, O(N·d·M)). Memory: O((N + M)·d + block·M).

:func:`~assocmem.closed_form.cost.top1_in_blocks` says where it runs, from the config alone:
smaller runs keep the whole path and its bits (the two round differently). The numbers drawn are
the explicit sampler's (the trial's ``embeddings`` and ``output_embeddings`` streams), the
weights q those of :meth:`Problem.weights` at infinite data.
"""

import numpy as np
import torch

from assocmem.closed_form import cost
from assocmem.closed_form.problem import Problem
from assocmem.closed_form.samplers.explicit import input_coordinates
from assocmem.embeddings import nested_row_scales
from assocmem.ops.scores import one_hot_memory
from assocmem.ops.top1 import Features, wrong_in_blocks


def column_weights(problem: Problem) -> torch.Tensor:
    """q of every column at every d, (D, K, N) in the run's dtype, columns in
    ``problem.columns`` order (infinite data: one column per scheme, q from p)."""
    n_dims = len(problem.dims)
    source = problem.probs[None]  # (1, N): T = ∞
    per_scheme = [s.weights(source, problem.dims) for s in problem.schemes]  # (1 or D, 1, N)
    stacked = torch.cat([q.expand(n_dims, *q.shape[1:]) for q in per_scheme], dim=1)
    return stacked.to(problem.dtype)


def blocked_wrong(problem: Problem, trial: int, block: int | None = None) -> torch.Tensor:
    """(D, K, N) bool: the tokens each column's memory gets wrong at each d, in blocks.

    ``block``: inputs per block (default :func:`~assocmem.closed_form.cost.top1_block`, from
    the memory budget); the flags do not depend on it.
    """
    cfg = problem.cfg
    block = block or max(cost.top1_block(cfg), 2)
    targets = problem.targets(trial).to(problem.device)
    q = column_weights(problem)  # (D, K, N)
    coords = input_coordinates(problem, trial)  # (d_max, N)
    scales = nested_row_scales(coords, problem.dims, cfg.embedding, cfg.nested)  # (D, N)
    outputs, output_scales = problem.output_coordinates(trial)  # (d_max, M), (D, M)
    wrong = torch.empty(q.shape, dtype=torch.bool, device=problem.device)
    for i, d in enumerate(problem.dims):
        keys, scale = coords[:d], scales[i]
        stored = q[i] * scale * output_scales[i].index_select(0, targets)  # (K, N)
        memory = one_hot_memory(keys, stored, outputs[:d], targets)  # (K, d, d): W_dᵀ
        features = _queries_through(keys, scale, memory)
        wrong[i] = wrong_in_blocks(
            features, outputs[:d], targets, block=block, column_scale=output_scales[i]
        )
    return wrong


def _queries_through(keys: torch.Tensor, scale: torch.Tensor, memory: torch.Tensor) -> Features:
    """``features(start, stop)``: the embeddings e_x of inputs start:stop (raw columns of
    ``keys`` (d, N) times their ``scale`` (N,)) through each memory (K, d, d): (K, b, d)."""

    def features(start: int, stop: int) -> torch.Tensor:
        queries = keys[:, start:stop].T * scale[start:stop, None]  # (b, d)
        return queries @ memory

    return features


def blocked_trial(problem: Problem, trial: int) -> dict[str, np.ndarray]:
    """The error and its head part of one trial, each (n_columns, n_dims), in blocks."""
    with torch.inference_mode():
        error, head = problem.population_error(blocked_wrong(problem, trial))  # (D, K)
    return {"error": error.T.cpu().numpy(), "head": head.T.cpu().numpy()}

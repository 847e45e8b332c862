r"""Closed-form associative memories with exact population error, without forming W.

For :math:`W_q = \sum_x q(x)\, u_{f^*(x)} e_x^\top` (Cabannes et al. 2024; see the docs:
science/model.md) a trial draws its targets, weights q, label laws and output embeddings here; the
input embeddings' randomness is the sampler's (:mod:`assocmem.closed_form.samplers`: ``explicit``
draws E, ``in_law`` only the Gaussian quantities the scores depend on), which returns the
class-aggregated products :math:`(E_d S_d)^\top`; the evaluator turns them into errors.

Each trial is computed on its own (its own 2-D matrix products), from its own named random
streams, so its numbers are identical whether it runs alone or among many trials, in any chunk.

The correct output must be the *strict* maximum: ties count as errors (a memory that stores
nothing about x, scores 0 everywhere, never answers x correctly).
"""

import time
from collections.abc import Callable, Iterable
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import torch

from assocmem.closed_form import cost
from assocmem.closed_form.blocked import blocked_trial, blocked_wrong
from assocmem.closed_form.config import ClosedFormConfig
from assocmem.closed_form.problem import Problem
from assocmem.closed_form.readout import Evaluator
from assocmem.closed_form.result import ClosedFormResult, Column, provenance
from assocmem.closed_form.samplers import Sampler, TrialWeights, get_sampler
from assocmem.runtime import device_numerics, intra_op_threads


def _output_grams(problem: Problem, trial: int) -> torch.Tensor:
    r""":math:`G_d = U_d U_d^\top` (D, M, M) for each d, under the output-embedding law and nested
    convention."""
    m, n_dims = problem.cfg.n_outputs, len(problem.dims)
    if problem.cfg.output_embedding == "orthogonal":  # canonical basis: U Uᵀ = I exactly
        eye = torch.eye(m, device=problem.device, dtype=problem.dtype)
        return eye.expand(n_dims, m, m).clone()
    coords, scales = problem.output_coordinates(trial)  # (d_max, M), (D, M)
    grams, running, prev = coords.new_empty(n_dims, m, m), coords.new_zeros(m, m), 0
    for i, d in enumerate(problem.dims):
        block = coords[prev:d]
        running = torch.add(running, block.T @ block, out=grams[i])
        prev = d
    return grams.mul_(scales[:, :, None]).mul_(scales[:, None, :])


@dataclass
class _Draws:
    """Everything random about one trial: targets, weights and label laws, output Grams and
    what the sampler draws ahead (explicit: the raw input coordinates). Drawn ahead of time (in
    a helper thread) while the previous trial computes: the generator is serial, the matrix
    products are not."""

    weights: TrialWeights
    grams: torch.Tensor  # (D, M, M)
    sampled: Any


def _draw(problem: Problem, sampler: Sampler, trial: int, helper: Executor | None = None) -> _Draws:
    with torch.inference_mode():
        targets = problem.targets(trial)
        weights = TrialWeights(
            trial, targets, *(w.to(problem.dtype) for w in problem.weights(trial, targets))
        )
        grams = _output_grams(problem, trial)
        sampled = sampler.draw(problem, weights, helper)
    return _Draws(weights, grams, sampled)


def _trial(problem: Problem, sampler: Sampler, draws: _Draws) -> dict[str, np.ndarray]:
    """Metrics of one trial (error, head, and the readout metrics if asked): (n_columns, n_dims)."""
    evaluate = Evaluator(problem, draws.weights.targets)
    order = problem.order
    out: dict[str, np.ndarray] = {}
    for dims, aggregated in sampler.aggregates(problem, draws.weights, draws.sampled):
        for name, values in evaluate(aggregated, draws.grams[dims]).items():
            table = out.setdefault(name, np.zeros((len(problem.columns), len(problem.dims))))
            table[order, dims] = values.T.cpu().numpy()
    return out


def trial_scores(cfg: ClosedFormConfig, trial: int = 0) -> dict[tuple[Column, int], torch.Tensor]:
    r"""The score matrices ``scores[x, y]`` :math:`= u_y^\top W_q e_x` (N, M) of one trial.

    One per (column, d).

    For pictures of what a memory stores (e.g. the softmax of the scores; the docs:
    science/figures.md). Drawn by the config's resolved sampler.
    """
    problem = Problem(cfg)
    sampler = get_sampler(cfg.resolved_sampler)
    with torch.inference_mode():
        draws = _draw(problem, sampler, trial)
        parts = sampler.aggregates(problem, draws.weights, draws.sampled)
        aggregated = torch.cat([chunk.clone() for _, chunk in parts])  # chunks may share memory
        n_dims, _, n = aggregated.shape
        blocks = aggregated.view(n_dims, -1, cfg.n_outputs, n)  # (D, K, M, N)
        grams = draws.grams
        scores = (grams[:, None].transpose(-1, -2) @ blocks).transpose(-1, -2)  # (D, K, N, M)
    order = problem.order
    return {
        (problem.columns[col], d): scores[i, k].cpu()
        for k, col in enumerate(order)
        for i, d in enumerate(problem.dims)
    }


def retrieval(cfg: ClosedFormConfig, trials: Iterable[int] | None = None) -> np.ndarray:
    """Which tokens each trial's memories retrieve: (n_trials, n_columns, n_dims, N) bool.

    True where the target is the strict maximum of the scores (the complement of what the
    population error sums). Columns in ``Problem(cfg).columns`` order, dims sorted; trials
    default to ``range(cfg.trials)``. Drawn by the config's resolved sampler, with the same
    numbers as :func:`run_closed_form` (top-1 in blocks where it is, at large N·M).
    """
    problem = Problem(cfg)
    sampler = get_sampler(cfg.resolved_sampler)
    trial_ids = list(range(cfg.trials) if trials is None else trials)
    shape = (len(trial_ids), len(problem.columns), len(problem.dims), cfg.n_inputs)
    out = np.zeros(shape, dtype=bool)
    with torch.inference_mode():
        for row, trial in enumerate(trial_ids):
            if cost.top1_in_blocks(cfg):
                out[row] = ~blocked_wrong(problem, trial).transpose(0, 1).cpu().numpy()
                continue
            draws = _draw(problem, sampler, trial)
            evaluate = Evaluator(problem, draws.weights.targets)
            for dims, aggregated in sampler.aggregates(problem, draws.weights, draws.sampled):
                wrong = evaluate.wrong(evaluate.scores(aggregated, draws.grams[dims]))
                out[row][problem.order, dims] = ~wrong.transpose(0, 1).cpu().numpy()
    return out


def run_closed_form(
    cfg: ClosedFormConfig,
    *,
    trials: Iterable[int] | None = None,
    progress: bool | Callable[[int], None] = False,
) -> ClosedFormResult:
    r"""Run every (scheme, d, T) of ``cfg`` for each trial: the exact population error.

    Never forms W: the scores :math:`u_y^\top W_q e_x` come from ``(E S) G`` with
    :math:`S = E^\top \operatorname{diag}(q) F`, one pass over the nested dimensions.

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
    sampler = get_sampler(cfg.resolved_sampler)
    trial_ids = list(range(cfg.trials) if trials is None else trials)
    bar = progress_bar(len(trial_ids), "closed-form", "trial", progress is True, leave=True)
    # The generator is serial: leave it one core, and the matrix products the others.
    mode = draw_mode(cfg, sampler)
    threads = torch.get_num_threads()
    helped = mode == "helper" or sampler.draws_in_background
    if helped and problem.device.type == "cpu" and not cost.top1_in_blocks(cfg):
        threads = max(1, threads - 1)
    with intra_op_threads(threads), device_numerics(problem.device):
        if cost.top1_in_blocks(cfg):  # large N·M: never the N×M scores (closed_form/blocked.py)
            metrics = _run_blocked(problem, trial_ids, bar, progress)
        else:
            metrics = _run_trials(problem, sampler, trial_ids, mode, bar, progress)
    return ClosedFormResult(
        config=cfg,
        trials=trial_ids,
        columns=problem.columns,
        dims=problem.dims,
        errors=metrics.pop("error"),
        head=metrics.pop("head"),
        readout=metrics,
        provenance=provenance(cfg.device, time.perf_counter() - start, cfg.resolved_sampler),
    )


DrawMode = Literal["helper", "ahead", "in_line"]


def draw_mode(cfg: ClosedFormConfig, sampler: Sampler) -> DrawMode:
    """How trial t + 1 is drawn while trial t computes, where the memory budget holds two
    trials' draws beside a running trial (the cost model's ``working_set`` and ``draw_ahead``):

    - ``helper``: all of it in a helper thread, when the sampler's draws are worth it at this
      N (``Sampler.draws_ahead``, ``ahead_from_tokens``);
    - ``ahead``: in this thread before trial t computes, with its random numbers in the helper
      (``Sampler.draws_in_background``: below ``ahead_from_tokens`` a whole draw is hundreds of
      short calls, and two threads of them contend for the GIL more than they overlap);
    - ``in_line``: after trial t (no room, or nothing to overlap).

    Timing only: the numbers are the same in every mode.
    """
    need = cost.costs(cfg)[cfg.resolved_sampler]
    if need.working_set + need.draw_ahead > cfg.memory_gb * 2**30:
        return "in_line"
    if sampler.draws_ahead and cfg.n_inputs >= sampler.ahead_from_tokens:
        return "helper"
    return "ahead" if sampler.draws_in_background else "in_line"


def _run_trials(
    problem: Problem,
    sampler: Sampler,
    trial_ids: list[int],
    mode: DrawMode,
    bar: Any,
    progress: bool | Callable[[int], None],
) -> dict[str, np.ndarray]:
    """Every trial's metrics, (n_trials, n_columns, n_dims) each; see :func:`run_closed_form`."""
    shape = (len(trial_ids), len(problem.columns), len(problem.dims))
    metrics: dict[str, np.ndarray] = {}
    with torch.inference_mode(), bar, ThreadPoolExecutor(max_workers=1) as pool:
        upcoming: Future[_Draws] | _Draws | None = None  # the next trial's (see draw_mode)
        for row, trial in enumerate(trial_ids):
            if isinstance(upcoming, Future):
                upcoming = upcoming.result()
            draws = upcoming or _draw(problem, sampler, trial)
            upcoming = None
            if row + 1 < len(trial_ids) and mode == "helper":
                upcoming = pool.submit(_draw, problem, sampler, trial_ids[row + 1])
            elif row + 1 < len(trial_ids) and mode == "ahead":
                upcoming = _draw(problem, sampler, trial_ids[row + 1], pool)
            for name, values in _trial(problem, sampler, draws).items():
                metrics.setdefault(name, np.zeros(shape))[row] = values
            bar.update()
            if callable(progress):
                progress(row + 1)
    return metrics


def _run_blocked(
    problem: Problem, trial_ids: list[int], bar: Any, progress: bool | Callable[[int], None]
) -> dict[str, np.ndarray]:
    """Every trial's error and head, (n_trials, n_columns, n_dims) each, top-1 in blocks."""
    shape = (len(trial_ids), len(problem.columns), len(problem.dims))
    metrics = {name: np.zeros(shape) for name in ("error", "head")}
    with bar:
        for row, trial in enumerate(trial_ids):
            for name, values in blocked_trial(problem, trial).items():
                metrics[name][row] = values
            bar.update()
            if callable(progress):
                progress(row + 1)
    return metrics

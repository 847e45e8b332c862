r"""Similar tokens: what a closed-form memory with clustered embeddings retrieves, measured token
by token against the Gaussian theory of its scores (:mod:`assocmem.studies.similar.theory`; docs:
beyond/similar.md).
"""

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import torch

from assocmem.closed_form.config import ClosedFormConfig
from assocmem.closed_form.problem import Problem
from assocmem.embeddings import CLUSTERED
from assocmem.laws.tokens import majority_labels
from assocmem.runtime import intra_op_threads

# QUADRATURE_NODES is re-exported (``as``): the run kind reads it from here.
from assocmem.studies.similar.theory import QUADRATURE_NODES as QUADRATURE_NODES
from assocmem.studies.similar.theory import (
    correct_probability,
    output_gram_variances,
    score_moments,
)

METRICS = (
    "error",
    "unseen_error",
    "unseen_mass",
    "unstored_error",
    "unstored_mass",
    "theory_error",
    "theory_unseen_error",
    "theory_unstored_error",
)


@dataclass(frozen=True)
class StoredMemory:
    """What one trial's memories store, column by column (``Problem(cfg).columns`` order).

    Attributes
    ----------
    probabilities : torch.Tensor, shape (N,)
        p, float64.
    groups, targets : torch.Tensor, shape (N,)
        g(x) and f*(x), int64 (groups all 0 without clustered embeddings or group targets).
    weights : torch.Tensor, shape (C, D, N)
        q(x) of each column at each d (``Problem(cfg).dims``), float64.
    labels : torch.Tensor, shape (C, M, N)
        The stored label law of each column.
    seen : torch.Tensor, shape (C, N)
        n(x) > 0 in the column's sample (all True at infinite data).
    """

    probabilities: torch.Tensor
    groups: torch.Tensor
    targets: torch.Tensor
    weights: torch.Tensor
    labels: torch.Tensor
    seen: torch.Tensor


def uses_groups(cfg: ClosedFormConfig) -> bool:
    """Whether the config has groups (clustered embeddings or group-shared targets)."""
    return cfg.embedding == CLUSTERED or cfg.target == "group"


def stored_memory(cfg: ClosedFormConfig, trial: int) -> StoredMemory:
    """The weights, label laws and seen tokens of one trial's columns (same draws as the kernel).

    Parameters
    ----------
    cfg : ClosedFormConfig
    trial : int

    Returns
    -------
    StoredMemory
    """
    problem = Problem(cfg if cfg.device == "cpu" else replace(cfg, device="cpu"))
    targets = problem.targets(trial)
    freq, labels = problem.sample_statistics(trial, targets)  # (R, N), (R, M, N)
    population = problem.population_labels(targets)  # (M, N)
    if cfg.label_rule == "majority":  # as Problem.weights: the one-hot of f*(x)
        population = majority_labels(population)
    n_dims = len(problem.dims)
    weights, laws, seen = [], [], []
    for scheme in problem.schemes:
        source, law = (
            (freq, labels) if scheme.uses_data else (problem.probs[None], population[None])
        )
        q = scheme.weights(source, problem.dims)  # (n_d or 1, R, N)
        for row, size in enumerate(problem.sample_sizes if scheme.uses_data else [None]):
            weights.append(q[:, row].expand(n_dims, -1))
            laws.append(law[row])
            seen.append(
                freq[row] > 0 if size is not None else torch.ones_like(freq[0], dtype=torch.bool)
            )
    groups = problem.groups(trial) if uses_groups(cfg) else torch.zeros_like(targets)
    return StoredMemory(
        problem.probs_cpu.to(torch.float64),
        groups,
        targets,
        torch.stack(weights).to(torch.float64),
        torch.stack(laws).to(torch.float64),
        torch.stack(seen),
    )


def predicted_correct(cfg: ClosedFormConfig, memory: StoredMemory) -> torch.Tensor:
    """P(correct) of every token for every (column, d), shape (C, D, N), by the Gaussian theory."""
    dims = sorted(set(cfg.dims))
    rho = cfg.similarity if cfg.embedding == CLUSTERED else 0.0
    out = torch.empty(memory.weights.shape, dtype=torch.float64)
    for c in range(memory.weights.shape[0]):
        for i, d in enumerate(dims):
            gram = output_gram_variances(cfg.output_embedding, cfg.nested, d, dims[-1])
            mean, cov = score_moments(
                memory.weights[c, i], memory.labels[c], memory.groups, rho, d, gram
            )
            out[c, i] = correct_probability(mean, cov, memory.targets)
    return out


def trial_metrics(
    cfg: ClosedFormConfig, memory: StoredMemory, retrieved: np.ndarray
) -> dict[str, np.ndarray]:
    """The :data:`METRICS` of one trial, each (C, D).

    Parameters
    ----------
    cfg : ClosedFormConfig
    memory : StoredMemory
        The trial's stored weights (:func:`stored_memory`).
    retrieved : numpy.ndarray, shape (C, D, N), bool
        The kernel's per-token retrieval (:func:`assocmem.closed_form.retrieval`).

    Returns
    -------
    dict of str to numpy.ndarray
        ``error`` (the population error Σ p·1{wrong}); ``unseen_error`` and ``unseen_mass``:
        the part of it, and the mass p, of tokens with n(x) = 0 (none at infinite data);
        ``unstored_*`` the same for tokens with q(x) = 0; ``theory_*`` the Gaussian theory's
        expected values of the three errors.
    """
    p = memory.probabilities.numpy()
    wrong = ~retrieved
    unseen = ~memory.seen.numpy()[:, None, :]  # (C, 1, N)
    unstored = memory.weights.numpy() == 0  # (C, D, N)
    miss = 1.0 - predicted_correct(cfg, memory).numpy()
    return {
        "error": wrong @ p,
        "unseen_error": (wrong & unseen) @ p,
        "unseen_mass": np.broadcast_to(unseen @ p, wrong.shape[:2]).copy(),
        "unstored_error": (wrong & unstored) @ p,
        "unstored_mass": unstored @ p,
        "theory_error": miss @ p,
        "theory_unseen_error": (miss * unseen) @ p,
        "theory_unstored_error": (miss * unstored) @ p,
    }


def similar_trials(cfg: ClosedFormConfig, trials: Sequence[int]) -> list[dict[str, np.ndarray]]:
    """Token-by-token measurement and theory of closed-form memories, trial by trial.

    Parameters
    ----------
    cfg : ClosedFormConfig
        Any closed-form config (clustered embeddings or not).
    trials : sequence of int
        The trials; a trial's numbers do not depend on which others run with it.

    Returns
    -------
    list of dict of str to numpy.ndarray
        Per trial, the :data:`METRICS` (each (C, D): columns in ``Problem(cfg).columns`` order,
        sorted dims): the population error; the part of it on never-seen tokens (n(x) = 0) and
        on unstored ones (q(x) = 0) with their probability masses; the Gaussian theory's
        expectations of the three errors (:func:`trial_metrics`).

    Notes
    -----
    Similar tokens beyond Cabannes et al. (2024); see the docs: beyond/similar.md.
    """
    from assocmem.closed_form import retrieval

    # Small tensors (N·M per op): one thread is fastest, and far faster on a loaded machine
    # (assocmem.runtime); the kernel's products at N = 1000, d ≤ 4096 lose little.
    with intra_op_threads(1):
        retrieved = retrieval(cfg, trials)  # (n_trials, C, D, N)
        return [
            trial_metrics(cfg, stored_memory(cfg, trial), retrieved[row])
            for row, trial in enumerate(trials)
        ]

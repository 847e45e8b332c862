"""The capacity T*(d) of a memory written in context: the most pairs a context may hold (repeats
included) while the mean recall stays at least τ, found by the core's bracketing search."""

from dataclasses import dataclass

from assocmem.analysis.frontier import largest_n_bracketed
from assocmem.config.checks import int_at_least
from assocmem.studies.incontext.contexts import mqar_contexts
from assocmem.studies.incontext.states import Rule, recall_error


@dataclass(frozen=True)
class Task:
    """The contexts a capacity is measured on: N keys, M values, Zipf(α) keys, R contexts per
    evaluation, how keys are asked (``"context"`` or ``"law"``), the embeddings' kind."""

    n_keys: int
    n_values: int
    alpha: float = 0.0
    contexts: int = 20
    queries: str = "context"
    embedding: str = "gaussian"
    seed: int = 0


def mean_recall(rule: Rule, task: Task, dim: int, n_pairs: int) -> float:
    """1 − the mean recall error over the task's R contexts of T = ``n_pairs`` pairs."""
    contexts = mqar_contexts(
        task.contexts, n_pairs, task.n_keys, task.n_values, alpha=task.alpha, seed=task.seed
    )
    errors = recall_error(
        rule, contexts, dim, queries=task.queries, embedding=task.embedding, seed=task.seed
    )
    return 1.0 - float(errors.mean())


def capacity(
    rule: Rule,
    task: Task,
    dim: int,
    *,
    tau: float = 0.99,
    rel_tol: float = 0.02,
    max_pairs: int = 10**5,
) -> int:
    """T*(d): the largest T with mean recall ≥ τ, to ``rel_tol`` (0 where one pair already
    fails; ``max_pairs`` where it never does). The contexts of every T are prefixes of the
    longest, so recall falls with T along one draw."""
    int_at_least("dim", dim, 1)
    int_at_least("max_pairs", max_pairs, 1)
    return largest_n_bracketed(
        lambda t: mean_recall(rule, task, dim, t),
        tau,
        guess=dim,
        rel_tol=rel_tol,
        n_min=1,
        n_max=max_pairs,
    )


__all__ = ["Task", "capacity", "mean_recall"]

"""The capacity T*(d) of a memory written in context: the most pairs a context may hold (repeats
included) while the mean recall stays at least τ, found by the core's bracketing search."""

from dataclasses import dataclass

import torch

from assocmem.analysis.frontier import largest_n_bracketed
from assocmem.config.checks import int_at_least
from assocmem.laws.tokens import zipf_probabilities
from assocmem.studies.incontext.contexts import Contexts, mqar_contexts
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
    n_queries: int = 0  # 0: every key read; Q: Q sampled queries a context
    first: int = 0  # the streams' index of the first context

    def contexts_at(self, n_pairs: int) -> Contexts:
        """The task's R contexts of T = ``n_pairs`` pairs."""
        return mqar_contexts(
            self.contexts, n_pairs, self.n_keys, self.n_values, alpha=self.alpha,
            n_queries=self.n_queries, queries=self.queries, seed=self.seed, first=self.first,
        )  # fmt: skip

    def probs(self) -> torch.Tensor:
        """The keys' law p, (N,) float64."""
        return zipf_probabilities(self.n_keys, self.alpha)


def mean_recall(rule: Rule, task: Task, dim: int, n_pairs: int) -> float:
    """1 − the mean recall error over the task's R contexts of T = ``n_pairs`` pairs."""
    contexts = task.contexts_at(n_pairs)
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
    guess: int | None = None,
) -> int:
    """T*(d): the largest T with mean recall ≥ τ, to ``rel_tol`` (0 where one pair already
    fails; ``max_pairs`` where it never does). The contexts of every T are prefixes of the
    longest, so recall falls with T along one draw. The search starts at ``guess`` (default d)."""
    int_at_least("dim", dim, 1)
    int_at_least("max_pairs", max_pairs, 1)
    return largest_n_bracketed(
        lambda t: mean_recall(rule, task, dim, t),
        tau,
        guess=dim if guess is None else guess,
        rel_tol=rel_tol,
        n_min=1,
        n_max=max_pairs,
    )


__all__ = ["Task", "capacity", "mean_recall"]

"""Multi-query associative recall (MQAR) contexts: the task of memories written in context.

A context lists T key–value pairs ``(k_t, f(k_t))``: keys drawn i.i.d. from a law p over N keys
(Zipf(α); α = 0 uniform), a fresh random map f: [N] → [M] per context, so a key repeated in the
context carries the same value each time. A memory written while reading the context (a linear
attention state, a delta-rule state, a softmax attention cache) is then queried: by the keys
the context holds (MQAR's recall, "context"), or by the whole law p (the paper's population
error, "law": a key the context never wrote is read from interference alone).

Version 1 of the generator (:data:`GENERATOR_VERSION`): its draws come from named streams of
:mod:`assocmem.rng` keyed by (seed, context), so a context is the same whatever the number of
contexts drawn beside it, and the first T pairs of a longer context are those of a shorter one
(the keys are the law's nested samples, :func:`~assocmem.laws.tokens.sample_tokens`).
"""

from dataclasses import dataclass, replace

import torch

from assocmem import rng
from assocmem.config.checks import int_at_least
from assocmem.config.errors import unknown_name
from assocmem.laws.tokens import sample_tokens, zipf_probabilities

GENERATOR_VERSION = 1  # bumped whenever the same arguments would give other contexts
QUERIES = ("context", "law")


@dataclass(frozen=True)
class Contexts:
    """R contexts of T pairs over N keys and M values.

    Attributes
    ----------
    keys : torch.Tensor, shape (R, T), int64
        The keys written, in order (repeats included).
    values : torch.Tensor, shape (R, T), int64
        ``f(keys)``, each context's own map.
    targets : torch.Tensor, shape (R, N), int64
        Each context's map f over every key.
    queries : torch.Tensor, shape (R, Q), int64
        Query keys: drawn from the keys the context wrote (uniform over its T positions, so a
        key is asked as often as it was written) or from the law p.
    probs : torch.Tensor, shape (N,), float64
        The law p of the keys.
    n_values : int
        M.
    first : int
        The index of the first context among those of its seed: context r here is context
        ``first + r`` of the streams (its embeddings are drawn from the same index).
    """

    keys: torch.Tensor
    values: torch.Tensor
    targets: torch.Tensor
    queries: torch.Tensor
    probs: torch.Tensor
    n_values: int
    first: int = 0

    @property
    def n_pairs(self) -> int:
        """T, the pairs written per context (repeats included)."""
        return self.keys.shape[1]

    @property
    def n_contexts(self) -> int:
        """R, the contexts held."""
        return self.keys.shape[0]

    def prefix(self, n_pairs: int) -> "Contexts":
        """The same contexts cut to their first T pairs: the contexts the generator draws at T
        (its keys are nested samples), with no sampled queries (those were drawn for the whole
        context)."""
        asked = self.queries if n_pairs == self.n_pairs else self.queries[:, :0]
        return replace(self, keys=self.keys[:, :n_pairs], values=self.values[:, :n_pairs],
                       queries=asked)  # fmt: skip

    def select(self, start: int, stop: int) -> "Contexts":
        """Contexts ``start … stop − 1`` of these (their streams' indices kept)."""
        rows = slice(start, stop)
        return replace(
            self, keys=self.keys[rows], values=self.values[rows], targets=self.targets[rows],
            queries=self.queries[rows], first=self.first + start,
        )  # fmt: skip


def mqar_contexts(
    n_contexts: int,
    n_pairs: int,
    n_keys: int,
    n_values: int,
    *,
    alpha: float = 0.0,
    n_queries: int = 0,
    queries: str = "context",
    seed: int = 0,
    first: int = 0,
) -> Contexts:
    r"""Draw R MQAR contexts: T keys from Zipf(α) over N keys, a fresh f: [N] → [M] each.

    Parameters
    ----------
    n_contexts : int
        R ≥ 1.
    n_pairs : int
        T ≥ 1, the pairs written per context (a key may be written several times).
    n_keys : int
        N ≥ 1.
    n_values : int
        M ≥ 2.
    alpha : float, default 0
        The Zipf exponent of the keys' law, :math:`p(x) \propto (x + 1)^{-\alpha}`.
    n_queries : int, default 0
        Q ≥ 0 query keys per context.
    queries : {"context", "law"}, default "context"
        Where the queries come from: the context's own pairs, or the law p.
    seed : int, default 0
        Streams ``incontext_keys``, ``incontext_map`` and ``incontext_queries`` per context.
    first : int, default 0
        The index of the first context drawn: contexts ``first … first + R − 1`` of the seed's
        streams (so trials of one seed draw disjoint contexts).

    Returns
    -------
    Contexts
    """
    _check(n_contexts, n_pairs, n_keys, n_values, n_queries, queries)
    int_at_least("first", first, 0)
    probs = zipf_probabilities(n_keys, alpha)
    keys, maps, asked = [], [], []
    for r in range(first, first + n_contexts):
        drawn = sample_tokens(probs, n_pairs, rng.generator(seed, "incontext_keys", r))
        f = torch.randint(n_values, (n_keys,), generator=rng.generator(seed, "incontext_map", r))
        ask = rng.generator(seed, "incontext_queries", r)
        if queries == "context":
            at = torch.randint(n_pairs, (n_queries,), generator=ask)
            asked.append(drawn[at])
        else:
            asked.append(sample_tokens(probs, n_queries, ask))
        keys.append(drawn)
        maps.append(f)
    targets = torch.stack(maps)
    keys_t = torch.stack(keys)
    values = targets.gather(1, keys_t)
    return Contexts(keys_t, values, targets, torch.stack(asked), probs, n_values, first)


def _check(
    n_contexts: int, n_pairs: int, n_keys: int, n_values: int, n_queries: int, queries: str
) -> None:
    for name, value, low in (
        ("n_contexts", n_contexts, 1),
        ("n_pairs", n_pairs, 1),
        ("n_keys", n_keys, 1),
        ("n_values", n_values, 2),
        ("n_queries", n_queries, 0),
    ):
        int_at_least(name, value, low)
    check_queries(queries)


def check_queries(queries: str) -> None:
    """A ConfigError unless ``queries`` is one of :data:`QUERIES`."""
    if queries not in QUERIES:
        raise unknown_name("queries", "query source", queries, QUERIES)


__all__ = ["GENERATOR_VERSION", "QUERIES", "Contexts", "check_queries", "mqar_contexts"]

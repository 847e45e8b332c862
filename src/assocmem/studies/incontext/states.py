"""Memories written in context, in closed form: what a sequence mixer stores while it reads an
MQAR context, and the exact recall error of what it stores.

Keys are embedded as :math:`e_x \\in \\mathbb{R}^d` and values as :math:`u_y`, fresh random
embeddings per context (``embedding``: i.i.d. :math:`\\mathcal{N}(0, 1/d)` entries, unit rows or
orthonormal rows). Reading the pairs :math:`(e_{k_t}, u_{v_t})`, t = 1 … T, each rule writes a
memory and answers a query key x with a vector :math:`o(x)`; the answer is the value whose
embedding scores highest, :math:`\\arg\\max_y u_y^\\top o(x)` (a tie is wrong):

- **Hebbian** (linear attention): :math:`S = \\sum_t \\gamma^{T-t} u_{v_t} e_{k_t}^\\top`,
  :math:`o(x) = S e_x`. With γ = 1 this is the paper's memory with the empirical weighting
  :math:`q(x) = n_T(x)`, the count of x in the context.
- **Delta rule** (DeltaNet; gated with γ < 1): :math:`S \\leftarrow \\gamma S + \\beta (u_{v_t} -
  \\gamma S e_{k_t}) e_{k_t}^\\top`, over the context ``passes`` times, from S = 0: online least
  squares, an error-correcting memory. With orthonormal keys and β = 1 one pass recalls every
  key exactly.
- **Softmax attention** (a key–value cache): :math:`o(x) = \\sum_t \\mathrm{softmax}_t(\\beta
  \\sqrt{d}\\, e_{k_t}^\\top e_x)\\, u_{v_t}`, β the inverse temperature (β = 1: a
  transformer's scaling); **hard attention** its limit β → ∞, the value of the best-scoring key.

The recall error of a context weighs each key's error by how it is asked: ``"context"`` by its
share of the context's pairs :math:`n_T(x)/T` (MQAR's recall, the expectation over queries drawn
from the context), ``"law"`` by p(x) (the paper's population error: a key never written is
answered from interference alone). Both are exact: every key is read, none is sampled.
"""

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

import torch

from assocmem import rng
from assocmem.config.checks import int_at_least, positive_number
from assocmem.config.errors import ConfigError
from assocmem.embeddings import check_kind, draw_embeddings
from assocmem.ops.population import wrong_tokens
from assocmem.studies.incontext.contexts import Contexts, check_queries

QUERY_BLOCK = 4096  # query keys read at once by softmax attention
SCORE_BUDGET = 2**24  # softmax logits (R × queries × keys) at once: 128 MB in float64
EMBEDDING_BUDGET = 2**25  # embedding entries (contexts × (N + M) × d) drawn at once: 256 MB
LOGITS_BUDGET = 2**24  # logits (R × keys × M) computed at once for the law's error: 128 MB


@dataclass(frozen=True)
class Hebbian:
    """Linear attention: the sum of the pairs' outer products, older pairs decayed by ``gate``."""

    name: ClassVar[str] = "hebbian"
    gate: float = 1.0  # γ in (0, 1]: 1, no decay

    def check(self) -> None:
        """A ConfigError naming the first parameter out of its range."""
        _check_gate(self.gate)

    def cost(self, n_pairs: int, dim: int, asked: int) -> float:
        """Multiply-adds to write T pairs and read ``asked`` keys: T d² + Q d²."""
        return float((n_pairs + asked) * dim * dim)

    def state_size(self, n_pairs: float, dim: int) -> float:
        """The numbers the memory holds: the d × d state."""
        return float(dim * dim)

    def read(self, keys: torch.Tensor, values: torch.Tensor, queries: torch.Tensor) -> torch.Tensor:
        """o(x) (R, Q, d) for keys and values (R, T, d) and queries (R, Q, d)."""
        self.check()
        t = keys.shape[1]
        decay = self.gate ** torch.arange(t - 1, -1, -1, dtype=keys.dtype, device=keys.device)
        state = torch.bmm((values * decay[:, None]).transpose(1, 2), keys)  # (R, d, d): Σ u eᵀ
        return torch.bmm(queries, state.transpose(1, 2))


@dataclass(frozen=True)
class DeltaRule:
    """DeltaNet's update, ``passes`` times over the context, with a decay ``gate`` (gated)."""

    name: ClassVar[str] = "delta"
    beta: float = 1.0  # the write strength β > 0
    passes: int = 1
    gate: float = 1.0  # γ in (0, 1]

    def check(self) -> None:
        """A ConfigError naming the first parameter out of its range."""
        positive_number("beta", self.beta)
        int_at_least("passes", self.passes, 1)
        _check_gate(self.gate)

    def cost(self, n_pairs: int, dim: int, asked: int) -> float:
        """Multiply-adds to write T pairs ``passes`` times and read ``asked`` keys."""
        return float((2 * self.passes * n_pairs + asked) * dim * dim)

    def state_size(self, n_pairs: float, dim: int) -> float:
        """The numbers the memory holds: the d × d state."""
        return float(dim * dim)

    def read(self, keys: torch.Tensor, values: torch.Tensor, queries: torch.Tensor) -> torch.Tensor:
        """o(x) = S e_x (R, Q, d) after the updates; keys, values (R, T, d), queries (R, Q, d)."""
        self.check()
        r, t, d = keys.shape
        state = keys.new_zeros(r, d, d)
        for _ in range(self.passes):
            for step in range(t):
                e, u = keys[:, step, :, None], values[:, step, :, None]  # (R, d, 1)
                if self.gate != 1.0:
                    state.mul_(self.gate)
                error = u - torch.bmm(state, e)  # (R, d, 1): what S misses of u
                state.baddbmm_(error, e.transpose(1, 2), alpha=self.beta)
        return torch.bmm(queries, state.transpose(1, 2))


@dataclass(frozen=True)
class SoftmaxAttention:
    """A key–value cache read by softmax attention at inverse temperature ``beta``.

    The logits are :math:`\\beta \\sqrt{d}\\, e_{k_t}^\\top e_x`: with keys of variance 1/d a
    coordinate, β = 1 is a transformer's :math:`q^\\top k / \\sqrt{d}` for unit-variance
    coordinates (own key's logit ≈ √d, another's ≈ 𝒩(0, 1)). The cache is read in blocks of
    :data:`SCORE_BUDGET` logits, an online softmax over blocks of keys, so T may be large."""

    name: ClassVar[str] = "softmax"
    beta: float = 1.0  # β > 0

    def check(self) -> None:
        """A ConfigError unless β is a finite number > 0."""
        positive_number("beta", self.beta)

    def cost(self, n_pairs: int, dim: int, asked: int) -> float:
        """Multiply-adds to read ``asked`` keys: two products of Q × T × d."""
        return float(2 * asked * n_pairs * dim)

    def state_size(self, n_pairs: float, dim: int) -> float:
        """The numbers the memory holds: the cache's T keys of d numbers (values aside)."""
        return float(n_pairs * dim)

    def read(self, keys: torch.Tensor, values: torch.Tensor, queries: torch.Tensor) -> torch.Tensor:
        """o(x) (R, Q, d) for keys and values (R, T, d) and queries (R, Q, d)."""
        self.check()
        scale = self.beta * math.sqrt(keys.shape[2])
        return _blocks(_soft_read, keys, values, queries, scale)


@dataclass(frozen=True)
class HardAttention:
    """Softmax attention's limit β → ∞: the value of the first best-scoring written key."""

    name: ClassVar[str] = "hard"

    def check(self) -> None:
        """Nothing to check: the rule has no parameter."""

    def cost(self, n_pairs: int, dim: int, asked: int) -> float:
        """Multiply-adds to read ``asked`` keys: one product of Q × T × d."""
        return float(asked * n_pairs * dim)

    def state_size(self, n_pairs: float, dim: int) -> float:
        """The numbers the memory holds: the cache's T keys of d numbers (values aside)."""
        return float(n_pairs * dim)

    def read(self, keys: torch.Tensor, values: torch.Tensor, queries: torch.Tensor) -> torch.Tensor:
        """o(x) (R, Q, d) for keys and values (R, T, d) and queries (R, Q, d)."""
        return _blocks(_hard_read, keys, values, queries, math.inf)


def _blocks(
    read: Callable[..., torch.Tensor],
    keys: torch.Tensor,
    values: torch.Tensor,
    queries: torch.Tensor,
    scale: float,
) -> torch.Tensor:
    """``read`` over blocks of :data:`QUERY_BLOCK` queries, each with key blocks sized so that
    a block's logits stay within :data:`SCORE_BUDGET`."""
    r = keys.shape[0]
    q_block = max(1, min(queries.shape[1], QUERY_BLOCK))
    t_block = max(1, SCORE_BUDGET // (r * q_block))
    out = queries.new_empty(r, queries.shape[1], values.shape[2])
    for start in range(0, queries.shape[1], q_block):
        asked = queries[:, start : start + q_block]
        out[:, start : start + q_block] = read(asked, keys, values, scale, t_block)
    return out


def _soft_read(
    asked: torch.Tensor, keys: torch.Tensor, values: torch.Tensor, scale: float, t_block: int
) -> torch.Tensor:
    """Softmax attention of ``asked`` (R, Q, d) over the cache, ``t_block`` keys at a time: the
    running maximum, normaliser and weighted sum of the online softmax."""
    r, q = asked.shape[:2]
    top = asked.new_full((r, q, 1), -math.inf)
    total = asked.new_zeros(r, q, 1)
    acc = asked.new_zeros(r, q, values.shape[2])
    for start in range(0, keys.shape[1], t_block):
        block = slice(start, start + t_block)
        logits = torch.bmm(asked, keys[:, block].transpose(1, 2)).mul_(scale)  # (R, Q, t)
        new_top = torch.maximum(top, logits.amax(2, keepdim=True))
        shrink = torch.exp(top - new_top)
        weights = torch.exp(logits - new_top)
        total = total * shrink + weights.sum(2, keepdim=True)
        acc = acc * shrink + torch.bmm(weights, values[:, block])
        top = new_top
    return acc / total


def _hard_read(
    asked: torch.Tensor, keys: torch.Tensor, values: torch.Tensor, scale: float, t_block: int
) -> torch.Tensor:
    """Hard attention: the value of the first best-scoring key, ``t_block`` keys at a time."""
    r, q = asked.shape[:2]
    top = asked.new_full((r, q), -math.inf)
    best = asked.new_zeros(r, q, values.shape[2])
    for start in range(0, keys.shape[1], t_block):
        block = slice(start, start + t_block)
        logits = torch.bmm(asked, keys[:, block].transpose(1, 2))  # (R, Q, t)
        score, at = logits.max(2)
        chosen = values[:, block].gather(1, at[:, :, None].expand(-1, -1, values.shape[2]))
        better = score > top
        best = torch.where(better[:, :, None], chosen, best)
        top = torch.where(better, score, top)
    return best


Rule = Hebbian | DeltaRule | SoftmaxAttention | HardAttention
RULES: dict[str, Callable[..., Rule]] = {
    rule.name: rule for rule in (Hebbian, DeltaRule, SoftmaxAttention, HardAttention)
}


def _check_gate(gate: float) -> None:
    if not 0.0 < gate <= 1.0:
        raise ConfigError("gate", f"must be in (0, 1], got {gate!r}")


def context_embeddings(
    contexts: Contexts,
    dim: int,
    *,
    embedding: str = "gaussian",
    seed: int = 0,
    dtype: torch.dtype = torch.float64,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Each context's key and value embeddings, E (R, N, d) and U (R, M, d), from the streams
    ``incontext_keys_embedding`` and ``incontext_values_embedding`` of (seed, context, d)."""
    int_at_least("dim", dim, 1)
    check_kind("embedding", embedding)
    n_keys, n_values = contexts.targets.shape[1], contexts.n_values
    e, u = [], []
    for r in range(contexts.first, contexts.first + contexts.n_contexts):
        e.append(_draw(embedding, n_keys, dim, seed, "incontext_keys_embedding", r, dtype))
        u.append(_draw(embedding, n_values, dim, seed, "incontext_values_embedding", r, dtype))
    return torch.stack(e), torch.stack(u)


def _draw(
    kind: str, rows: int, dim: int, seed: int, stream: str, r: int, dtype: torch.dtype
) -> torch.Tensor:
    return draw_embeddings(kind, rows, dim, rng.generator(seed, stream, r, dim), dtype=dtype)


def key_weights(contexts: Contexts, queries: str = "context") -> torch.Tensor:
    """(R, N) float64: how each key is asked, its share of the context's pairs ``"context"`` or
    its probability ``"law"``; each row sums to 1."""
    check_queries(queries)
    r, n = contexts.targets.shape
    if queries == "law":
        return contexts.probs.expand(r, n).clone()
    counts = torch.zeros(r, n, dtype=torch.float64)
    counts.scatter_add_(1, contexts.keys, torch.ones_like(contexts.keys, dtype=torch.float64))
    return counts / contexts.n_pairs


def wrong_at(
    rule: Rule, contexts: Contexts, keys: torch.Tensor, values: torch.Tensor, asked: torch.Tensor
) -> torch.Tensor:
    """(R, K) bool: whether the answer to each asked key (``asked`` (R, K) key indices) is not
    the strict maximum at f(x); ``keys`` E (R, N, d) and ``values`` U (R, M, d) are each
    context's embeddings."""
    d = keys.shape[2]
    written_keys = keys.gather(1, contexts.keys[:, :, None].expand(-1, -1, d))
    written_values = values.gather(1, contexts.values[:, :, None].expand(-1, -1, d))
    read = rule.read(
        written_keys, written_values, keys.gather(1, asked[:, :, None].expand(-1, -1, d))
    )
    logits = torch.bmm(read, values.transpose(1, 2))  # (R, K, M)
    return wrong_tokens(logits, contexts.targets.gather(1, asked))


def recall_error(
    rule: Rule,
    contexts: Contexts,
    dim: int,
    *,
    queries: str = "context",
    embedding: str = "gaussian",
    seed: int = 0,
) -> torch.Tensor:
    """(R,) float64: each context's recall error at dimension d (float64 throughout).

    Exact where the contexts hold no sampled queries: under ``"context"`` the mean over the
    context's T positions of the error at the key written there, under ``"law"`` every key
    weighted by p (:func:`key_weights`), :data:`LOGITS_BUDGET` logits at a time. Where they hold
    Q sampled queries (``mqar_contexts(n_queries=Q)``, drawn from the source they name), the
    mean error over those Q keys: an unbiased estimate, for contexts too long to read every key
    (softmax attention at T = 10⁶). Contexts are read :data:`EMBEDDING_BUDGET` embedding
    entries at a time; each context's numbers depend on its own streams only."""
    check_queries(queries)
    int_at_least("dim", dim, 1)
    size = (contexts.targets.shape[1] + contexts.n_values) * dim
    chunk = max(1, EMBEDDING_BUDGET // size)
    parts = [
        _chunk_error(rule, contexts.select(start, start + chunk), dim, queries, embedding, seed)
        for start in range(0, contexts.n_contexts, chunk)
    ]
    return torch.cat(parts)


def _chunk_error(
    rule: Rule, contexts: Contexts, dim: int, queries: str, embedding: str, seed: int
) -> torch.Tensor:
    keys, values = context_embeddings(contexts, dim, embedding=embedding, seed=seed)
    if contexts.queries.shape[1]:
        return wrong_at(rule, contexts, keys, values, contexts.queries).double().mean(1)
    if queries == "context":
        return wrong_at(rule, contexts, keys, values, contexts.keys).double().mean(1)
    weights = key_weights(contexts, "law")
    r, n = weights.shape
    block = max(1, LOGITS_BUDGET // (r * contexts.n_values))
    error = torch.zeros(r, dtype=torch.float64)
    for start in range(0, n, block):
        asked = torch.arange(start, min(start + block, n)).expand(r, -1)
        error += (
            weights[:, start : start + block] * wrong_at(rule, contexts, keys, values, asked)
        ).sum(1)
    return error


__all__ = [
    "RULES",
    "DeltaRule",
    "HardAttention",
    "Hebbian",
    "Rule",
    "SoftmaxAttention",
    "context_embeddings",
    "key_weights",
    "recall_error",
    "wrong_at",
]

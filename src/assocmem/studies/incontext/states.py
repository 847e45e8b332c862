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
- **Softmax attention** (a key–value cache): :math:`o(x) = \\sum_t \\mathrm{softmax}_t(\\beta\\,
  e_{k_t}^\\top e_x)\\, u_{v_t}`, β the inverse temperature.

The recall error of a context weighs each key's error by how it is asked: ``"context"`` by its
share of the context's pairs :math:`n_T(x)/T` (MQAR's recall, the expectation over queries drawn
from the context), ``"law"`` by p(x) (the paper's population error: a key never written is
answered from interference alone). Both are exact: every key is read, none is sampled.
"""

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

QUERY_BLOCK = 4096  # query keys read at once by softmax attention: (R, block, T) scores
LOGITS_BUDGET = 2**24  # logits (R × keys × M) computed at once for the law's error: 128 MB


@dataclass(frozen=True)
class Hebbian:
    """Linear attention: the sum of the pairs' outer products, older pairs decayed by ``gate``."""

    name: ClassVar[str] = "hebbian"
    gate: float = 1.0  # γ in (0, 1]: 1, no decay

    def read(self, keys: torch.Tensor, values: torch.Tensor, queries: torch.Tensor) -> torch.Tensor:
        """o(x) (R, Q, d) for keys and values (R, T, d) and queries (R, Q, d)."""
        _check_gate(self.gate)
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

    def read(self, keys: torch.Tensor, values: torch.Tensor, queries: torch.Tensor) -> torch.Tensor:
        """o(x) = S e_x (R, Q, d) after the updates; keys, values (R, T, d), queries (R, Q, d)."""
        positive_number("beta", self.beta)
        int_at_least("passes", self.passes, 1)
        _check_gate(self.gate)
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
    """A key–value cache read by softmax attention at inverse temperature ``beta``."""

    name: ClassVar[str] = "softmax"
    beta: float = 1.0

    def read(self, keys: torch.Tensor, values: torch.Tensor, queries: torch.Tensor) -> torch.Tensor:
        """o(x) (R, Q, d), the queries read ``QUERY_BLOCK`` at a time."""
        positive_number("beta", self.beta)
        out = queries.new_empty(queries.shape[0], queries.shape[1], values.shape[2])
        for start in range(0, queries.shape[1], QUERY_BLOCK):
            block = slice(start, start + QUERY_BLOCK)
            scores = torch.bmm(queries[:, block], keys.transpose(1, 2)).mul_(self.beta)
            out[:, block] = torch.bmm(scores.softmax(dim=2), values)
        return out


Rule = Hebbian | DeltaRule | SoftmaxAttention
RULES: dict[str, Callable[..., Rule]] = {
    rule.name: rule for rule in (Hebbian, DeltaRule, SoftmaxAttention)
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
    for r in range(contexts.keys.shape[0]):
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
    """(R,) float64: each context's exact recall error at dimension d, its keys weighted as
    :func:`key_weights` says (in float64 throughout): under ``"context"`` the mean over the
    context's T positions of the error at the key written there; under ``"law"`` every key,
    :data:`LOGITS_BUDGET` logits at a time."""
    check_queries(queries)
    keys, values = context_embeddings(contexts, dim, embedding=embedding, seed=seed)
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
    "Hebbian",
    "Rule",
    "SoftmaxAttention",
    "context_embeddings",
    "key_weights",
    "recall_error",
    "wrong_at",
]

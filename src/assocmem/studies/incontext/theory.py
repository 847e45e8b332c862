r"""Theory of the memories written in context, beside their measurement.

- **Hebbian state** (linear attention): :math:`S = \sum_t \gamma^{T-t} u_{v_t} e_{k_t}^\top` is
  the paper's memory :math:`W_q = \sum_x q(x) u_{f(x)} e_x^\top` with the in-context weighting
  :math:`q(x) = \sum_{t: k_t = x} \gamma^{T-t}` (the count :math:`n_T(x)` at γ = 1: the paper's
  empirical scheme) and a map f drawn afresh per context. Its error is the paper's interference
  prediction (:func:`~assocmem.analysis.predict.token_success`, Theorem 1's picture) with that
  q, each key weighted as it is asked.
- **Hard attention** (softmax at β = ∞): the query x = k_s is answered from the written key of
  highest score. With :math:`e \sim \mathcal{N}(0, I/d)` and :math:`r = |e_s|^2`, another key's
  score is :math:`\mathcal{N}(0, r/d)` against the own r, so it beats the own key with
  probability :math:`\bar\Phi(\sqrt{r d})`: the extreme value of K − 1 scores against the own
  (K the distinct keys written). The winner's value is right anyway with probability 1/M, and
  the read value :math:`u_v` is then decoded wrongly when another value's embedding scores
  above :math:`|u_v|^2`. Capacity grows as :math:`e^{d/2}`.
- **Delta rule**: online least squares. Passes at a small enough β converge to the
  least-squares state, which recalls every key exactly while the written keys are linearly
  independent: at most d distinct keys. Past d the least-squares read-out's signal falls as
  d/T and its interference matches the Hebbian state's: the two capacities meet once the
  Hebbian one is well above d.
"""

import math
from collections.abc import Sequence

import numpy as np
import torch
from scipy import optimize, special, stats

from assocmem.analysis.predict import EmbeddingLaw, token_success
from assocmem.studies.incontext.contexts import Contexts
from assocmem.studies.incontext.states import HardAttention, Rule, key_weights

NORM_QUANTILES = 400  # midpoint quantiles of χ²_d/d for the hard-attention integrals


def context_weighting(contexts: Contexts, gate: float = 1.0) -> torch.Tensor:
    """(R, N) float64: q(x) = Σ_{t: k_t = x} γ^{T−t}, the weight the Hebbian state gives x."""
    t = contexts.n_pairs
    decay = gate ** torch.arange(t - 1, -1, -1, dtype=torch.float64)
    q = torch.zeros(contexts.targets.shape, dtype=torch.float64)
    return q.scatter_add_(1, contexts.keys, decay.expand(contexts.n_contexts, -1).clone())


def hebbian_error(
    contexts: Contexts,
    dims: Sequence[int],
    *,
    gate: float = 1.0,
    queries: str = "context",
    embedding: str = "gaussian",
) -> np.ndarray:
    """(R, len(dims)): each context's predicted recall error of the Hebbian state.

    The interference prediction of a memory with the in-context weighting
    (:func:`context_weighting`) and the context's own map f, keys weighted as asked
    (:func:`~assocmem.studies.incontext.states.key_weights`); keys and values embedded alike
    (``embedding``, as :func:`~assocmem.studies.incontext.states.context_embeddings` draws
    them).
    """
    law = EmbeddingLaw(embedding, embedding)
    q = context_weighting(contexts, gate).numpy()
    w = key_weights(contexts, queries).numpy()
    f = contexts.targets.numpy()
    out = np.empty((contexts.n_contexts, len(dims)))
    for r in range(contexts.n_contexts):
        asked = w[r] > 0
        for i, d in enumerate(dims):
            success = token_success(q[r], f[r], contexts.n_values, int(d), law)
            out[r, i] = w[r][asked] @ (1.0 - success[asked])
    return out


def distinct_keys(probs: np.ndarray, n_pairs: float) -> float:
    """E[K]: the expected number of distinct keys among T i.i.d. draws from p."""
    p = np.asarray(probs, dtype=np.float64)
    return float(np.sum(-np.expm1(n_pairs * np.log1p(-np.minimum(p, 1 - 1e-16)))))


def _norm_nodes(dim: int) -> np.ndarray:
    """Midpoint quantiles of r = |e|² ~ χ²_d / d (a plain average over them is E[g(r)])."""
    u = (np.arange(NORM_QUANTILES) + 0.5) / NORM_QUANTILES
    return np.asarray(stats.chi2.ppf(u, dim) / dim)


def _beaten(dim: int, rivals: float) -> float:
    """P(the best of ``rivals`` independent 𝒩(0, r/d) scores exceeds r), averaged over r."""
    if rivals <= 0:
        return 0.0
    tail = special.ndtr(-np.sqrt(_norm_nodes(dim) * dim))  # P(one rival beats r)
    return float(np.mean(-np.expm1(rivals * np.log1p(-tail))))


def hard_attention_error(dim: int, n_pairs: float, probs: np.ndarray, n_values: int) -> float:
    """The predicted recall error of hard attention (softmax at β = ∞) after T pairs.

    Keys and values Gaussian (variance 1/d a coordinate); the K − 1 other distinct keys (K
    :func:`distinct_keys`) compete with the own: the query is lost when one scores higher and
    carries another value (1 − 1/M), and a kept value is decoded wrongly when one of the M − 1
    other values' embeddings scores above its own. Exact for one key of fixed norm law and
    independent rivals; K is its expectation (exact for distinct keys, N ≫ T).
    """
    lost = _beaten(dim, distinct_keys(probs, n_pairs) - 1) * (1 - 1 / n_values)
    misread = _beaten(dim, n_values - 1)
    return 1 - (1 - lost) * (1 - misread)


def hard_attention_capacity(
    dim: int, probs: np.ndarray, n_values: int, tau: float = 0.99, max_pairs: float = 1e12
) -> float:
    """T*(d) of the hard-attention theory: the T at which its predicted recall falls to τ
    (real-valued; ``max_pairs`` where it never does below it, 0 where one pair fails)."""

    def gap(log_t: float) -> float:
        return 1 - hard_attention_error(dim, math.exp(log_t), probs, n_values) - tau

    if gap(0.0) < 0:
        return 0.0
    if gap(math.log(max_pairs)) >= 0:
        return max_pairs
    return math.exp(optimize.brentq(gap, 0.0, math.log(max_pairs), xtol=1e-6))


def error_theory(rule: Rule, probs: np.ndarray, n_values: int, dim: int, n_pairs: float) -> float:
    """The theory's recall error after T pairs for a rule whose theory needs no context:
    hard attention (NaN for the others; the Hebbian theory reads the contexts,
    :func:`hebbian_error`)."""
    if isinstance(rule, HardAttention):
        return hard_attention_error(dim, n_pairs, probs, n_values)
    return math.nan


def capacity_theory(
    rule: Rule, probs: np.ndarray, n_values: int, dim: int, tau: float, max_pairs: float
) -> float:
    """The theory's T*(d) for a rule that has one: hard attention (NaN for the others)."""
    if isinstance(rule, HardAttention):
        return hard_attention_capacity(dim, probs, n_values, tau, max_pairs)
    return math.nan


__all__ = [
    "capacity_theory",
    "context_weighting",
    "distinct_keys",
    "error_theory",
    "hard_attention_capacity",
    "hard_attention_error",
    "hebbian_error",
]

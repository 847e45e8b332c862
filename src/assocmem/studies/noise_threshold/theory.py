r"""Noisy associations and the "store it once seen k times" rule: the theory (docs:
beyond/noise-threshold.md).

Beyond the paper. Each sample's label is f*(x) with probability 1 − ε, else one of the other
M − 1 outputs uniformly. A memory that stores token x under the *majority* label rule stores
the most frequent of its n(x) labels (ties broken uniformly at random); the scheme
``min_count:k=K,P=d/8`` stores x only if :math:`n(x) \ge k`, at most P tokens, the most frequent
first. The predicted error combines three exact or mean-field pieces:

1. **The majority vote** (exact):
   :math:`P_c(n) = P(\text{the vote of } n \text{ noisy labels is } f^*)`, summing the binomial law
   of the correct label's count c and the multinomial law of the n − c wrong labels over the M − 1
   others: :math:`P_c(n) = \sum_c \operatorname{Bin}(c; n, 1-\varepsilon) \cdot G(n - c, c)` with
   :math:`G(m, c) = \mathbb{E}[\mathbb{1}\{\text{every wrong count} \le c\} /
   (1 + \#\{\text{wrong counts} = c\})]` (a tie of the correct label with t wrong ones is won with
   probability 1/(1 + t)). :func:`majority_vote_correct`.
2. **The Zipf tail and the capacity cap** (exact binomial counts, mean-field cap): the count of
   x is :math:`n(x) \sim \operatorname{Bin}(T, p(x))`; the P most frequent seen tokens are those
   with a count above a level κ where the expected number of tokens
   :math:`S(c) = \sum_x P(n(x) \ge c)` crosses P (a fraction of those exactly at κ), and the k rule
   removes every count below k.
3. **Retrieval** (the interference picture of Theorem 1, :func:`assocmem.analysis.predict.
   token_success`): with S̄ tokens stored, one-hot, a stored token answers its stored label with
   probability ``r_s`` and an unstored one answers f* with probability :math:`r_u \approx 1/M`; a
   token stored with a wrong label answers f* with probability :math:`(1 - r_s)/(M - 1)`.

So
:math:`E(k) = \sum_x p(x) [1 - \gamma_x r_s - (\pi_x - \gamma_x)(1 - r_s)/(M - 1) -
(1 - \pi_x) r_u]` with :math:`\pi_x = P(x \text{ stored})` and
:math:`\gamma_x = P(x \text{ stored with the label } f^*)`, ``r_s`` and ``r_u`` taken at the load S̄
(the expected number of stored tokens).

The *soft* rule (storing :math:`n(x, y)/n(x)`) answers, at large d, the vote with random ties (the
interference breaks them). In a score difference :math:`s_c - s_y` the label noise of a
well-sampled token cancels but for its margin δ = 1 − ε − ε/(M−1), so such tokens retrieve and
interfere exactly like one-hot ones scaled by δ; a rarely seen token's label law is far from
its mean: it interferes more and has a larger own margin (:func:`soft_loudness`: ``f(n)`` and
``g(n)``, in units of δ²). The soft prediction is the same sum with the load
:math:`\sum_x \mathbb{E}[f(n(x)) \mathbb{1}\{\mathrm{stored}\}]` and, for a token seen n times, the
retrieval at that load divided by ``g(n)``. Neglected: the spread of the margins given n, and the
leak of the wrong labels' mass through the overlaps of the output embeddings (an O(1/√d) effect that
shows at d ≲ 32).
"""

import functools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.stats import binom

from assocmem.analysis.predict import EmbeddingLaw, token_success
from assocmem.config.checks import int_at_least
from assocmem.config.errors import ConfigError
from assocmem.schemes import SizeRule
from assocmem.studies.noise_threshold.majority_vote import (
    vote_table,
)

__all__ = [
    "LABEL_RULES",
    "MinCountPrediction",
    "noisy_data_floor",
    "predict_min_count",
    "soft_loudness",
]

LABEL_RULES = ("majority", "soft")


def noisy_data_floor(
    probs: Sequence[float] | np.ndarray, n_samples: int, noise: float, n_outputs: int
) -> float:
    r"""The error of a memory with no capacity limit that stores every seen token's majority
    label: :math:`\sum_x p(x) [1 - \sum_{n \ge 1} P(n(x) = n) P_c(n) - P(n(x) = 0)/M]`.

    An unseen token is answered by a uniform guess (a large random memory's interference), a
    seen one by its vote. At ε = 0 this is :math:`(1 - 1/M) \sum_x p(x)(1 - p(x))^T`, the
    finite-data error of Cabannes et al. (2024), Proposition 1, with the guess. Storing every seen
    token is the best data-only rule here: :math:`P_c(n) \ge 1 - \varepsilon > 1/M` for every n ≥ 1.

    Parameters
    ----------
    probs : array_like of float, shape (N,)
    n_samples : int
        T ≥ 0.
    noise : float
        ε.
    n_outputs : int
        M.

    Returns
    -------
    float
    """
    p = np.asarray(probs, dtype=np.float64)
    p = p / p.sum()
    vote = vote_table(noise, n_outputs)
    levels = np.arange(vote.size)
    pmf = binom.pmf(levels[None, :], n_samples, p[:, None])  # (N, n_vote)
    wrong = np.where(levels >= 1, 1.0 - vote, 0.0)  # P_c(n) = 1 beyond the table
    seen_right = binom.sf(0, n_samples, p) - pmf @ wrong
    return float(p @ (1.0 - seen_right - pmf[:, 0] / n_outputs))


def soft_loudness(
    counts: Sequence[int] | np.ndarray, noise: float, n_outputs: int
) -> tuple[np.ndarray, np.ndarray]:
    r"""The soft rule's interference and own margin of a token seen n times, in units of a
    well-sampled token's.

    A token x' stores its label law :math:`\hat{L} = n(x', \cdot)/n`. In the score difference of a
    pair of outputs (c, y) it interferes with weight :math:`(\hat{L}_c - \hat{L}_y)^2`; a
    well-sampled token gives :math:`\delta^2 = (1 - \varepsilon - \varepsilon /(M-1))^2` on the
    pairs of its class and 0 elsewhere, its own margin is δ. Averaged over the class of x'
    (balanced) and its multinomial labels, relative to δ²:

    - interference :math:`f(n) = [A(n) + (M - 2) b / n] / \delta^2` with
      :math:`A(n) = \delta^2 + (a + b - \delta^2)/n` (:math:`a = 1 - \varepsilon`,
      :math:`b = \varepsilon /(M-1)`): :math:`f(1) = 1/\delta^2` (a one-hot stored at full loudness)
      and :math:`f \to 1` as n grows;
    - own squared margin against a wrong label :math:`g(n) = A(n) / \delta^2`.

    So rarely seen tokens are loud: a majority memory stores every token at loudness 1 (its
    margin), a soft memory its well-sampled tokens at δ and its rare ones near 1.

    Returns
    -------
    f, g : numpy.ndarray, each of the shape of ``counts`` (n = 0 counts as 1)
    """
    n = np.maximum(np.asarray(counts, dtype=np.float64), 1.0)
    if n_outputs == 1 or noise == 0:
        return np.ones_like(n), np.ones_like(n)
    a, b = 1.0 - noise, noise / (n_outputs - 1)
    delta2 = (a - b) ** 2
    own = delta2 + (a + b - delta2) / n
    return (own + (n_outputs - 2) * b / n) / delta2, own / delta2


@dataclass(frozen=True)
class MinCountPrediction:
    r"""Predicted errors of ``min_count:k=K,P=RULE`` for every (k, d) at one T.

    Attributes
    ----------
    min_counts, dims : tuple of int
        The k and the d of the grid.
    error : numpy.ndarray, shape (len(min_counts), len(dims))
        The predicted population error against f*.
    stored : numpy.ndarray, shape (len(min_counts), len(dims))
        The expected number of stored tokens S̄.
    label_error : numpy.ndarray, shape (len(min_counts), len(dims))
        :math:`\sum_x p(x) (\pi_x - \gamma_x)`: the mass of tokens stored with a wrong label.
    """

    min_counts: tuple[int, ...]
    dims: tuple[int, ...]
    error: np.ndarray
    stored: np.ndarray
    label_error: np.ndarray

    def best(self) -> tuple[np.ndarray, np.ndarray]:
        """The predicted k* at each d (the largest k of the grid at the minimum, exact ties) and
        the error there: two arrays of shape (len(dims),)."""
        ks = np.asarray(self.min_counts)
        low = self.error.min(axis=0)
        at_min = self.error <= low[None, :] * (1 + 1e-12)
        k_star = np.array([ks[at_min[:, i]].max() for i in range(len(self.dims))])
        return k_star, low


def _cap_level(probs: np.ndarray, n_samples: int, size: int) -> tuple[int, float]:
    r"""The mean-field top-``size`` cap: :math:`(\kappa, \varphi)` such that a token with count n is
    stored iff :math:`n > \kappa`, and with probability φ when :math:`n = \kappa`. κ is where the
    expected number of tokens :math:`S(c) = \sum_x P(n(x) \ge c)` crosses ``size``:
    :math:`S(\kappa + 1) < \mathrm{size} \le S(\kappa)`, and φ fills the remaining places,
    :math:`\varphi = (\mathrm{size} - S(\kappa + 1)) / (S(\kappa) - S(\kappa + 1))`."""

    def tokens_at_least(c: int) -> float:
        return float(binom.sf(c - 1, n_samples, probs).sum())

    low, high = 0, n_samples  # bisection: the smallest κ with S(κ + 1) < size
    while low < high:
        mid = (low + high) // 2
        low, high = (mid + 1, high) if tokens_at_least(mid + 1) >= size else (low, mid)
    above, at = tokens_at_least(low + 1), tokens_at_least(low)
    return low, min(1.0, (size - above) / max(at - above, 1e-300))


@dataclass(frozen=True)
class _Counts:
    """The binomial law of every token's count at one T: what every (k, d) of a grid shares."""

    probs: np.ndarray  # (N,)
    n_samples: int
    vote: np.ndarray  # P_c(n) for n below the count from which it is 1
    pmf: np.ndarray  # (N, vote.size): P(n(x) = n)

    @classmethod
    def of(cls, probs: np.ndarray, n_samples: int, vote: np.ndarray) -> "_Counts":
        levels = np.arange(vote.size)
        return cls(probs, n_samples, vote, binom.pmf(levels[None, :], n_samples, probs[:, None]))

    def storage(self, level: tuple[int, float], ks: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        r""":math:`\pi_x = P(x \text{ stored})` and
        :math:`\gamma_x = P(x \text{ stored with the label } f^*)`, each (N, len(ks)), for each k
        rule under a cap of level :math:`(\kappa, \varphi)` (:func:`_cap_level`)."""
        kappa, fraction = level
        k = np.maximum(np.asarray(ks), 1)
        first = np.maximum(kappa + 1, k)  # every count from here on is stored
        stored = binom.sf(first[None, :] - 1, self.n_samples, self.probs[:, None])  # (N, K)
        at_kappa = np.where(kappa >= k, fraction, 0.0)  # (K,): the share stored at n = κ
        stored += binom.pmf(kappa, self.n_samples, self.probs)[:, None] * at_kappa[None, :]
        levels = np.arange(self.vote.size)[:, None]  # the counts whose vote can be wrong
        keep = np.where(levels >= first, 1.0, np.where(levels == kappa, at_kappa, 0.0))
        keep[0] = 0.0  # an unseen token is never stored
        return stored, keep


def predict_min_count(
    probs: Sequence[float] | np.ndarray,
    n_samples: int,
    dims: Sequence[int],
    min_counts: Sequence[int],
    *,
    noise: float,
    n_outputs: int,
    size_rule: str = "d/8",
    label_rule: str = "majority",
    law: EmbeddingLaw | None = None,
) -> MinCountPrediction:
    r"""The predicted error of ``min_count:k=K,P=size_rule`` at one T, every (k, d).

    Parameters
    ----------
    probs : array_like of float, shape (N,)
        The token law p (sorted or not), f*(x) = x mod M.
    n_samples : int
        T ≥ 1.
    dims, min_counts : sequence of int
        The dimensions d and the thresholds k ≥ 1.
    noise : float
        ε.
    n_outputs : int
        M.
    size_rule : str, default "d/8"
        The cap P: an integer, ``d``, ``d/<c>`` or :math:`d/\log d` (N: no cap).
    label_rule : {"majority", "soft"}, default "majority"
    law : EmbeddingLaw, optional
        The embeddings (default Gaussian inputs, spherical outputs).

    Returns
    -------
    MinCountPrediction

    Notes
    -----
    The model of the module docstring: an exact majority vote, exact binomial counts with a
    mean-field cap, and the interference picture of Cabannes et al. (2024), Theorem 1, for the
    retrieval. Docs: beyond/noise-threshold.md.
    """
    p = np.asarray(probs, dtype=np.float64)
    p = p / p.sum()
    if label_rule not in LABEL_RULES:
        raise ConfigError("label_rule", f"{label_rule!r}; allowed: {', '.join(LABEL_RULES)}")
    int_at_least("n_samples", n_samples, 1)
    if any(int(k) < 1 for k in min_counts):
        raise ConfigError("min_counts", "every k must be an integer ≥ 1")
    law = law or EmbeddingLaw()
    rule = SizeRule.parse(size_rule)
    counts = _Counts.of(p, n_samples, vote_table(noise, n_outputs))
    loud, own = soft_loudness(np.arange(counts.vote.size), noise, n_outputs)
    if label_rule == "majority":  # every stored token at loudness 1, its margin
        loud, own = np.ones_like(loud), np.ones_like(own)
    shape = (len(min_counts), len(dims))
    error, stored, label_error = np.zeros(shape), np.zeros(shape), np.zeros(shape)
    levels: dict[int, tuple[int, float]] = {}  # by cap size (one for every d without a cap)
    for j, d in enumerate(dims):
        size = rule.size(int(d), p.size)
        if size not in levels:
            levels[size] = _cap_level(p, n_samples, size)
        pi, keep = counts.storage(levels[size], [int(k) for k in min_counts])
        curve = _retrieval_curve(p.size, n_outputs, int(d), law)
        low = counts.pmf @ keep  # (N, K): stored with a count below the vote table's end
        loads = (counts.pmf.sum(axis=0) * loud) @ keep + (pi - low).sum(axis=0)  # (K,)
        for i in range(len(min_counts)):
            r_s, r_u = curve(loads[i] / own, empty=pi[:, i].sum() < 0.5)  # (n_vote,), float
            answer = counts.vote * r_s + (1 - counts.vote) * (1 - r_s) / max(n_outputs - 1, 1)
            tail = (pi[:, i] - low[:, i]) * curve(loads[i])[0][0]  # counts beyond: vote exact
            right = counts.pmf @ (keep[:, i] * answer) + tail + (1.0 - pi[:, i]) * r_u
            error[i, j] = p @ (1.0 - right)
            wrong_vote = counts.pmf @ (keep[:, i] * (1.0 - counts.vote))
            stored[i, j], label_error[i, j] = pi[:, i].sum(), p @ wrong_vote
    return MinCountPrediction(tuple(map(int, min_counts)), tuple(map(int, dims)), error, stored,
                              label_error)  # fmt: skip


@dataclass(frozen=True)
class _RetrievalCurve:
    """``r_s(S)`` and ``r_u(S)`` at one d, on a grid of loads S (one-hot tokens stored): every
    integer up to 16, then 48 log-spaced ones up to N; interpolated in log S between them."""

    loads: np.ndarray  # (G,)
    stored: np.ndarray  # (G,): P(a stored token answers its stored label)
    unstored: np.ndarray  # (G,): P(an unstored token answers f*)

    def __call__(self, load: float | np.ndarray, empty: bool = False) -> tuple[np.ndarray, float]:
        """``(r_s, r_u)`` at ``load`` (an array gives r_s per entry; r_u at its first entry).
        An empty memory scores 0 everywhere: a tie, so r_u = 0."""
        x = np.log(np.clip(np.atleast_1d(np.asarray(load, dtype=np.float64)), 1.0, None))
        grid = np.log(self.loads)
        r_s = np.interp(x, grid, self.stored)
        return r_s, 0.0 if empty else float(np.interp(x[0], grid, self.unstored))


@functools.lru_cache(maxsize=256)
def _retrieval_curve(n_inputs: int, n_outputs: int, dim: int, law: EmbeddingLaw) -> _RetrievalCurve:
    """:class:`_RetrievalCurve` from :func:`token_success` with the first S tokens stored
    (balanced classes), for each S of the grid (cached: every ε, rule, T and k of a grid at
    this d shares it)."""
    grid = np.unique(np.concatenate([np.arange(1, 17), np.geomspace(16, n_inputs, 48).round()]))
    grid = grid[grid <= n_inputs].astype(int)
    targets = np.arange(n_inputs) % n_outputs
    stored, unstored = np.empty(grid.size), np.empty(grid.size)
    for i, count in enumerate(grid.tolist()):
        q = (np.arange(n_inputs) < count).astype(float)
        success = token_success(q, targets, n_outputs, dim, law)
        stored[i] = success[:count].mean()
        unstored[i] = success[count:].mean() if count < n_inputs else 1.0 / n_outputs
    return _RetrievalCurve(grid.astype(float), stored, unstored)

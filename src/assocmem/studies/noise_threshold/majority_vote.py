r"""The exact majority vote of n noisy labels (docs: beyond/noise-threshold.md, "Theory").

Each label is f*(x) with probability 1 − ε, else one of the other M − 1 outputs uniformly.
:math:`P_c(n) = P(\text{the vote of } n \text{ noisy labels is } f^*)` sums the binomial law of the
correct label's count c and the multinomial law of the n − c wrong labels over the M − 1 others:
:math:`P_c(n) = \sum_c \operatorname{Bin}(c; n, 1-\varepsilon) \cdot G(n - c, c)` with
:math:`G(m, c) = \mathbb{E}[\mathbb{1}\{\text{every wrong count} \le c\} /
(1 + \#\{\text{wrong counts} = c\})]` (a tie of the correct label with t wrong ones is won with
probability 1/(1 + t)). Beyond the paper; used by the noise-threshold theory
(:mod:`assocmem.studies.noise_threshold.theory`).
"""

import functools
import math
import sys
from collections.abc import Sequence

import numpy as np
from scipy.stats import binom

from assocmem.config.errors import ConfigError
from assocmem.laws.checks import check_label_noise

__all__ = ["check_vote_noise", "majority_vote_correct", "vote_exact_below", "vote_table"]

TAIL = 1e-16  # the vote is taken as exact (P_c = 1) once its Chernoff bound is below this
MAX_VOTE_TABLE = 800  # the exact vote table's largest n (its cost grows like (M−1)² n³)
MAX_BINOMIAL_VOTE = 10**6  # M = 2: a binomial per n, linear cost


def vote_exact_below(noise: float, n_outputs: int) -> int:
    r"""The count n from which :math:`1 - P_c(n) < 10^{-16}` (so P_c is 1 in float64).

    The correct label beats one wrong label unless :math:`N_y \ge N_c`; by Chernoff's bound
    :math:`P(N_y - N_c \ge 0) \le (1 - (\sqrt{1-\varepsilon} - \sqrt{\varepsilon /(M-1)})^2)^n`, and
    a union over the M − 1 wrong labels bounds :math:`1 - P_c(n)`.
    """
    if noise == 0 or n_outputs == 1:
        return 1
    wrong = noise / (n_outputs - 1)
    gap = (math.sqrt(1.0 - noise) - math.sqrt(wrong)) ** 2
    if gap == 0.0:  # ε = (M−1)/M to rounding: the vote never becomes exact
        return sys.maxsize
    return max(1, math.ceil(math.log((n_outputs - 1) / TAIL) / -math.log1p(-gap)))


def _tie_table(n_max: int, n_wrong: int) -> np.ndarray:
    r"""``G[m, c]`` for :math:`0 \le m, c \le n_{\max}` (see the module docstring), shape
    (n+1, n+1).

    Dynamic programme over the wrong labels, one at a time: ``h[c, s, t]`` is the probability
    that s samples spread uniformly over the labels seen so far leave every count ≤ c, with t
    of them equal to c; a new label (the (j+1)-th) takes
    :math:`a \sim \operatorname{Bin}(s, 1/(j+1))` of them. All in probabilities (no factorials), so
    nothing overflows.
    """
    size = n_max + 1
    h = np.zeros((size, size, n_wrong + 1))  # (c, s, t)
    h[:, 0, 0] = 1.0  # no label yet: zero samples, no tie
    totals = np.arange(size)
    for j in range(n_wrong):
        new = np.zeros_like(h)
        for a in range(size):
            share = binom.pmf(a, totals[a:], 1.0 / (j + 1))[:, None]  # (size − a, 1)
            if a + 1 < size:  # below c: no new tie
                new[a + 1 :, a:, :] += share * h[a + 1 :, : size - a, :]
            new[a, a:, 1:] += share * h[a, : size - a, :-1]  # a = c: one more tie
        h = new
    table: np.ndarray = np.einsum("cst,t->sc", h, 1.0 / (1.0 + np.arange(n_wrong + 1)))
    return table


def majority_vote_correct(
    n: Sequence[int] | np.ndarray, noise: float, n_outputs: int
) -> np.ndarray:
    r"""P(the majority vote of n noisy labels is f*(x)), ties broken uniformly at random.

    Exact: the sum over the binomial law of the correct label's count and the multinomial law of
    the wrong ones (module docstring). For n beyond :func:`vote_exact_below` the answer is 1 to
    float64 rounding. n = 0 gives 1/M (a uniformly random guess).

    Parameters
    ----------
    n : array_like of int, shape (K,)
        Label counts :math:`n \ge 0`.
    noise : float
        ε in :math:`[0, (M-1)/M)`: a label is f*(x) w.p. 1 − ε, else uniform over the others.
    n_outputs : int
        M ≥ 1.

    Returns
    -------
    numpy.ndarray of float64, shape (K,)

    Raises
    ------
    ConfigError
        For a bad ε or n, or when ε is so close to (M−1)/M that the exact table would need
        counts beyond 800 (M > 2).

    Notes
    -----
    Beyond Cabannes et al. (2024); docs: beyond/noise-threshold.md.
    """
    counts = np.asarray(n)
    if counts.size and (counts.dtype.kind not in "iu" or counts.min() < 0):
        raise ConfigError("n", "label counts must be integers ≥ 0")
    check_label_noise(noise, n_outputs)
    if n_outputs == 1:
        return np.ones(counts.shape)
    if n_outputs == 2:  # one wrong label: a binomial majority, ties at one half, any n
        half = counts / 2.0
        tie = np.where(counts % 2 == 0, binom.pmf(half, counts, 1.0 - noise), 0.0)
        two: np.ndarray = binom.sf(np.floor(half), counts, 1.0 - noise) + 0.5 * tie
        return two
    needed = vote_exact_below(noise, n_outputs)
    top = int(min(counts.max(initial=0), needed))
    if top > MAX_VOTE_TABLE:
        raise ConfigError(
            "label_noise",
            f"ε = {noise:g} is too close to (M−1)/M for the exact vote (counts up to {needed})",
        )
    table = _tie_table(top, n_outputs - 1)
    exact = np.empty(top + 1)
    for size in range(top + 1):
        correct = np.arange(size + 1)
        exact[size] = binom.pmf(correct, size, 1.0 - noise) @ table[size - correct, correct]
    return np.where(counts > top, 1.0, exact[np.minimum(counts, top)])


def check_vote_noise(noise: float, n_outputs: int) -> None:
    """Raise a one-line :class:`ConfigError` unless the exact vote's table of ε fits: ε must
    stay below about 0.626 at M = 5 (counts up to 800; M = 2: up to 10⁶)."""
    check_label_noise(noise, n_outputs)
    needed = vote_exact_below(noise, n_outputs)
    if needed - 1 > (MAX_VOTE_TABLE if n_outputs > 2 else MAX_BINOMIAL_VOTE):
        raise ConfigError(
            "label_noise",
            f"ε = {noise:g} is too close to (M−1)/M for the exact vote (counts up to {needed})",
        )


@functools.lru_cache(maxsize=32)
def vote_table(noise: float, n_outputs: int) -> np.ndarray:
    """P_c(n) for every n below :func:`vote_exact_below` (read-only, cached)."""
    check_vote_noise(noise, n_outputs)  # before np.arange of a count that may not fit
    table = majority_vote_correct(np.arange(vote_exact_below(noise, n_outputs)), noise, n_outputs)
    table.flags.writeable = False
    return table

r"""Frontier searches and fits: the largest N a memory of dimension d stores at accuracy ≥ τ.

The search and fit machinery of the capacity studies (no memory here: each study passes an
``accuracy(N)`` function):

- :func:`largest_n` (doubling, then bisection) and :func:`largest_n_bracketed` (bracketing from
  a guess, then geometric bisection to a relative precision) find N*(d), assuming the accuracy
  falls with N; :func:`frontier_guess` is the theory's first guess,
  :math:`d^2 = c\cdot N \log N` for M = N;
- :class:`FrontierPoint` holds the N* of repeated independent searches at one d, and
  :func:`fit_frontier` their constants :math:`d^2/(N^* \log N^*)`, :math:`d/N^*` and the
  exponent of :math:`N^* \propto d^k`, with 95 % bootstrap intervals over the repeats.
"""

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from assocmem.config.checks import int_at_least, ints_at_least
from assocmem.config.errors import ConfigError


@dataclass(frozen=True)
class FrontierPoint:
    """N*(d) found by each repeated search, and the constants it implies."""

    dim: int
    n_star: tuple[int, ...]  # one per repeat (independent seeds)

    @property
    def median(self) -> float:
        return float(np.median(self.n_star))

    def constant(self) -> np.ndarray:
        r""":math:`d^2 / (N^* \log N^*)` for each repeat."""
        n = np.asarray(self.n_star, dtype=float)
        constants: np.ndarray = self.dim**2 / (n * np.log(n))
        return constants


def largest_n(
    accuracy: Callable[[int], float], tau: float, n_min: int = 2, n_max: int = 10**6
) -> int:
    r"""Largest N in [n_min, n_max] with :math:`\mathrm{accuracy}(N) \ge \tau`, assuming accuracy
    falls with N.

    Doubling from n_min, then bisection: O(log N) evaluations. Returns n_min - 1 if even n_min
    fails.
    """
    if accuracy(n_min) < tau:
        return n_min - 1
    low, high = n_min, n_min
    while high < n_max:
        high = min(2 * high, n_max)
        if accuracy(high) < tau:
            break
        low = high
    else:
        return n_max
    while high - low > 1:  # accuracy(low) ≥ τ > accuracy(high)
        mid = (low + high) // 2
        low, high = (mid, high) if accuracy(mid) >= tau else (low, mid)
    return low


def check_search(dims: Sequence[int], tau: float, trials: int, repeats: int) -> None:
    """The settings every frontier search shares: distinct dims ≥ 1, τ in (0, 1), counts ≥ 1."""
    ints_at_least("dims", dims, 1)
    if len(set(dims)) != len(dims):
        raise ConfigError("dims", f"each d may be given once, got {list(dims)}")
    if not 0 < tau < 1:
        raise ConfigError("tau", f"must be in (0, 1), got {tau}")
    int_at_least("trials", trials, 1)
    int_at_least("repeats", repeats, 1)


def _median_ci(values: np.ndarray, gen: np.random.Generator, n_boot: int) -> tuple[float, float]:
    """95 % percentile-bootstrap interval of the median of ``values``."""
    boot = np.median(gen.choice(values, size=(n_boot, values.size)), axis=1)
    return float(np.percentile(boot, 2.5)), float(np.percentile(boot, 97.5))


@dataclass(frozen=True)
class FrontierFit:
    r"""The frontier's constants: per d, :math:`c = d^2/(N^* \log N^*)` and :math:`d/N^*`; overall
    :math:`N^* \propto d^k`.

    Intervals are 95 % bootstrap intervals over the repeated searches (seeded).
    """

    dims: tuple[int, ...]
    n_star: tuple[float, ...]  # median over repeats
    constant: tuple[float, ...]  # median d²/(N* log N*)
    constant_ci: tuple[tuple[float, float], ...]
    d_over_n: tuple[float, ...]
    exponent: float  # least-squares slope of log N* against log d
    exponent_ci: tuple[float, float]
    d_over_n_ci: tuple[tuple[float, float], ...] = ()  # 95 % bootstrap of median d/N* per d


def fit_frontier(points: Sequence[FrontierPoint], n_boot: int = 2000, seed: int = 0) -> FrontierFit:
    gen = np.random.default_rng(seed)
    dims = np.array([p.dim for p in points], dtype=float)
    samples = [np.asarray(p.n_star, dtype=float) for p in points]

    def slope(n: np.ndarray) -> float:
        return float(np.polyfit(np.log(dims), np.log(n), 1)[0]) if len(dims) > 1 else math.nan

    medians = np.array([np.median(s) for s in samples])
    boot = [
        slope(np.array([np.median(gen.choice(s, s.size)) for s in samples])) for _ in range(n_boot)
    ]
    return FrontierFit(
        dims=tuple(int(d) for d in dims),
        n_star=tuple(medians.tolist()),
        constant=tuple(float(np.median(p.constant())) for p in points),
        constant_ci=tuple(_median_ci(p.constant(), gen, n_boot) for p in points),
        d_over_n=tuple((dims / medians).tolist()),
        exponent=slope(medians),
        exponent_ci=(
            (float(np.nanpercentile(boot, 2.5)), float(np.nanpercentile(boot, 97.5)))
            if len(dims) > 1
            else (math.nan, math.nan)  # one d: no exponent
        ),
        d_over_n_ci=tuple(
            _median_ci(p.dim / np.asarray(p.n_star, float), gen, n_boot) for p in points
        ),  # fmt: skip
    )


def largest_n_bracketed(
    accuracy: Callable[[int], float],
    tau: float,
    guess: int,
    *,
    factor: float = 1.25,
    rel_tol: float = 0.02,
    n_min: int = 2,
    n_max: int = 10**6,
) -> int:
    r"""Largest N with :math:`\mathrm{accuracy}(N) \ge \tau`, to a relative precision ``rel_tol``,
    from a guess.

    Brackets by steps of ``factor`` up or down from ``guess``, then bisects (geometrically)
    until :math:`\mathrm{high} / \mathrm{low} \le 1 + \mathrm{rel\_tol}` or
    :math:`\mathrm{high} - \mathrm{low} \le 1`. Each evaluation is a training run, so a good guess
    and a coarse tolerance matter more than exactness. Returns the largest N seen to pass
    (:math:`n_{\min} - 1` if even n_min fails; ``n_max`` if n_max passes).
    """
    n = min(max(guess, n_min), n_max)
    if accuracy(n) >= tau:
        low, high = n, n_max + 1
        while low < n_max:
            nxt = min(max(round(low * factor), low + 1), n_max)
            if accuracy(nxt) < tau:
                high = nxt
                break
            low = nxt
        else:
            return n_max
    else:
        low, high = n_min - 1, n
        while high > n_min:
            nxt = max(min(round(high / factor), high - 1), n_min)
            if accuracy(nxt) >= tau:
                low = nxt
                break
            high = nxt
        else:
            return n_min - 1
    while high - low > 1 and high > low * (1 + rel_tol):
        mid = min(max(round(math.sqrt(low * high)), low + 1), high - 1)
        low, high = (mid, high) if accuracy(mid) >= tau else (low, mid)
    return low


def frontier_guess(dim: int, n_outputs: int | None, constant: float = 1.3) -> int:
    r"""A starting N for the search: :math:`d^2 = c\cdot N \log N` for M = N, :math:`N = d` for a
    small M.

    With a small M the logits :math:`u_y^\top W e_x` depend on W only through the M×d matrix U W, so
    a trained memory is a linear classifier with M·d parameters and N* grows like d, not d².
    """
    if n_outputs is not None:
        return max(2, dim)
    n = max(2.0, dim**2 / constant)
    for _ in range(50):  # fixed point of N = d² / (c log N)
        n = dim**2 / (constant * math.log(max(n, 2.0)))
    return max(2, round(n))

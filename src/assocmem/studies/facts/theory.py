r"""The capacity theory the factual-recall measurements are held against (M = N, uniform facts).

**The sharp threshold of the linear memory.** Giorlandino, Goldt and Maillard (2026,
arXiv:2605.10795) compute, for a decoupled model that they show (numerically and analytically,
without proof) stores like the linear memory, the threshold of full recall
:math:`p_c \ln p_c / d^2 = 1/2`: :math:`d^2 = 2 N \ln N` (:func:`sharp_threshold`). Barnfield,
Kim, Nichani, Lee and Lu (2026, arXiv:2605.05189) show that :math:`d^2` of order
:math:`N \log N` is necessary for any linear memory, that the outer-product (correlation matrix)
memory reaches that scale, and conjecture the constant 2.

**Its finite-size form** (this project's fit, not a published law): the extreme-value form
:math:`d^2 = 2N(\ln N - \ln\ln N + c)` with one constant c fitted to measured capacities
(:func:`finite_size_capacity`, :func:`fit_finite_size_constant`).

**The outer product at finite d** (derived here). With Gaussian embeddings
:math:`e_x, u_y \sim N(0, I/d)` and :math:`W = \sum_x u_{f^*(x)} e_x^\top`, the score of y for
input x is :math:`s_y = \sum_{x'} (u_y \cdot u_{f^*(x')})(e_{x'} \cdot e_x)`. Given
:math:`a = |e_x|^2` (:math:`\chi^2_d / d`), the own score :math:`s_{f^*(x)}` has mean a and
variance :math:`2a^2/d + (N - 1)a/d^2` (:math:`|u|^2` and the N − 1 cross terms); each of the
N − 1 competitors has mean 0 and variance :math:`a^2/d + a/d + (N - 2)a/d^2` (the overlap with
the own output, its own fact's overlap, the rest), all uncorrelated. Taking them as independent
Gaussians, a fact is retrieved when its score beats the maximum of N − 1 competitors:

.. math:: \mathrm{acc}(N, d) = \mathbb{E}_a \int \varphi(z)\,
   \Phi\!\Big(\frac{a + \sigma_0(a) z}{\sigma_c(a)}\Big)^{N-1} dz,

and :math:`N^*(d)` solves :math:`\mathrm{acc}(N, d) = \tau` (:func:`outer_product_capacity`).
As N grows at fixed τ < 1 the competitors' maximum :math:`\sigma_c\sqrt{2 \ln N}` dominates, so
this memory too tends to :math:`d^2 \approx 2 N \ln N`, slowly.
"""

import math
from collections.abc import Callable, Sequence

import numpy as np
from numpy.typing import ArrayLike
from scipy import optimize, stats

AS_PUBLISHED = 2.0  # d² / (N ln N) at the sharp threshold (Giorlandino, Goldt and Maillard 2026)
NORM_NODES = 48  # quantile nodes over a = |e_x|² (χ²_d / d)
SCORE_NODES = 96  # Gauss–Hermite nodes over the own score


def sharp_threshold(dim: float, constant: float = AS_PUBLISHED) -> float:
    """N solving ``d² = constant·N ln N`` (N ≥ e): the sharp threshold at ``constant = 2``."""
    return _solve_n(lambda n: constant * n * math.log(n) - dim**2)


def finite_size_capacity(dim: float, c: float) -> float:
    """N solving ``d² = 2N(ln N − ln ln N + c)`` (N ≥ e^e, where ln ln N ≥ 1)."""
    return _solve_n(lambda n: 2 * n * (math.log(n) - math.log(math.log(n)) + c) - dim**2, low=16.0)


def finite_size_constant(dim: float, n_star: float) -> float:
    """The c of ``d² = 2N(ln N − ln ln N + c)`` through one point (d, N*)."""
    return dim**2 / (2 * n_star) - math.log(n_star) + math.log(math.log(n_star))


def fit_finite_size_constant(dims: Sequence[float], n_star: Sequence[float]) -> float:
    """The one constant c of the finite-size form fitted to points (d, N*): the c whose N(d)
    has the least squared error of log N over the points (N* ≥ 16)."""

    def misfit(c: float) -> float:
        return sum(
            (math.log(finite_size_capacity(d, c)) - math.log(n)) ** 2
            for d, n in zip(dims, n_star, strict=True)
        )

    guesses = [finite_size_constant(d, n) for d, n in zip(dims, n_star, strict=True)]
    low, high = min(guesses) - 1.0, max(guesses) + 1.0
    return float(optimize.minimize_scalar(misfit, bounds=(low, high), method="bounded").x)


def outer_product_accuracy(n_facts: float, dim: int) -> float:
    """The extreme-value model's mean top-1 accuracy of the outer-product memory of N facts at
    d, M = N (module docstring): quantiles of a = |e_x|², Gauss–Hermite over the own score."""
    n, d = float(n_facts), float(dim)
    a = stats.chi2.ppf((np.arange(NORM_NODES) + 0.5) / NORM_NODES, dim) / d  # (A,)
    z, w = np.polynomial.hermite_e.hermegauss(SCORE_NODES)  # (Z,) standard normal nodes
    own_sd = np.sqrt(2 * a**2 / d + (n - 1) * a / d**2)
    rival_sd = np.sqrt(a**2 / d + a / d + (n - 2) * a / d**2)
    own = a[:, None] + own_sd[:, None] * z[None, :]  # (A, Z)
    beats_all = np.exp((n - 1) * stats.norm.logcdf(own / rival_sd[:, None]))
    return float((beats_all @ (w / w.sum())).mean())


def outer_product_capacity(dim: int, tau: float = 0.99) -> float:
    """N*(d) of the outer product in the extreme-value model: acc(N, d) = τ, N ≥ 2 (real)."""
    if outer_product_accuracy(2, dim) < tau:
        return 2.0
    high = 4.0
    while outer_product_accuracy(high, dim) >= tau:
        high *= 2
    return _solve_n(lambda n: tau - outer_product_accuracy(n, dim), low=high / 2, high=high)


def local_slopes(dims: ArrayLike, n_star: ArrayLike) -> np.ndarray:
    """``Δ ln N* / Δ ln d`` between consecutive d (sorted as given): one fewer than the points."""
    x, y = np.log(np.asarray(dims, float)), np.log(np.asarray(n_star, float))
    slopes: np.ndarray = np.diff(y) / np.diff(x)
    return slopes


def sharp_threshold_slope(n_facts: float) -> float:
    """``d ln N / d ln d`` along ``d² = 2 N ln N``: 2 / (1 + 1/ln N), below 2 at every N."""
    return 2.0 / (1.0 + 1.0 / math.log(n_facts))


def _solve_n(f: Callable[[float], float], low: float = math.e, high: float | None = None) -> float:
    """The N in [low, high] where the increasing ``f`` crosses 0 (Brent's method on ln N); NaN
    where ``f`` is already positive at ``low`` (no N of the form there)."""
    if f(low) > 0:
        return math.nan
    if high is None:
        high = max(2 * low, 4.0)
        while f(high) < 0:
            high *= 2
    root = optimize.brentq(lambda t: f(math.exp(t)), math.log(low), math.log(high), xtol=1e-10)
    return float(math.exp(root))

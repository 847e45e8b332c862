r"""The effective number of tokens of a memory: the N of a disjoint model with the same curve.

The disjoint model with N' tokens (independent embeddings, Zipf(α) over N' tokens, M outputs),
in the data-limited regime, retrieves every seen token and answers an unseen one at chance:

.. math::

    E_0(T; N') = (1 - 1/M) \sum_{x < N'} p(x) (1 - p(x))^T, \quad
    p = \operatorname{Zipf}(\alpha) \text{ over } N' \text{ tokens},

the finite-data law of Cabannes et al. (2024), Proposition 1 (Hutter 2021), scaled by the chance
of a lucky guess. The effective number of tokens of a memory whose mean error against T is
:math:`\bar{e} (T)` is the N' whose curve matches best by least squares on log error (docs:
beyond/similar.md):

.. math::

    N_{\mathrm{eff}} = \operatorname{argmin}_{N'} \sum_T (\log \bar{e}(T) - \log E_0(T; N'))^2
    \quad \text{over a log grid of } N'.

Its uncertainty: a bootstrap over the memory's trials (the reference is exact), percentile
intervals.
"""

import functools
from dataclasses import dataclass

import numpy as np

from assocmem.analysis.theory import finite_data_error, zipf

GRID_POINTS = 600  # candidate N' per fit, log-spaced integers
TINY = 1e-300  # the log of an exact zero of a disjoint curve (every token seen) is taken here


@dataclass(frozen=True)
class EffectiveTokens:
    """A fitted effective number of tokens.

    Attributes
    ----------
    n_eff : float
        The best N'.
    interval : (float, float)
        Its bootstrap percentile interval.
    rms : float
        Root-mean-square log residual at the best N' (how well a disjoint curve describes it).
    at_edge : bool
        The best N' is an end of the candidate range (the fit is censored there).
    n_points : int
        The sample sizes T used (those where the memory's mean error is > 0).
    """

    n_eff: float
    interval: tuple[float, float]
    rms: float
    at_edge: bool
    n_points: int


def disjoint_error(
    n_inputs: int, alpha: float, n_outputs: int, n_samples: np.ndarray
) -> np.ndarray:
    r"""E_0(T; N'): the disjoint memory's expected error in the data-limited regime.

    Parameters
    ----------
    n_inputs : int
        N', the number of tokens of the disjoint model.
    alpha : float
        α of its Zipf law over N' tokens.
    n_outputs : int
        M: an unseen token is answered correctly with probability 1/M.
    n_samples : numpy.ndarray, shape (K,)
        The sample sizes T.

    Returns
    -------
    numpy.ndarray, shape (K,)
        :math:`(1 - 1/M) \sum_x p(x)(1 - p(x))^T` (Cabannes et al. 2024, Proposition 1).
    """
    probs = zipf(int(n_inputs), alpha)
    return (1.0 - 1.0 / n_outputs) * finite_data_error(probs, np.asarray(n_samples, float))


@functools.lru_cache(maxsize=32)
def _candidates(
    alpha: float, n_outputs: int, n_samples: tuple[float, ...], low: int, high: int
) -> tuple[np.ndarray, np.ndarray]:
    """Candidate N' (log-spaced integers in [low, high]) and their log curves (n, K)."""
    sizes = np.unique(np.round(np.geomspace(low, high, GRID_POINTS)).astype(int))
    curves = np.stack([disjoint_error(n, alpha, n_outputs, np.array(n_samples)) for n in sizes])
    return sizes, np.log(np.maximum(curves, TINY))  # a curve at 0 (all seen): far off in log


def _best(log_mean: np.ndarray, curves: np.ndarray) -> tuple[int, float]:
    loss = np.square(curves - log_mean[None, :]).mean(axis=1)
    best = int(np.argmin(loss))
    return best, float(loss[best])


def fit_effective_tokens(
    errors: np.ndarray,
    n_samples: np.ndarray,
    alpha: float,
    n_outputs: int,
    *,
    low: int | None = None,
    high: int = 10_000,
    n_boot: int = 200,
    confidence: float = 0.95,
    seed: int = 0,
) -> EffectiveTokens:
    """The N' of the disjoint model whose error-vs-T curve matches ``errors`` best.

    Parameters
    ----------
    errors : numpy.ndarray, shape (n_trials, K)
        The memory's error at each sample size (columns), one row per trial.
    n_samples : numpy.ndarray, shape (K,)
        The sample sizes T of the columns.
    alpha : float
        α of the memory's Zipf law (the disjoint models have the same).
    n_outputs : int
        M.
    low, high : int, optional
        The candidate range of N' (default ``max(M, 2)`` … 10,000).
    n_boot : int, default 200
        Bootstrap resamples of the trials (0: the interval is the point itself).
    confidence : float, default 0.95
    seed : int, default 0
        Seed of the resampling.

    Returns
    -------
    EffectiveTokens

    Raises
    ------
    ValueError
        For shapes that differ, or no T with a positive mean error.
    """
    errors = np.asarray(errors, dtype=float)
    n_samples = np.asarray(n_samples, dtype=float)
    if errors.ndim != 2 or errors.shape[1] != len(n_samples):
        raise ValueError("fit_effective_tokens: errors must be (n_trials, K) with K sample sizes")
    used = errors.mean(axis=0) > 0
    if not used.any():
        raise ValueError("fit_effective_tokens: the mean error is 0 at every T")
    low = max(n_outputs, 2) if low is None else low
    sizes, curves = _candidates(
        float(alpha), int(n_outputs), tuple(n_samples[used].tolist()), int(low), int(high)
    )
    best, loss = _best(np.log(errors[:, used].mean(axis=0)), curves)
    rng = np.random.default_rng(seed)
    draws = []
    for _ in range(n_boot):
        sample = errors[rng.integers(0, len(errors), len(errors))][:, used].mean(axis=0)
        draws.append(sizes[_best(np.log(np.maximum(sample, 1e-12)), curves)[0]])
    tail = (1 - confidence) / 2 * 100
    low_n, high_n = np.percentile(draws, [tail, 100 - tail]) if draws else (sizes[best],) * 2
    return EffectiveTokens(
        n_eff=float(sizes[best]),
        interval=(float(low_n), float(high_n)),
        rms=float(np.sqrt(loss)),
        at_edge=best in (0, len(sizes) - 1),
        n_points=int(used.sum()),
    )

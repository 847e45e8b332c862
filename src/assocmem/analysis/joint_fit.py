r"""The joint fit :math:`E(d, T) \approx A d^{-a} + B T^{-b}` of an error surface, with bootstrap
intervals over trials (the form of Cabannes et al. 2024, Proposition 4).

The one-variable fits and their conventions (slopes, trial resampling, verdicts) live in
:mod:`assocmem.analysis.fit`; this module fits both exponents at once over a (d, T) grid.
"""

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import least_squares

from assocmem.analysis.fit import slope_verdict
from assocmem.config.errors import ConfigError


@dataclass(frozen=True)
class JointFit:
    r""":math:`E(d, T) \approx A d^{-a} + B T^{-b}` with bootstrap intervals for a and b.

    Attributes
    ----------
    a, b : float
        The exponents of d and T.
    prefactor_d, prefactor_t : float
        A and B.
    a_ci, b_ci : tuple of (float, float)
        Bootstrap intervals of a and b at ``level``.
    level : float
        Their confidence level.
    n_points, n_boot : int
        Grid points fitted and bootstrap resamples.
    theory_a, theory_b : float or None
        The theory exponents compared with.
    verdicts : tuple of (str, str)
        The verdicts for a and b, as :attr:`PowerLawFit.verdict`.
    """

    a: float
    b: float
    prefactor_d: float
    prefactor_t: float
    a_ci: tuple[float, float]
    b_ci: tuple[float, float]
    level: float
    n_points: int
    n_boot: int
    theory_a: float | None = None
    theory_b: float | None = None
    verdicts: tuple[str, str] = field(default=("no theory", "no theory"))

    def as_dict(self) -> dict[str, object]:
        """The fields by name (JSON-ready but for tuples).

        Returns
        -------
        dict
        """
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def _joint_params(d: np.ndarray, t: np.ndarray, mean: np.ndarray, x0: np.ndarray) -> np.ndarray:
    """Least squares in log space for ``(log A, a, log B, b)``; ``T = inf`` contributes 0."""
    inv_t = np.where(np.isfinite(t), t, 1.0)
    t_on = np.isfinite(t)
    log_e = np.log(mean)

    def residual(theta: np.ndarray) -> np.ndarray:
        model = np.exp(theta[0] - theta[1] * np.log(d))
        model = model + np.where(t_on, np.exp(theta[2] - theta[3] * np.log(inv_t)), 0.0)
        out: np.ndarray = np.log(model) - log_e
        return out

    bounds = ([-50.0, 0.0, -50.0, 0.0], [50.0, 10.0, 50.0, 10.0])
    solution: np.ndarray = least_squares(residual, x0=x0, bounds=bounds, method="trf").x
    return solution


def fit_joint(
    dims: Sequence[float] | np.ndarray,
    n_samples: Sequence[float] | np.ndarray,
    errors: Sequence[Sequence[float]] | np.ndarray,
    *,
    theory_a: float | None = None,
    theory_b: float | None = None,
    n_boot: int = 200,
    level: float = 0.95,
    seed: int = 0,
) -> JointFit:
    r"""Joint fit :math:`E(d, T) \approx A d^{-a} + B T^{-b}` in log space, with bootstrap
    intervals.

    Parameters
    ----------
    dims, n_samples : array_like of float, shape (k,)
        The grid points (``T = inf`` for infinite data, where the T term is 0).
    errors : array_like of float, shape (n_trials, k)
        Per-trial errors at each grid point; points of zero mean error are dropped.
    theory_a, theory_b : float, optional
        The theory exponents a and b the verdicts compare with.
    n_boot : int, default 200
        Bootstrap resamples of the trials.
    level : float, default 0.95
        Confidence level of the intervals.
    seed : int, default 0
        Seed of the resampling.

    Returns
    -------
    JointFit
        The exponents, prefactors, intervals and verdicts.

    Notes
    -----
    The form of Cabannes et al. (2024), Proposition 4; see the docs: science/theory.md.
    """
    d = np.asarray(dims, dtype=np.float64)
    t = np.asarray(n_samples, dtype=np.float64)
    err = np.atleast_2d(np.asarray(errors, dtype=np.float64))
    mean = err.mean(axis=0)
    keep = mean > 0
    if keep.sum() < 5 or np.unique(d[keep]).size < 2 or np.unique(t[keep]).size < 2:
        raise ConfigError("records", "a joint fit needs ≥ 5 points over ≥ 2 values of d and of T")
    d, t, err = d[keep], t[keep], err[:, keep]
    x0 = np.array([np.log(mean[keep].max()), 1.0, np.log(mean[keep].max()), 0.5])
    theta = _joint_params(d, t, err.mean(axis=0), x0)
    rng = np.random.default_rng(seed)
    boot = []
    for _ in range(n_boot):
        resampled = err[rng.integers(0, err.shape[0], size=err.shape[0])].mean(axis=0)
        if (resampled > 0).all():
            boot.append(_joint_params(d, t, resampled, theta)[[1, 3]])
    draws = np.array(boot).reshape(-1, 2)
    tail = 50.0 * (1.0 - level)
    lo, hi = np.percentile(draws, [tail, 100.0 - tail], axis=0)
    a_ci, b_ci = (float(lo[0]), float(hi[0])), (float(lo[1]), float(hi[1]))
    verdicts = (
        slope_verdict((-a_ci[1], -a_ci[0]), None if theory_a is None else -theory_a),
        slope_verdict((-b_ci[1], -b_ci[0]), None if theory_b is None else -theory_b),
    )
    return JointFit(
        a=float(theta[1]),
        b=float(theta[3]),
        prefactor_d=float(np.exp(theta[0])),
        prefactor_t=float(np.exp(theta[2])),
        a_ci=a_ci,
        b_ci=b_ci,
        level=level,
        n_points=int(d.size),
        n_boot=int(draws.shape[0]),
        theory_a=theory_a,
        theory_b=theory_b,
        verdicts=verdicts,
    )

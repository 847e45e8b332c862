r"""Power-law fits of error curves, with bootstrap confidence intervals over trials.

Conventions: a *slope* is the log-log slope ``s`` of :math:`E \approx A \cdot x^s` (negative for a
decaying error); theory exponents from :mod:`assocmem.analysis.theory` are :math:`a = -s`.

Data layout: per-trial errors ``errors`` of shape (n_trials, n_points), where trial i is the
same random draw at every point (common random numbers across d, T, schemes). Confidence
intervals resample *trials* (rows) with replacement, keep the pairing across points, refit on
the resampled mean curve, and take percentiles: the rows of a curve are never resampled
independently (they are not independent). Resampling is seeded by a NumPy ``Generator``.

Automatic fit window (:func:`auto_window`), applied to the mean curve sorted by x:

1. drop points whose mean is ≤ 0 or not resolved from noise
   (:math:`\operatorname{mean} \le 2\cdot \operatorname{sem}`);
2. compute the local log-log slope of each segment between consecutive points and the
   reference slope ``g_ref`` = median of the steepest half of the segments;
3. if :math:`g_{\mathrm{ref}} > -0.05` the curve has no decaying regime: no window (the fit is over
   all points and is flagged ``"no decay"``);
4. otherwise trim, from both ends only, segments flatter than :math:`2/3 \cdot g_{\mathrm{ref}}` (a
   plateau at small x, a floor at large x); keep at least 3 points (if trimming leaves fewer, keep
   the three-point window with the steepest fitted slope).
"""

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import least_squares

from assocmem.config.errors import ConfigError, unknown_name

LOSSES = ("linear", "soft_l1", "huber")
FLAT_SLOPE = -0.05  # a reference slope above this is "no decay"
FLAT_FRACTION = 2.0 / 3.0  # an end segment less steep than this fraction of g_ref is trimmed


def _check_loss(loss: str) -> None:
    if loss not in LOSSES:
        raise unknown_name("loss", "loss", loss, LOSSES)


def _ols_slopes(log_x: np.ndarray, log_y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Least-squares lines through rows of ``log_y`` (B, k) against ``log_x`` (k,)."""
    cx = log_x - log_x.mean()
    slope = (log_y - log_y.mean(axis=-1, keepdims=True)) @ cx / (cx @ cx)
    intercept = log_y.mean(axis=-1) - slope * log_x.mean()
    return slope, intercept


def fit_power_law(
    x: Sequence[float] | np.ndarray,
    y: Sequence[float] | np.ndarray,
    *,
    loss: str = "linear",
    f_scale: float = 0.1,
) -> tuple[float, float]:
    r"""Fit :math:`y \approx A \cdot x^s` in log space.

    Parameters
    ----------
    x, y : array_like of float, shape (k,)
        Positive abscissae (at least two distinct) and positive values.
    loss : {"linear", "soft_l1", "huber"}, default "linear"
        ``"linear"`` is ordinary least squares on ``log y``; the others use
        :func:`scipy.optimize.least_squares` with that robust loss.
    f_scale : float, default 0.1
        The residual scale of a robust loss, in natural-log units, beyond which a point counts
        as an outlier.

    Returns
    -------
    tuple of (float, float)
        ``(s, A)``: the slope and the prefactor.

    Raises
    ------
    ConfigError
        For an unknown loss or fewer than two distinct x values.

    Notes
    -----
    The scaling laws of Cabannes et al. (2024) are power laws; see the docs: science/theory.md.
    """
    _check_loss(loss)
    lx = np.log(np.asarray(x, dtype=np.float64))
    ly = np.log(np.asarray(y, dtype=np.float64))
    if lx.size < 2 or np.ptp(lx) == 0:
        raise ConfigError("window", "a power-law fit needs at least two distinct x values")
    slope, intercept = _ols_slopes(lx, ly[None, :])
    if loss == "linear":
        return float(slope[0]), float(np.exp(intercept[0]))
    result = least_squares(
        lambda theta: theta[0] + theta[1] * lx - ly,
        x0=np.array([intercept[0], slope[0]]),
        loss=loss,
        f_scale=f_scale,
    )
    return float(result.x[1]), float(np.exp(result.x[0]))


def auto_window(
    x: Sequence[float] | np.ndarray,
    mean: Sequence[float] | np.ndarray,
    sem: Sequence[float] | np.ndarray | None = None,
) -> tuple[float, float] | None:
    """The automatic fit window ``(x_lo, x_hi)`` (inclusive) of the module docstring's rule.

    Returns ``None`` when the curve has no decaying regime (rule 3). x must be increasing.
    """
    xs = np.asarray(x, dtype=np.float64)
    m = np.asarray(mean, dtype=np.float64)
    s = np.zeros_like(m) if sem is None else np.asarray(sem, dtype=np.float64)
    keep = (m > 0) & (m > 2.0 * s)
    xs, m = xs[keep], m[keep]
    if xs.size < 3:
        return None
    local = np.diff(np.log(m)) / np.diff(np.log(xs))  # (k − 1,) segment slopes
    steep_half = np.sort(local)[: max(1, (local.size + 1) // 2)]
    g_ref = float(np.median(steep_half))
    if g_ref > FLAT_SLOPE:
        return None
    flat = local > FLAT_FRACTION * g_ref
    lo, hi = 0, local.size  # window = points lo..hi (segments lo..hi-1)
    while lo < hi and flat[lo]:
        lo += 1
    while hi > lo and flat[hi - 1]:
        hi -= 1
    if hi - lo < 2:
        starts = range(local.size - 1)
        best = min(starts, key=lambda i: local[i] + local[i + 1])
        lo, hi = best, best + 2
    return float(xs[lo]), float(xs[hi])


@dataclass(frozen=True)
class PowerLawFit:
    r"""A fitted slope with its bootstrap interval, next to the theory slope.

    Attributes
    ----------
    slope, prefactor : float
        s and A of :math:`E \approx A x^s` fitted to the trial-mean curve.
    ci_low, ci_high : float
        The percentile bootstrap interval of the slope, at ``level``.
    level : float
        Its confidence level.
    window : tuple of (float, float)
        The x range fitted.
    n_points, n_trials, n_boot : int
        Points in the window, trials, bootstrap resamples.
    loss : str
        The loss of the fit.
    theory_slope : float or None
        The asymptotic slope compared with.
    verdict : str
        ``"consistent"`` (the interval contains the theory slope), ``"finite-size miss
        (steeper)"`` or ``"finite-size miss (shallower)"`` (it excludes it), ``"no theory"``, or
        ``"no decay"`` (the automatic window found no decaying regime).
    """

    slope: float
    prefactor: float
    ci_low: float
    ci_high: float
    level: float
    window: tuple[float, float]
    n_points: int
    n_trials: int
    n_boot: int
    loss: str
    theory_slope: float | None
    verdict: str

    def as_dict(self) -> dict[str, object]:
        """The fields by name (JSON-ready but for tuples).

        Returns
        -------
        dict
        """
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def slope_verdict(ci: tuple[float, float], theory_slope: float | None) -> str:
    """Whether an interval of slopes holds the theory slope (shared with the joint fit).

    Parameters
    ----------
    ci : tuple of (float, float)
        The interval of the fitted slope.
    theory_slope : float or None
        The theory slope (None: no theory to compare with).

    Returns
    -------
    str
        ``"consistent"``, ``"finite-size miss (steeper|shallower)"`` or ``"no theory"``.
    """
    if theory_slope is None:
        return "no theory"
    if ci[0] - 1e-9 <= theory_slope <= ci[1] + 1e-9:  # tolerance: exact data gives a point CI
        return "consistent"
    return "finite-size miss (" + ("steeper" if ci[1] < theory_slope else "shallower") + ")"


def _select_window(
    x: np.ndarray, errors: np.ndarray, window: tuple[float, float] | None
) -> tuple[np.ndarray, bool]:
    """Boolean mask of the points in the window; second value: whether a decaying regime exists."""
    mean = errors.mean(axis=0)
    sem = errors.std(axis=0, ddof=1) / np.sqrt(errors.shape[0]) if errors.shape[0] > 1 else None
    decays = True
    if window is None:
        found = auto_window(x, mean, sem)
        decays = found is not None
        window = found if found is not None else (float(x.min()), float(x.max()))
    mask = (x >= window[0]) & (x <= window[1]) & (mean > 0)
    if mask.sum() < 2:
        raise ConfigError("window", f"{window} holds fewer than two points with positive error")
    return mask, decays


def bootstrap_slopes(
    x: np.ndarray, errors: np.ndarray, *, loss: str, n_boot: int, rng: np.random.Generator
) -> np.ndarray:
    """Slopes refitted on ``n_boot`` trial-resampled mean curves, shape (n_boot,).

    x: (k,); errors: (n_trials, k). Replicates whose mean curve has fewer than two positive
    points give NaN (dropped by the caller).
    """
    n_trials = errors.shape[0]
    idx = rng.integers(0, n_trials, size=(n_boot, n_trials))
    means = errors[idx].mean(axis=1)  # (n_boot, k)
    lx = np.log(x)
    slopes = np.full(n_boot, np.nan)
    positive = (means > 0).all(axis=1)
    if loss == "linear" and positive.any():
        slopes[positive] = _ols_slopes(lx, np.log(means[positive]))[0]
    todo = np.flatnonzero(~positive) if loss == "linear" else np.arange(n_boot)
    for b in todo:
        ok = means[b] > 0
        if ok.sum() >= 2 and np.ptp(lx[ok]) > 0:
            slopes[b] = fit_power_law(x[ok], means[b, ok], loss=loss)[0]
    return slopes


def fit_scaling(
    x: Sequence[float] | np.ndarray,
    errors: Sequence[Sequence[float]] | np.ndarray,
    *,
    theory_slope: float | None = None,
    window: tuple[float, float] | None = None,
    loss: str = "linear",
    n_boot: int = 1000,
    level: float = 0.95,
    seed: int = 0,
) -> PowerLawFit:
    r"""Fit :math:`E \approx A x^s` to the trial-mean curve, with a trial-bootstrap interval.

    Parameters
    ----------
    x : array_like of float, shape (k,)
        Positive abscissae (d or T).
    errors : array_like of float, shape (n_trials, k)
        Per-trial errors at each x.
    theory_slope : float, optional
        The asymptotic slope to compare with (e.g. :math:`-(\alpha -1)` for thresholding in d).
    window : tuple of (float, float), optional
        The x range fitted; None chooses it automatically (the decaying regime, with a flat end
        trimmed).
    loss : {"linear", "soft_l1", "huber"}, default "linear"
        As in :func:`fit_power_law`.
    n_boot : int, default 1000
        Bootstrap resamples of the trials.
    level : float, default 0.95
        Confidence level of the percentile interval.
    seed : int, default 0
        Seed of ``numpy.random.default_rng`` for the resampling (reproducible).

    Returns
    -------
    PowerLawFit
        The slope, prefactor, interval, window and a verdict against ``theory_slope``.

    Raises
    ------
    ConfigError
        For a bad window, loss or level.

    Notes
    -----
    Checks the exponents of Cabannes et al. (2024), Theorem 1 and Proposition 4; see the docs:
    science/claims.md.
    """
    _check_loss(loss)
    if not 0 < level < 1:
        raise ConfigError("level", f"must be in (0, 1), got {level}")
    if n_boot < 10:
        raise ConfigError("n_boot", f"must be ≥ 10, got {n_boot}")
    xs = np.asarray(x, dtype=np.float64)
    err = np.atleast_2d(np.asarray(errors, dtype=np.float64))
    if err.shape[1] != xs.size or (xs <= 0).any():
        raise ConfigError("x", "needs positive x values, one per column of errors")
    order = np.argsort(xs)
    xs, err = xs[order], err[:, order]
    mask, decays = _select_window(xs, err, window)
    xw, ew = xs[mask], err[:, mask]
    slope, prefactor = fit_power_law(xw, ew.mean(axis=0), loss=loss)
    boot = bootstrap_slopes(xw, ew, loss=loss, n_boot=n_boot, rng=np.random.default_rng(seed))
    boot = boot[np.isfinite(boot)]
    tail = 50.0 * (1.0 - level)
    ci = (float(np.percentile(boot, tail)), float(np.percentile(boot, 100.0 - tail)))
    verdict = slope_verdict(ci, theory_slope) if decays else "no decay"
    return PowerLawFit(
        slope=slope,
        prefactor=prefactor,
        ci_low=ci[0],
        ci_high=ci[1],
        level=level,
        window=(float(xw[0]), float(xw[-1])),
        n_points=int(xw.size),
        n_trials=int(err.shape[0]),
        n_boot=int(boot.size),
        loss=loss,
        theory_slope=theory_slope,
        verdict=verdict,
    )

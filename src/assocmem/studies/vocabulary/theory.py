r"""Scaling laws over a whole vocabulary: the full English word law against the single-exponent
theory (see the docs: beyond/vocabulary.md).

The theory of Cabannes et al. (2024) gives exponents for Zipf(α): :math:`d^{-(\alpha -1)/(2\alpha)}`
for :math:`q = p`, :math:`d^{-(\alpha -1)}` for thresholding, :math:`T^{-(\alpha -1)/\alpha}` for
finite data. A real word law is not one power law: English word frequencies bend from a slope near
−1 (ranks 10–10³) to near −1.9 (ranks ≥ 10⁴), with a floor of quantised rare frequencies. This
module measures the law's bend (:func:`rank_slopes`), the Theorem 1 quantities computed on the law
itself instead of on its asymptotics (the tail mass beyond the stored tokens, :func:`tail_mass`; the
finite-data error, :func:`assocmem.analysis.theory.finite_data_error`), and sets the exponents
fitted to Monte Carlo error curves next to the slope of the predicted curve
(:mod:`assocmem.analysis.predict`) and the single-exponent slopes at fitted Zipf exponents
(:func:`compare_exponents`).
"""

import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

import numpy as np
import pandas as pd

from assocmem.analysis.fit import PowerLawFit, fit_power_law, fit_scaling
from assocmem.analysis.predict import predict_config, sample_frequencies
from assocmem.analysis.theory import finite_data_error, scheme_law
from assocmem.closed_form.config import ClosedFormConfig
from assocmem.config.errors import ConfigError
from assocmem.laws.words import WordDistribution, vocabulary_size, word_distribution

RANK_EDGES = (1, 10, 100, 1_000, 10_000, 100_000)  # the windows of :func:`rank_slopes`


def full_word_law(language: str = "en") -> WordDistribution:
    """Every word of ``language``'s wordfreq list as a law over ranks (N = the list's size).

    Parameters
    ----------
    language : str, default "en"
        A wordfreq language (``"en"``: its ``large`` list, 321,180 words with wordfreq 3.1).

    Returns
    -------
    WordDistribution
        The law, its words, and the Zipf exponents fitted to it (``alpha_kl``, the fit
        ``assocmem words --compare`` uses, and ``alpha_slope``).

    Notes
    -----
    See the docs: beyond/vocabulary.md.
    """
    return word_distribution(language, vocabulary_size(language))


@dataclass(frozen=True)
class RankWindow:
    """The local power law of p over ranks ``[first, last]`` (1-based): slope and mass."""

    first: int
    last: int
    slope: float  # least-squares slope of log p(x) against log rank
    mass: float  # Σ p over the window


def rank_slopes(probs: np.ndarray, edges: Sequence[int] = RANK_EDGES) -> list[RankWindow]:
    """The local exponents of a law, window by window of ranks.

    Parameters
    ----------
    probs : numpy.ndarray of float, shape (N,)
        A law sorted by decreasing probability.
    edges : sequence of int, default (1, 10, 100, 1000, 10000, 100000)
        Window starts (1-based ranks); the last window ends at N.

    Returns
    -------
    list of RankWindow
        One per window holding at least two ranks; a single Zipf(α) law gives slope −α in each.

    Notes
    -----
    English bends from about −1 (ranks 10–10³) to about −1.9 (ranks ≥ 10⁴); see the docs:
    beyond/vocabulary.md.
    """
    p = np.asarray(probs, dtype=np.float64)
    bounds = [e for e in edges if e <= p.size] + [p.size + 1]
    out = []
    for first, stop in zip(bounds[:-1], bounds[1:], strict=True):
        last = stop - 1 if stop <= p.size else p.size
        if last - first < 1:
            continue
        ranks = np.arange(first, last + 1)
        values = p[first - 1 : last]
        slope = fit_power_law(ranks, values)[0]
        out.append(RankWindow(first, last, slope, float(values.sum())))
    return out


def tail_mass(probs: np.ndarray, sizes: Sequence[int]) -> np.ndarray:
    r""":math:`S(P) = \sum_{x > P} p(x)`: the mass a memory storing the P most probable tokens
    leaves out.

    Parameters
    ----------
    probs : numpy.ndarray of float, shape (N,)
        A law sorted by decreasing probability.
    sizes : sequence of int
        Numbers P of stored tokens (P ≥ N leaves nothing out).

    Returns
    -------
    numpy.ndarray of float64, shape (len(sizes),)
        ``S(P)`` for each P.

    Notes
    -----
    For Zipf(α), :math:`S(P) \asymp P^{-(\alpha -1)}`: the thresholding law of Cabannes et al.
    (2024), Theorem 1 (an unstored token is answered by chance, so the threshold error is about
    :math:`(1 - 1/M) S(P)` when the stored ones are retrieved). On a bent law the slope of S is
    what the threshold memory's error follows; see the docs: beyond/vocabulary.md.
    """
    p = np.asarray(probs, dtype=np.float64)
    kept = np.concatenate([[0.0], np.cumsum(p)])
    return np.array([max(0.0, 1.0 - kept[min(int(size), p.size)]) for size in sizes])


def theory_slope(scheme: str, axis: str, alpha: float) -> float | None:
    r"""The single-exponent slope of a scheme in d or T at Zipf exponent α (None: no power law).

    Parameters
    ----------
    scheme : str
        A scheme spec (``"population"``, ``"threshold:P=d/8"``, ``"empirical_threshold:P=d/12"``).
    axis : {"d", "T"}
        The variable.
    alpha : float
        α > 1.

    Returns
    -------
    float or None
        :math:`-\mathrm{exponent}` of :func:`assocmem.analysis.theory.scheme_law`.
    """
    if axis not in ("d", "T"):
        raise ConfigError("axis", f"must be 'd' or 'T', got {axis!r}")
    law = scheme_law(scheme, alpha)
    exponent = law.dim_exponent if axis == "d" else law.data_exponent
    return None if exponent is None else -exponent


@dataclass(frozen=True)
class ExponentComparison:
    """One error curve's exponent: Monte Carlo, predicted from the law, single-exponent theory.

    Attributes
    ----------
    label : str
        The curve (scheme, and the T of a d-curve or the d of a T-curve).
    window : tuple of (float, float)
        The x range fitted (inclusive).
    measured : PowerLawFit
        The slope of the trial-mean curve, with its trial-bootstrap interval.
    predicted : float
        The slope of the predicted curve over the same points (NaN without a prediction).
    theory : dict of str to float or None
        The single-exponent slope at each fitted α (by the fit's name).
    """

    label: str
    window: tuple[float, float]
    measured: PowerLawFit
    predicted: float
    theory: dict[str, float | None]

    @property
    def predicted_inside(self) -> bool:
        """The predicted slope lies in the measured slope's bootstrap interval."""
        return self.measured.ci_low <= self.predicted <= self.measured.ci_high

    def distance(self, slope: float) -> float:
        """How far ``slope`` lies outside the bootstrap interval (0 inside)."""
        return max(0.0, self.measured.ci_low - slope, slope - self.measured.ci_high)


def compare_exponents(
    label: str,
    x: Sequence[float] | np.ndarray,
    errors: np.ndarray,
    predicted: Sequence[float] | np.ndarray | None,
    window: tuple[float, float],
    theory: Mapping[str, float | None],
    *,
    n_boot: int = 1000,
    seed: int = 0,
) -> ExponentComparison:
    """Fit one error curve over ``window`` and set the predicted and theory slopes beside it.

    Parameters
    ----------
    label : str
        Names the curve.
    x : sequence of float, shape (k,)
        d or T.
    errors : numpy.ndarray of float, shape (n_trials, k)
        Per-trial errors (common random numbers along x).
    predicted : sequence of float, shape (k,), optional
        The predicted mean error at each x (None: no prediction, its slope is NaN).
    window : tuple of (float, float)
        The x range fitted, inclusive (at least two points).
    theory : mapping of str to float or None
        Single-exponent slopes by the name of the α they use.
    n_boot, seed : int
        The bootstrap of :func:`assocmem.analysis.fit.fit_scaling`.

    Returns
    -------
    ExponentComparison
    """
    xs = np.asarray(x, dtype=np.float64)
    fit = fit_scaling(xs, errors, window=window, n_boot=n_boot, seed=seed)
    inside = (xs >= window[0]) & (xs <= window[1])
    pred = np.full(xs.size, math.nan) if predicted is None else np.asarray(predicted, float)
    slope = fit_power_law(xs[inside], pred[inside])[0] if (pred[inside] > 0).all() else math.nan
    return ExponentComparison(label, fit.window, fit, slope, dict(theory))


def unseen_mass(counts: np.ndarray, probs: np.ndarray) -> np.ndarray:
    r""":math:`\sum_x p(x) \mathbb{1}\{n(x) = 0\}`: the mass of the tokens a sample never shows, per
    row of counts.

    Its expectation is the finite-data error :math:`\sum p(1-p)^T`
    (:func:`assocmem.analysis.theory.finite_data_error`): a check of the count draw at any T.

    Parameters
    ----------
    counts : numpy.ndarray of float, shape (..., N)
        Sample counts n(x).
    probs : numpy.ndarray of float, shape (N,)
        The law p.

    Returns
    -------
    numpy.ndarray of float64, shape (...)
    """
    return np.asarray(np.asarray(counts) == 0, dtype=np.float64) @ np.asarray(probs, np.float64)


def local_slopes(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray) -> np.ndarray:
    """Log-log slopes of consecutive points of a curve, shape (k − 1,)."""
    lx, ly = np.log(np.asarray(x, np.float64)), np.log(np.asarray(y, np.float64))
    slopes: np.ndarray = np.diff(ly) / np.diff(lx)
    return slopes


# ---- records of a closed-form sweep: their config, predicted curves and count checks -------

_VECTOR_FIELDS = ("dims", "schemes", "n_samples", "trials")


def _plain(value: Any, default: Any = None) -> Any:
    """A stored cell as the config field's type: numpy scalars as Python ones, and integer or
    boolean fields read back as floats (a column of a frame that also holds other sweeps'
    runs, without that field, is float) as ints and bools."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, tuple):
        return tuple(_plain(v) for v in value)
    if isinstance(value, float) and value.is_integer() and isinstance(default, int):
        return bool(value) if isinstance(default, bool) else int(value)
    return value


def size_label(n_samples: float) -> str:
    r"""A sample size as the pages write it: ``1e6`` for a power of ten, :math:`\infty`, else the
    number (``20,000``): distinct sizes never share a label (``T = 0`` included)."""
    if math.isinf(n_samples):
        return "∞"
    power = round(math.log10(n_samples)) if n_samples > 0 else 0
    return f"1e{power}" if n_samples == 10**power else f"{int(n_samples):,}"


def frame_config(frame: pd.DataFrame) -> ClosedFormConfig:
    """The closed-form config of a sweep's records (its d, T and schemes from the rows)."""
    if frame.empty:
        raise ConfigError("study", "no stored records of this sweep")
    first = frame.iloc[0]
    values: dict[str, Any] = {}
    for f in fields(ClosedFormConfig):
        if f.name in _VECTOR_FIELDS or f.name not in frame.columns:
            continue
        value = _plain(first[f.name], f.default)
        if value is not None and not (isinstance(value, float) and math.isnan(value)):
            values[f.name] = value
    sizes = sorted({float(t) for t in frame["n_samples"]})
    return ClosedFormConfig(
        **values,
        dims=tuple(sorted(int(d) for d in frame["dim"].unique())),
        schemes=tuple(dict.fromkeys(frame["scheme"])),
        n_samples=tuple(None if math.isinf(t) else int(t) for t in sizes),
        trials=int(frame["trial"].nunique()),
    )


@functools.lru_cache(maxsize=8)
def predicted_frame(cfg: ClosedFormConfig, n_draws: int = 5) -> pd.DataFrame:
    """The predicted mean error of every (scheme, T, d) of ``cfg`` as a frame (T = ∞ as inf),
    averaged at finite T over the sampled counts of the first ``n_draws`` trials (cached)."""
    rows = predict_config(cfg, n_draws=n_draws)
    frame = pd.DataFrame(rows)
    frame["n_samples"] = frame["n_samples"].astype(float).fillna(math.inf)  # None: T = ∞
    return frame


def compared(frame: pd.DataFrame, max_draws: int = 5) -> pd.DataFrame:
    """Monte Carlo mean and s.e. over trials beside the predicted mean, per (scheme, T, d).

    Parameters
    ----------
    frame : pandas.DataFrame
        Tidy closed-form rows of one config (``scheme``, ``dim``, ``n_samples``, ``trial``,
        ``error`` and the config's fields as columns: a sweep's records).
    max_draws : int, default 5
        The most sampled count vectors a finite-T prediction averages over.

    Returns
    -------
    pandas.DataFrame
        One row per (scheme, T, d): ``mc_mean``, ``mc_sd``, ``trials``, ``mc_sem``,
        ``predicted`` and ``rel_error`` = (predicted − MC) / MC.
    """
    stats = (
        frame.groupby(["scheme", "n_samples", "dim"])["error"]
        .agg(mc_mean="mean", mc_sd="std", trials="count")
        .reset_index()
    )
    stats["mc_sem"] = stats["mc_sd"] / np.sqrt(stats["trials"])
    cfg = frame_config(frame)
    predicted = predicted_frame(cfg, min(cfg.trials, max_draws))
    both = stats.merge(predicted, on=["scheme", "n_samples", "dim"])
    both["rel_error"] = (both["predicted"] - both["mc_mean"]) / both["mc_mean"]
    return both


def curve_errors(
    frame: pd.DataFrame, scheme: str, n_samples: float
) -> tuple[np.ndarray, np.ndarray]:
    """The dims and the per-trial errors (trials, dims) of one (scheme, T) curve."""
    rows = frame[(frame["scheme"] == scheme) & (frame["n_samples"] == n_samples)]
    table = rows.pivot_table(index="trial", columns="dim", values="error")
    return table.columns.to_numpy(dtype=float), table.to_numpy(dtype=float)


def unseen_check(
    cfg: ClosedFormConfig, probs: np.ndarray, sizes: Sequence[int], trials: Sequence[int]
) -> dict[str, np.ndarray]:
    """Trial-mean unseen mass of the runs' counts, its exact mean and the z-score at each T."""
    mass = np.array(
        [[unseen_mass(sample_frequencies(cfg, t)[s], probs) for s in sizes] for t in trials]
    )  # (trials, T)
    exact = finite_data_error(probs, sizes)
    miss = np.exp(np.outer(sizes, np.log1p(-probs)))  # (T, N): (1 − p)^T
    variance = (miss * (1 - miss)) @ probs**2  # Σ p² q(1 − q): independent indicators
    z = (mass.mean(axis=0) - exact) / np.sqrt(variance / len(trials))
    return {"mean": mass.mean(axis=0), "exact": exact, "z": z}

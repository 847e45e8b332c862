r"""Theory of associative-memory scaling laws (Cabannes et al. 2024; see the docs:
science/theory.md): exact finite-data error, asymptotic exponents of every scheme, the joint law,
compute-optimal allocation and the paper's Table 1.

Sign convention: an *exponent* here is the positive number ``a`` in :math:`E \asymp x^{-a}`; the
log-log *slope* of the error curve is ``-a``. :math:`\asymp` means "up to constants depending on α
(and logs)": the functions below give exponents, not constants.
"""

import math
from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from assocmem.config.errors import ConfigError
from assocmem.schemes import REGISTRY, Scheme, parse_scheme
from assocmem.schemes.law import (
    SchemeLaw,
    check_alpha,
    data_exponent,
    power_exponent,
    threshold_exponent,
)

T_CHUNK_ELEMENTS = 1 << 23  # (len(T) × N) elements per chunk of the finite-data sum


def finite_data_error(
    probs: Sequence[float] | np.ndarray, n_samples: Sequence[float] | np.ndarray
) -> np.ndarray:
    r"""Exact expected error of a perfect memoriser after T samples.

    A learner that answers every seen token correctly and fails on unseen ones has expected
    population error :math:`\sum_x p(x) (1 - p(x))^T` (Hutter 2021). Computed as
    :math:`\sum_x p(x) \exp(T \cdot \operatorname{log1p}(-p(x)))` so that N up to 10⁶ and T up to
    10⁹ stay accurate.

    Parameters
    ----------
    probs : array_like of float, shape (N,)
        The token law p (not renormalised: pass a law that sums to 1).
    n_samples : array_like of float, shape (K,)
        Sample sizes T ≥ 0 (any real ≥ 0).

    Returns
    -------
    numpy.ndarray of float64, shape (K,)
        The expected error at each T.

    Notes
    -----
    Cabannes et al. (2024), Proposition 1: :math:`\asymp T^{-1+1/\alpha}` under Zipf(α). See the
    docs: science/theory.md, "Finite data, infinite memory".
    """
    p = np.asarray(probs, dtype=np.float64).ravel()
    sizes = np.atleast_1d(np.asarray(n_samples, dtype=np.float64))
    if sizes.ndim != 1 or (sizes < 0).any() or not np.isfinite(sizes).all():
        raise ConfigError("n_samples", "must be finite sample sizes T ≥ 0")
    if (p < 0).any() or (p > 1).any() or not np.isfinite(p).all():
        raise ConfigError("probabilities", "must lie in [0, 1]")
    with np.errstate(divide="ignore"):
        log_miss = np.log1p(-np.minimum(p, 1.0))  # (N,), −inf where p = 1
    out = np.empty(sizes.size)
    step = max(1, T_CHUNK_ELEMENTS // max(p.size, 1))
    for start in range(0, sizes.size, step):
        block = sizes[start : start + step]
        with np.errstate(invalid="ignore"):
            exponent = block[:, None] * log_miss[None, :]  # (k, N)
        exponent = np.where(block[:, None] == 0, 0.0, exponent)  # (1 − p)^0 = 1, even for p = 1
        out[start : start + step] = np.exp(exponent) @ p
    return out


def zipf(n_inputs: int, alpha: float) -> np.ndarray:
    r"""The Zipf law :math:`p(x) \propto (x+1)^{-\alpha}` over N tokens.

    Parameters
    ----------
    n_inputs : int
        N ≥ 1, the number of tokens.
    alpha : float
        The exponent α ≥ 0 (0: the uniform law ``1/N``).

    Returns
    -------
    numpy.ndarray of float64, shape (N,)
        The probabilities, non-increasing, summing to 1.

    Raises
    ------
    ConfigError
        If ``n_inputs < 1`` or α is not a finite number ≥ 0.

    Notes
    -----
    The data law of Cabannes et al. (2024); see the docs: science/model.md.
    """
    if n_inputs < 1:
        raise ConfigError("n_inputs", f"must be an integer ≥ 1, got {n_inputs}")
    check_alpha(alpha, unbounded=False)
    weights = np.arange(1, n_inputs + 1, dtype=np.float64) ** (-alpha)
    probs: np.ndarray = weights / weights.sum()
    return probs


def compute_optimal_dim(n_samples: float | np.ndarray, alpha: float) -> np.ndarray:
    r"""The capacity worth having for T samples: :math:`d^*(T) = T^{1/\alpha}`.

    Balances :math:`d^{-(\alpha -1)}` against :math:`T^{-(\alpha -1)/\alpha}` for empirical
    thresholding; the constant is set to 1 (the theory fixes only the exponent).

    Parameters
    ----------
    n_samples : float or numpy.ndarray
        Sample sizes T > 0 (any shape).
    alpha : float
        Zipf exponent α > 1.

    Returns
    -------
    numpy.ndarray of float64
        :math:`T^{1/\alpha}`, the shape of ``n_samples``.

    Notes
    -----
    Cabannes et al. (2024), Proposition 4; see the docs: science/theory.md, "Both finite".
    """
    check_alpha(alpha)
    return np.asarray(n_samples, dtype=np.float64) ** (1.0 / alpha)


def finite_data_table(
    n_inputs: int, alpha: float, n_samples: Sequence[float]
) -> list[dict[str, float]]:
    r"""The finite-data error, its asymptotic shape and :math:`d^*(T)` at each T.

    Parameters
    ----------
    n_inputs : int
        N, the number of tokens of the Zipf law.
    alpha : float
        Zipf exponent α > 1.
    n_samples : sequence of float
        The sample sizes T.

    Returns
    -------
    list of dict
        One dict per T with keys ``n_samples``, ``error`` (:func:`finite_data_error`),
        ``shape`` (:math:`T^{-(\alpha -1)/\alpha}`) and ``optimal_dim``
        (:func:`compute_optimal_dim`).

    Notes
    -----
    Cabannes et al. (2024), Propositions 1 and 4; see the docs: science/theory.md.
    """
    sizes = np.asarray(n_samples, dtype=np.float64)
    exact = finite_data_error(zipf(n_inputs, alpha), sizes)
    optimal = compute_optimal_dim(sizes, alpha)
    return [
        {
            "n_samples": float(t),
            "finite_data_error": float(e),
            "asymptotic_shape": math.inf if t == 0 else float(t ** -data_exponent(alpha)),
            "optimal_dim": float(d),
        }
        for t, e, d in zip(sizes, exact, optimal, strict=True)
    ]


def compute_optimal_samples(dim: float | np.ndarray, alpha: float) -> np.ndarray:
    r"""The data worth having for capacity d: :math:`T^*(d) = d^\alpha`.

    Parameters
    ----------
    dim : float or numpy.ndarray
        Memory dimensions d > 0 (any shape).
    alpha : float
        Zipf exponent α > 1.

    Returns
    -------
    numpy.ndarray of float64
        :math:`d^\alpha`, the shape of ``dim``: more samples than this leave the error at the
        capacity term.

    Notes
    -----
    Cabannes et al. (2024), Proposition 4 (the inverse of :func:`compute_optimal_dim`); see the
    docs: science/theory.md, "Both finite".
    """
    check_alpha(alpha)
    return np.asarray(dim, dtype=np.float64) ** alpha


def joint_error_shape(
    dim: float | np.ndarray,
    n_samples: float | np.ndarray,
    alpha: float,
    *,
    memory_exponent: float | None = None,
) -> np.ndarray:
    r"""The constant-free joint law :math:`d^{-a} + T^{-(\alpha -1)/\alpha}`.

    Parameters
    ----------
    dim : float or numpy.ndarray
        Memory dimensions d, broadcast against ``n_samples``.
    n_samples : float or numpy.ndarray
        Sample sizes T (``inf`` gives the capacity term alone).
    alpha : float
        Zipf exponent α > 1.
    memory_exponent : float, optional
        The exponent a of d; default thresholding, :math:`a = \alpha - 1`;
        :math:`(\alpha - 1) / (2\alpha)` for :math:`q = p` (the first row of Table 1).

    Returns
    -------
    numpy.ndarray of float64
        The broadcast shape of ``dim`` and ``n_samples``.

    Notes
    -----
    Cabannes et al. (2024), Proposition 4 and Table 1; see the docs: science/theory.md.
    """
    a = threshold_exponent(alpha) if memory_exponent is None else memory_exponent
    d = np.asarray(dim, dtype=np.float64)
    t = np.asarray(n_samples, dtype=np.float64)
    return d ** (-a) + t ** (-data_exponent(alpha))


def table1(alpha: float) -> list[SchemeLaw]:
    r"""Table 1 of Cabannes et al. (2024) at this α.

    Parameters
    ----------
    alpha : float
        Zipf exponent α > 1.

    Returns
    -------
    list of SchemeLaw
        Two rows: :math:`q = p` (what one large-batch gradient step stores,
        :math:`d^{-(\alpha -1)/(2\alpha)} + T^{-1+1/\alpha}`) and thresholding (optimal,
        :math:`d^{-\alpha +1} + T^{-1+1/\alpha}`).

    Notes
    -----
    See the docs: science/theory.md, "Table 1".
    """
    b = data_exponent(alpha)
    return [
        SchemeLaw("empirical", "q = p (n/T)", power_exponent(alpha, 1.0), b),
        SchemeLaw("empirical_threshold:P=d", "q = 1{x ≤ d}", threshold_exponent(alpha), b),
    ]


def _lenient_scheme(spec: str) -> Scheme:
    """Parse a spec as the theory has always read it: any case, ``-`` for ``_`` in the name,
    parameter names in any case (``threshold:p=d/8``)."""
    name, _, rest = spec.partition(":")
    name = name.strip().lower().replace("-", "_")
    if name not in REGISTRY:
        raise ConfigError(
            "scheme",
            f"no theory for scheme {spec!r}; registered schemes: {', '.join(sorted(REGISTRY))}",
        )
    params = {key.lower(): key for key in REGISTRY[name].params}
    items = []
    for item in filter(None, (part.strip() for part in rest.split(","))):
        key, sep, value = item.partition("=")
        items.append(f"{params.get(key.strip().lower(), key.strip())}{sep}{value.strip()}")
    return parse_scheme(name + (":" + ",".join(items) if items else ""))


def scheme_law(spec: str, alpha: float) -> SchemeLaw:
    """The asymptotic law of a scheme given by its spec string.

    Parameters
    ----------
    spec : str
        A scheme spec, e.g. ``"population:rho=0.5"`` or ``"threshold:P=d/8"``.
    alpha : float
        Zipf exponent α > 1.

    Returns
    -------
    SchemeLaw
        The law the scheme class states (:meth:`Scheme.law`), labelled with ``spec``.

    Raises
    ------
    ConfigError
        For an unknown scheme name (the message lists the registered ones) or α ≤ 1.

    Notes
    -----
    Cabannes et al. (2024), Theorem 1 and Proposition 4; see the docs: science/schemes.md.
    """
    check_alpha(alpha)
    return replace(_lenient_scheme(spec).law(alpha), scheme=spec)


def theory_table(alpha: float, rhos: Sequence[float] = (1.0, 0.75, 0.5)) -> list[SchemeLaw]:
    r"""Every registered scheme with its asymptotic exponents at this α.

    Parameters
    ----------
    alpha : float
        Zipf exponent α > 1.
    rhos : sequence of float, default (1.0, 0.75, 0.5)
        The powers ρ of the :math:`q = p^\rho` rows.

    Returns
    -------
    list of SchemeLaw
        The specs each scheme of the registry lists (``Scheme.theory_specs``), in registry
        order: ``population:rho=ρ`` for each ρ, ``uniform``, ``threshold:P=d/8``,
        ``empirical``, ``seen_once``, ``empirical_threshold:P=d/12``, then any scheme
        registered since (``register_scheme``) under its name.

    Notes
    -----
    Cabannes et al. (2024), Theorem 1 and Proposition 4; see the docs: science/schemes.md and
    science/theory.md.
    """
    specs = [spec for cls in REGISTRY.values() for spec in cls.theory_specs(rhos)]
    return [scheme_law(spec, alpha) for spec in specs]


__all__ = [
    "SchemeLaw",
    "compute_optimal_dim",
    "compute_optimal_samples",
    "data_exponent",
    "finite_data_error",
    "finite_data_table",
    "joint_error_shape",
    "power_exponent",
    "scheme_law",
    "table1",
    "theory_table",
    "threshold_exponent",
    "zipf",
]

"""Theory of associative-memory scaling laws (PAPER.md §3): exact finite-data error, asymptotic
exponents of every scheme, the joint law, compute-optimal allocation and the paper's Table 1.

Sign convention: an *exponent* here is the positive number ``a`` in ``E ≍ x^{-a}``; the
log-log *slope* of the error curve is ``-a``. ``≍`` means "up to constants depending on α (and
logs)": the functions below give exponents, not constants.
"""

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from assocmem.config.errors import ConfigError

T_CHUNK_ELEMENTS = 1 << 23  # (len(T) × N) elements per chunk of the finite-data sum


def _check_alpha(alpha: float, *, unbounded: bool = True) -> None:
    if not np.isfinite(alpha) or alpha <= 0:
        raise ConfigError("alpha", f"must be a finite number > 0, got {alpha}")
    if unbounded and alpha <= 1:
        raise ConfigError("alpha", f"the asymptotic laws need α > 1 (N unbounded), got {alpha}")


def finite_data_error(
    probs: Sequence[float] | np.ndarray, n_samples: Sequence[float] | np.ndarray
) -> np.ndarray:
    """Exact expected error of a perfect memoriser after T samples (PAPER.md §3.1, Prop. 1).

    A learner that answers every seen token correctly and fails on unseen ones has expected
    population error ``Σ_x p(x) (1 − p(x))^T`` (Hutter 2021; the paper's Proposition 1). Computed
    as ``Σ_x p(x) exp(T · log1p(−p(x)))`` so that N up to 10⁶ and T up to 10⁹ stay accurate.

    probs: (N,) probabilities (not renormalised; pass a law that sums to 1).
    n_samples: (K,) sample sizes T ≥ 0 (any real ≥ 0). Returns (K,) float64.
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
    """Zipf law ``p(x) ∝ (x+1)^{-α}`` over N tokens as a NumPy array, shape (N,)."""
    if n_inputs < 1:
        raise ConfigError("n_inputs", f"must be an integer ≥ 1, got {n_inputs}")
    _check_alpha(alpha, unbounded=False)
    weights = np.arange(1, n_inputs + 1, dtype=np.float64) ** (-alpha)
    return weights / weights.sum()


def data_exponent(alpha: float) -> float:
    """Finite-data exponent: ``Σ p(1−p)^T ≍ T^{-(α−1)/α}`` (PAPER.md §3.1; Hutter 2021)."""
    _check_alpha(alpha)
    return (alpha - 1.0) / alpha


def power_exponent(alpha: float, rho: float) -> float:
    """Memory exponent of ``q = p^ρ`` with infinite data: ``E ≍ d^{-(α−1)/(2ρα)}``.

    Theorem 1 of the paper (PAPER.md §3.2); valid only when ``2ρα > 1`` (otherwise the weights of
    the tail dominate the interference and there is no such power law). ρ = 1 is ``q = p``.
    """
    _check_alpha(alpha)
    if not np.isfinite(rho) or 2.0 * rho * alpha <= 1.0:
        raise ConfigError(
            "rho", f"q = p^ρ has a power law only when 2ρα > 1; got ρ = {rho}, α = {alpha}"
        )
    return (alpha - 1.0) / (2.0 * rho * alpha)


def threshold_exponent(alpha: float) -> float:
    """Memory exponent of thresholding ``q = 1{x ≤ P}``, ``P ≍ d``: ``E ≍ d^{-(α−1)}``.

    Theorem 1 (PAPER.md §3.2); by Theorem 2 (§3.3) no weighting with random embeddings beats it.
    """
    _check_alpha(alpha)
    return alpha - 1.0


def compute_optimal_dim(n_samples: float | np.ndarray, alpha: float) -> np.ndarray:
    """Capacity worth having for T samples: ``d*(T) ≍ T^{1/α}`` (Proposition 4, PAPER.md §3.4).

    Balances ``d^{-(α−1)}`` against ``T^{-(α−1)/α}`` for empirical thresholding; the constant is
    set to 1 (the theory fixes only the exponent).
    """
    _check_alpha(alpha)
    return np.asarray(n_samples, dtype=np.float64) ** (1.0 / alpha)


def compute_optimal_samples(dim: float | np.ndarray, alpha: float) -> np.ndarray:
    """Data worth having for capacity d: ``T*(d) ≍ d^α`` (Proposition 4, PAPER.md §3.4)."""
    _check_alpha(alpha)
    return np.asarray(dim, dtype=np.float64) ** alpha


def joint_error_shape(
    dim: float | np.ndarray,
    n_samples: float | np.ndarray,
    alpha: float,
    *,
    memory_exponent: float | None = None,
) -> np.ndarray:
    """Constant-free joint law ``d^{-a} + T^{-(α−1)/α}`` (Proposition 4 / Table 1, PAPER.md §3.4).

    ``memory_exponent`` defaults to thresholding, ``a = α − 1``; pass ``power_exponent(α, 1)``
    for ``q = p`` (the first row of Table 1). Broadcasts ``dim`` against ``n_samples``.
    """
    a = threshold_exponent(alpha) if memory_exponent is None else memory_exponent
    d = np.asarray(dim, dtype=np.float64)
    t = np.asarray(n_samples, dtype=np.float64)
    return d ** (-a) + t ** (-data_exponent(alpha))


@dataclass(frozen=True)
class SchemeLaw:
    """Asymptotic law of one scheme: ``E ≍ d^{-dim_exponent} + T^{-data_exponent}``.

    An exponent is ``None`` when the scheme has no power law in that variable (``note`` says
    why). ``optimal_dim_power`` is the exponent c of the compute-optimal ``d*(T) ≍ T^c``.
    """

    scheme: str
    weighting: str
    dim_exponent: float | None
    data_exponent: float | None
    note: str = ""

    @property
    def optimal_dim_power(self) -> float | None:
        if not self.dim_exponent or not self.data_exponent:
            return None
        return self.data_exponent / self.dim_exponent


def table1(alpha: float) -> list[SchemeLaw]:
    """Table 1 of the paper as a function of α (PAPER.md §3): the ``q = p`` row (one large-batch
    gradient step) and the thresholding row (optimal), both with the finite-data term."""
    b = data_exponent(alpha)
    return [
        SchemeLaw("empirical", "q = p (n/T)", power_exponent(alpha, 1.0), b),
        SchemeLaw("empirical_threshold:P=d", "q = 1{x ≤ d}", threshold_exponent(alpha), b),
    ]


def _parse_spec(spec: str) -> tuple[str, dict[str, str]]:
    name, _, rest = spec.partition(":")
    params: dict[str, str] = {}
    for item in filter(None, rest.split(",")):
        key, _, value = item.partition("=")
        params[key.strip().lower()] = value.strip()
    return name.strip().lower().replace("-", "_"), params


def _rho(params: dict[str, str], default: float) -> float:
    try:
        return float(params.get("rho", default))
    except ValueError:
        raise ConfigError("scheme", f"rho must be a number, got {params.get('rho')!r}") from None


def _scaled_threshold(params: dict[str, str]) -> bool:
    return "d" in params.get("p", "d").lower()


def _power_law_or_none(alpha: float, rho: float) -> tuple[float | None, str]:
    if 2.0 * rho * alpha <= 1.0:
        return None, f"2ρα = {2 * rho * alpha:.3g} ≤ 1: outside the validity of Theorem 1"
    return power_exponent(alpha, rho), ""


def scheme_law(spec: str, alpha: float) -> SchemeLaw:
    """Asymptotic law of a scheme given by its spec string (e.g. ``"threshold:P=d/8"``).

    Scheme names are those of :mod:`assocmem.schemes`. Implements the consequences of
    Theorem 1 and Proposition 4 listed in PAPER.md §3: ``q = p^ρ`` (``population:rho=ρ``) →
    ``d^{-(α−1)/(2ρα)}`` when 2ρα > 1; ``q = 1`` → no power law in d; threshold with ``P ∝ d`` →
    ``d^{-(α−1)}``; schemes that learn from T samples add ``T^{-(α−1)/α}`` (Table 1); the
    seen-once scheme overflows (error rises with T once ``T^{1/α} ≳ d``, §3.5), so it has no
    power law in T. ``empirical_threshold`` with ``rho > 0`` weights the stored tokens by
    ``n^ρ``; Theorem 1's retrieval condition then gives ``d^{-(α−1)/max(1, 2ρα)}`` (our
    derivation, not stated in the paper). Unknown names raise :class:`ConfigError`.
    """
    _check_alpha(alpha)
    name, params = _parse_spec(spec)
    b = data_exponent(alpha)
    rho = _rho(params, 0.0 if name == "empirical_threshold" else 1.0)
    if name in ("population", "power"):
        a, note = _power_law_or_none(alpha, rho)
        return SchemeLaw(spec, f"q = p^{rho:g}", a, None, note or "infinite data")
    if name == "uniform":
        return SchemeLaw(spec, "q = 1", None, None, "no power law until d ≈ N")
    if name == "threshold":
        if not _scaled_threshold(params):
            return SchemeLaw(spec, "q = 1{x ≤ P}", None, None, "fixed P: floor, no power law")
        return SchemeLaw(spec, "q = 1{x ≤ P}", threshold_exponent(alpha), None, "P ∝ d")
    if name == "empirical":
        a, note = _power_law_or_none(alpha, rho)
        return SchemeLaw(spec, f"q = n^{rho:g}", a, b, note)
    if name == "seen_once":
        return SchemeLaw(
            spec, "q = 1{n > 0}", None, None, "overflow: error rises with T at fixed d"
        )
    if name == "empirical_threshold":
        weighting = "q = 1{top P seen}" + (f" n^{rho:g}" if rho else "")
        if not _scaled_threshold(params):
            return SchemeLaw(spec, weighting, None, b, "fixed P: no power law in d")
        a = threshold_exponent(alpha) / max(1.0, 2.0 * rho * alpha)
        return SchemeLaw(spec, weighting, a, b, "P ∝ d")
    raise ConfigError("scheme", f"no theory for scheme {spec!r}")


def theory_table(alpha: float, rhos: Sequence[float] = (1.0, 0.75, 0.5)) -> list[SchemeLaw]:
    """Every scheme of PAPER.md §2 with its asymptotic exponents at this α."""
    specs = [f"population:rho={r:g}" for r in rhos] + ["uniform", "threshold:P=d/8"]
    specs += ["empirical", "seen_once", "empirical_threshold:P=d/12"]
    return [scheme_law(spec, alpha) for spec in specs]

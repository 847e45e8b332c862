r"""Asymptotic laws of memory schemes (Cabannes et al. 2024, Theorem 1, Proposition 4, Table 1).

Each scheme class states its own law (:meth:`assocmem.schemes.base.Scheme.law`) from the
exponents below. Sign convention: an *exponent* is the positive ``a`` in :math:`E \asymp x^{-a}`.
"""

from dataclasses import dataclass

import numpy as np

from assocmem.config.errors import ConfigError


@dataclass(frozen=True)
class SchemeLaw:
    r"""The asymptotic law of one scheme:
    :math:`E \asymp d^{-\mathrm{dim\_exponent}} + T^{-\mathrm{data\_exponent}}`.

    Attributes
    ----------
    scheme : str
        The scheme spec.
    weighting : str
        Its q in words (``"q = p"``).
    dim_exponent, data_exponent : float or None
        The positive exponents; None where the scheme has no power law in that variable.
        :attr:`dim_slope` and :attr:`data_slope` are the same laws as log-log slopes (negative),
        as ``assocmem theory`` prints them and as a fit measures them.
    note : str
        Why not, or where the law holds.

    Notes
    -----
    Cabannes et al. (2024), Theorem 1, Proposition 4 and Table 1; see the docs:
    science/theory.md.
    """

    scheme: str
    weighting: str
    dim_exponent: float | None
    data_exponent: float | None
    note: str = ""

    @property
    def dim_slope(self) -> float | None:
        """The log-log slope of the error in d, ``−dim_exponent`` (None: no power law)."""
        return None if self.dim_exponent is None else -self.dim_exponent

    @property
    def data_slope(self) -> float | None:
        """The log-log slope of the error in T, ``−data_exponent`` (None: no power law)."""
        return None if self.data_exponent is None else -self.data_exponent

    @property
    def optimal_dim_power(self) -> float | None:
        if not self.dim_exponent or not self.data_exponent:
            return None
        return self.data_exponent / self.dim_exponent


def check_alpha(alpha: float, *, unbounded: bool = True) -> None:
    r"""Raise :class:`ConfigError` unless α ≥ 0 is finite (α > 1 when ``unbounded``).

    α = 0 is the uniform law over N tokens: the finite-N sums hold (e.g. the finite-data
    error :math:`\sum_x p(x)(1-p(x))^T = (1 - 1/N)^T`), but no exponent does, since every law
    here divides by α or needs :math:`\sum_x p(x)` bounded as N grows (α > 1).
    """
    if not np.isfinite(alpha) or alpha < 0:
        raise ConfigError("alpha", f"must be a finite number ≥ 0 (0: uniform), got {alpha}")
    if unbounded and alpha <= 1:
        raise ConfigError("alpha", f"the asymptotic laws need α > 1 (N unbounded), got {alpha}")


def data_exponent(alpha: float) -> float:
    r"""Finite-data exponent: :math:`\sum p(1-p)^T \asymp T^{-(\alpha -1)/\alpha}` (Hutter 2021; the
    paper's Prop. 1)."""
    check_alpha(alpha)
    return (alpha - 1.0) / alpha


def power_exponent(alpha: float, rho: float) -> float:
    r"""Memory exponent of :math:`q = p^\rho` with infinite data:
    :math:`E \asymp d^{-(\alpha -1)/(2\rho \alpha)}`.

    Theorem 1 of the paper; valid only when :math:`2\rho \alpha > 1` (otherwise the weights of the
    tail dominate the interference and there is no such power law). ρ = 1 is :math:`q = p`.
    """
    check_alpha(alpha)
    if not np.isfinite(rho) or 2.0 * rho * alpha <= 1.0:
        raise ConfigError(
            "rho", f"q = p^ρ has a power law only when 2ρα > 1; got ρ = {rho}, α = {alpha}"
        )
    return (alpha - 1.0) / (2.0 * rho * alpha)


def threshold_exponent(alpha: float) -> float:
    r"""Memory exponent of thresholding :math:`q = \mathbb{1}\{x \le P\}`, :math:`P \asymp d`:
    :math:`E \asymp d^{-(\alpha -1)}`.

    Theorem 1; by Theorem 2 of the paper no weighting with random embeddings beats it.
    """
    check_alpha(alpha)
    return alpha - 1.0


def power_law_or_none(alpha: float, rho: float) -> tuple[float | None, str]:
    r""":func:`power_exponent`, or None and the reason when :math:`2\rho \alpha \le 1`."""
    if 2.0 * rho * alpha <= 1.0:
        return None, f"2ρα = {2 * rho * alpha:.3g} ≤ 1: outside the validity of Theorem 1"
    return power_exponent(alpha, rho), ""

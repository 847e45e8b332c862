r"""The per-token integral of the interference picture: the embedding law a prediction assumes and
the chance that each token is retrieved (:func:`token_success`).

The model and its approximations are described in :mod:`assocmem.analysis.predict`, which sums
these per-token chances into predicted error curves. Here: given the interference :math:`Q_y` of
every class, the M scores are independent Gaussians given the norms ``(r, g_c)``;
:math:`P(\text{wrong} \mid r, g_c)` is a trapezoid rule in the standardised correct score on the
union of the grids :math:`\mu_k + \sigma_k\cdot u` (u ∈ [−8, 8]) of all M scores, and the norms
are integrated by Gauss–Hermite quadrature after the Wilson–Hilferty transform.
"""

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.polynomial.hermite_e import hermegauss
from scipy.special import log_ndtr

from assocmem.config.errors import ConfigError

INPUT_KINDS = ("gaussian", "spherical")


OUTPUT_KINDS = ("gaussian", "spherical", "orthogonal")


GRID = np.linspace(-8.0, 8.0, 41)  # standardised nodes per score (spacing 0.4 σ)


@dataclass(frozen=True)
class EmbeddingLaw:
    r"""The embedding law a prediction assumes.

    Parameters
    ----------
    input_kind : {"gaussian", "spherical"}, default "gaussian"
        The law of the rows e_x: :math:`\mathcal{N}(0, I/d)` or unit rows.
    output_kind : {"gaussian", "spherical", "orthogonal"}, default "spherical"
        The law of the rows u_y.
    output_d_max : int, optional
        If set, spherical u_y are normalised at this d and truncated (the "nested d, truncate"
        convention): their squared norms then have a relative variance ≈ 2/d − 2/d_max.
    n_norm_nodes : int, default 8
        The most quadrature nodes for the norms :math:`|e_x|^2` and :math:`|u_y|^2`.

    Raises
    ------
    ConfigError
        For an unknown kind (fields ``input_embedding``, ``output_embedding``).

    Notes
    -----
    See the docs: science/model.md (embeddings) and science/theory.md (the interference picture
    of Cabannes et al. (2024), Theorem 1).
    """

    input_kind: str = "gaussian"
    output_kind: str = "spherical"
    output_d_max: int | None = None
    n_norm_nodes: int = 8

    def __post_init__(self) -> None:
        if self.input_kind not in INPUT_KINDS:
            raise ConfigError(
                "input_embedding", f"{self.input_kind!r}; allowed: {', '.join(INPUT_KINDS)}"
            )
        if self.output_kind not in OUTPUT_KINDS:
            raise ConfigError(
                "output_embedding", f"{self.output_kind!r}; allowed: {', '.join(OUTPUT_KINDS)}"
            )

    def output_gram_variances(self, dim: int) -> tuple[float, float]:
        r"""``(v_diag, v_off)``: variances of the entries of :math:`G = U U^\top` (unit diagonal
        mean)."""
        if self.output_kind == "orthogonal":
            return 0.0, 0.0
        if self.output_kind == "gaussian":
            return 2.0 / dim, 1.0 / dim
        if self.output_d_max is not None and self.output_d_max > dim:
            return 2.0 / dim - 2.0 / self.output_d_max, 1.0 / dim
        return 0.0, 1.0 / dim

    def norm_nodes(self, dim: int) -> tuple[np.ndarray, np.ndarray]:
        r"""Nodes and weights for :math:`r = |e_x|^2` (:math:`\chi^2_d / d` for Gaussian inputs),
        summing to 1."""
        if self.input_kind == "spherical":
            return np.ones(1), np.ones(1)
        return _scaled_chi2_nodes(2.0 / dim, self.n_norm_nodes)

    def diag_nodes(self, dim: int) -> tuple[np.ndarray, np.ndarray]:
        """Nodes and weights for the correct output's :math:`g_c = |u_c|^2`
        (mean 1, var ``v_diag``)."""
        v_diag, _ = self.output_gram_variances(dim)
        if v_diag <= 0:
            return np.ones(1), np.ones(1)
        return _scaled_chi2_nodes(v_diag, self.n_norm_nodes)


def _scaled_chi2_nodes(variance: float, max_nodes: int) -> tuple[np.ndarray, np.ndarray]:
    r"""Quadrature for :math:`\chi^2_k / k` with :math:`k = 2/\mathrm{variance}`: Wilson–Hilferty
    says :math:`(\chi^2_k/k)^{1/3} \approx \mathcal{N}(1 - 2/(9k), 2/(9k))`; Gauss–Hermite nodes
    over that normal.

    The node count grows with the spread (:math:`1 + \lceil 12\cdot \mathrm{sd}\rceil`, at most
    ``max_nodes``): a narrow law (large d) needs only a few nodes, since the error curve is smooth
    in the effective d.
    """
    n_nodes = min(max_nodes, 1 + math.ceil(12.0 * math.sqrt(variance)))
    nodes, weights = hermegauss(n_nodes)
    spread = np.sqrt(variance / 9.0)  # √(2/(9k))
    cube_root = np.maximum(1.0 - spread**2 + spread * nodes, 1e-3)
    return cube_root**3, weights / weights.sum()


BLOCK_VALUES = 2**21  # (tokens × grid × M) values per block of tokens: 16 MB per temporary


def _success_given_variances(q: np.ndarray, var: np.ndarray, targets: np.ndarray) -> np.ndarray:
    r"""P(correct) for independent scores: correct ``N(q, var_c)``, wrong ``N(0, var_y)``.

    q: (N,); var: (N, M) with the correct class's variance at column ``targets[x]``.
    Integrates over the standardised correct score :math:`u = (s - q)/\sigma_c` on a grid that also
    holds every wrong score's nodes mapped into u, so all scales are resolved and no gap exceeds the
    base spacing. Tokens are integrated in blocks of :data:`BLOCK_VALUES` (each token's
    integral is its own: the same numbers, in memory bounded whatever N; at N = 10⁶ and M = 5
    one array for all tokens would be 10 GB).
    """
    m = var.shape[1]
    block = max(1, BLOCK_VALUES // (GRID.size * (m + 1) * m))
    parts = [
        _success_block(q[i : i + block], var[i : i + block], targets[i : i + block])
        for i in range(0, var.shape[0], block)
    ]
    return np.concatenate(parts) if parts else np.zeros(0)


def _success_block(q: np.ndarray, var: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """:func:`_success_given_variances` for one block of tokens."""
    n_tokens = var.shape[0]
    rows = np.arange(n_tokens)
    scale = np.sqrt(var + 1e-30 + 1e-24 * q[:, None] ** 2)  # (N, M); floor avoids 0/0 ties
    sigma_c = scale[rows, targets][:, None]  # (N, 1)
    mapped = (scale[:, :, None] * GRID - q[:, None, None]) / sigma_c[:, :, None]  # (N, M, G)
    u = np.concatenate(
        [np.broadcast_to(GRID, (n_tokens, GRID.size)), mapped.reshape(n_tokens, -1)], 1
    )
    u = np.sort(np.clip(u, GRID[0], GRID[-1]), axis=1)  # (N, K)
    s = q[:, None] + sigma_c * u
    log_cdf = log_ndtr(s[:, :, None] / scale[:, None, :])  # (N, K, M)
    log_cdf[rows, :, targets] = 0.0  # the correct output does not compete with itself
    # Integrate the *failure* density φ(u)·(1 − Π Φ): quadrature errors stay relative to the
    # (often tiny) error instead of to the unit mass of φ.
    integrand = np.exp(-0.5 * u**2) / np.sqrt(2 * np.pi) * -np.expm1(log_cdf.sum(axis=2))
    success: np.ndarray = 1.0 - np.clip(np.trapezoid(integrand, u, axis=1), 0.0, 1.0)
    return success


def token_success(
    q: np.ndarray,
    targets: np.ndarray,
    n_outputs: int,
    dim: int,
    law: EmbeddingLaw,
    extra: np.ndarray | None = None,
) -> np.ndarray:
    """Predicted probability that each token is retrieved at dimension d, shape (N,).

    Tokens sharing a class and a weight have the same prediction, so the integral runs once per
    distinct :math:`(f^*(x), q(x))` pair (a few for thresholds, N for :math:`q = p`). ``extra``
    (M,), if given, is added to each class's interference ``Q_y`` (e.g. the associations that edits
    of the memory add: :mod:`assocmem.analysis.edit_theory`); the totals stay ≥ 0.
    """
    totals = np.bincount(targets, weights=q**2, minlength=n_outputs)  # (M,) Σ_{class} q²
    if extra is not None:
        totals = np.maximum(totals + np.asarray(extra, dtype=np.float64), 0.0)
    # the distinct (f*(x), q(x)) pairs, sorted by (target, q), by hashing (pandas.factorize
    # sorts only the distinct values; a row-wise np.unique sorts all N pairs: 30 times slower
    # at N = 3·10⁵, and the same pairs in the same order)
    q_index, values = pd.factorize(q, sort=True)
    inverse, pairs = pd.factorize(targets * values.size + q_index, sort=True)
    u_target, u_q = pairs // values.size, values[pairs % values.size]  # (U,)
    rows = np.arange(u_q.size)
    interference = np.broadcast_to(totals, (u_q.size, n_outputs)).copy()  # Q[x, y], x excluded
    interference[rows, u_target] = np.maximum(interference[rows, u_target] - u_q**2, 0.0)
    others = interference.sum(axis=1, keepdims=True)
    v_diag, v_off = law.output_gram_variances(dim)
    success = np.zeros(u_q.size)
    g_nodes, g_weights = law.diag_nodes(dim)
    for r, r_weight in zip(*law.norm_nodes(dim), strict=True):
        noise = interference / (r * dim)
        own = noise[rows, u_target]
        # third-party leakage only: G_{yc} multiplies both Z_c in s_y and Z_y in s_c, so it
        # rescales the margin s_c − s_y by (1 − G_{yc}) and cannot flip it (G symmetric)
        var = (1 + v_diag) * noise + v_off * (others / (r * dim) - noise - own[:, None])
        leak = v_off * (others[:, 0] / (r * dim) - own)
        for g, g_weight in zip(g_nodes, g_weights, strict=True):
            var[rows, u_target] = g**2 * own + leak
            success += r_weight * g_weight * _success_given_variances(g * u_q, var, u_target)
    return success[inverse.reshape(-1)]

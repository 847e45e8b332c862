r"""What an edit costs the other facts: the interference theory of rank-one edits.

The memory :math:`W = \sum_x \sum_y A[x, y] u_y e_x^\top` (closed-form: :math:`A[x, f^*(x)] = q(x)`)
answers token x' through its scores :math:`u_y^\top W e_{x'}`; every stored pair (x, y) with x ≠ x'
adds interference :math:`A[x, y] e_x\cdot e_{x'} \approx \mathcal{N}(0, A[x, y]^2/d)` to class y, so
what decides x' is its signal against the class totals :math:`Q_y = \sum_x A[x, y]^2` (Theorem 1 of
Cabannes et al. 2024; the Gaussian prediction of :mod:`assocmem.analysis.predict`). An edit with key
:math:`k = e_x` (:math:`C = I`) only rewrites row x of A:

- ``replace`` moves ``q(x)`` from class y₀ to class y₁: the totals are conserved (a relabelled
  memory), so the expected damage to the other tokens is zero;
- ``rome`` adds :math:`\lambda (u_{y_1} - u_{y_0}) e_x^\top`: row x becomes :math:`q - \lambda` in
  class y₀ and λ in y₁, so the totals change by :math:`\lambda^2 + (q - \lambda)^2 - q^2`. λ is the
  smallest value making y₁ win by the margin m: with the token's scores Gaussian
  (:math:`s_{y_0} = q + \sigma \zeta_0`, :math:`s_y = \sigma \zeta_y`, σ² = Q̄/d, unit
  near-orthogonal outputs, so the directions reach y₀ with 2 and the others with 1),
  :math:`\lambda = \max(0, (m - s_1 + s_0)/2, \max_{y \notin \{y_0, y_1\}} (m - s_1 + s_y))`. A
  token the memory did not store (q ≈ 0) costs :math:`2\mathbb{E}[\lambda^2] \propto \sigma^2`: an
  edit is a new association of weight ≈ σ.

Since the cost of each edit grows with the interference it meets, the class total obeys
:math:`\bar{Q} (k+1) = \bar{Q} (k) + \mathbb{E}[\lambda^2 + (q - \lambda)^2 - q^2] / M` (the edited
tokens uniform over a rank band); the predicted error of the other tokens after k edits is the
Gaussian prediction with every class total raised by :math:`\bar{Q} (k) - \bar{Q} (0)`, and the
predicted edit capacity is the first k at which it exceeds ``(1 + rise)`` times its value before the
edits. For an unstored edit :math:`\mathbb{E}[\lambda^2] = \kappa \sigma^2` with κ depending on μ =
m/σ and M only, so :math:`\bar{Q} (k) \approx \bar{Q} (0) \exp(2\kappa k/(M d))`: the damage is a
function of k/d, and the capacity is :math:`k^* = (M d / 2\kappa) \log(1 + \varepsilon^*)` where ε*
is the relative rise of the interference that raises the error by 10 % (docs: beyond/editing.md).

Where M ≫ d (the facts study's M = N) two assumptions of the value's model fail: the edited
token's wrong scores sit on the few classes that hold stored facts and leak to the others
through :math:`u_y \cdot u_{y'}`, and some output is nearly collinear with the new answer, so
λ is larger than this model's and heavy-tailed. :func:`edit_value_draws` samples λ with both
(measured against real ROME edits in the tests; docs: beyond/facts.md); the capacity there is
not predicted by this mean-field recursion.
"""

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.polynomial.hermite_e import hermegauss
from scipy.special import ndtr

from assocmem.analysis.large_m import token_success_large_m
from assocmem.analysis.predict import EmbeddingLaw, scheme_weights, token_success
from assocmem.config.errors import ConfigError
from assocmem.laws.tokens import mod_targets, zipf_probabilities

NODES, WEIGHTS = hermegauss(24)  # the new target's standardised score ζ₁
WEIGHTS = WEIGHTS / WEIGHTS.sum()
STEPS = 120  # trapezoid points of λ's survival function over [0, top] ...
FINE = 60  # ... and across each of its two steps
SIGMA_GRID = 24  # σ values at which the cost of an edit is tabulated (log-spaced)
REPRESENTATIVES = 64  # edited weights: the band's quantiles (each edit draws one uniformly)
# above this M the other tokens' error is integrated by the large-M quadrature (analysis/large_m.py:
# seconds at M = N = 1000), at or below it by predict.py's union grid (O(N·M²) a node: minutes
# at M = 50); the two agree within 1.5e-3 where both run (tests/test_editing.py)
LARGE_M = 20


def edit_value_moments(
    q: np.ndarray, margin: float, sigma: float, n_outputs: int
) -> tuple[np.ndarray, np.ndarray]:
    r""":math:`\mathbb{E}[\lambda]` and :math:`\mathbb{E}[\lambda^2]` of the ROME value of an edit
    of a token with stored weight q.

    Model: the token's scores :math:`s_{y_0} = q + \sigma \zeta_0` and :math:`s_y = \sigma \zeta_y`
    for the M − 1 others (ζ i.i.d. N(0, 1));
    :math:`\lambda = \max(0, (m - s_1 + s_0)/2, \max_{y \notin \{y_0, y_1\}} (m - s_1 + s_y))`. Its
    survival function given ζ₁ is a product of normal CDFs, integrated over λ by the trapezoid rule
    and over ζ₁ by Gauss–Hermite quadrature.

    Parameters
    ----------
    q : numpy.ndarray, shape (K,)
        The stored weights of the edited tokens.
    margin, sigma : float
        m and the score noise σ.
    n_outputs : int
        M (≥ 3).

    Returns
    -------
    (numpy.ndarray, numpy.ndarray), shapes (K,) each
        :math:`\mathbb{E}[\lambda]` and :math:`\mathbb{E}[\lambda^2]`.
    """
    q = np.asarray(q, dtype=np.float64)
    top = np.maximum(q, 0.0) + margin + 10.0 * sigma  # λ beyond this: below 1e-20
    # A coarse grid over [0, top] and fine ones across the two steps of P(λ ≤ t): where the
    # old target (t ≈ (m + q)/2) and the other outputs (t ≈ m) stop binding, ±8σ wide.
    fine = sigma * np.linspace(-8.0, 8.0, FINE)
    grid = np.concatenate(
        [
            np.linspace(0.0, 1.0, STEPS)[None, :] * top[:, None],
            (margin + q[:, None]) / 2 + fine[None, :],
            np.full((len(q), 1), margin) + fine[None, :],
        ],
        axis=1,
    )
    t = np.sort(np.clip(grid, 0.0, top[:, None]), axis=1)[:, :, None]  # (K, T, 1)
    z = NODES[None, None, :]  # ζ₁
    below_old = ndtr((2.0 * t - margin + sigma * z - q[:, None, None]) / sigma)
    below_rest = ndtr((t - margin + sigma * z) / sigma) ** (n_outputs - 2)
    survival = 1.0 - (below_old * below_rest) @ WEIGHTS  # (K, T): P(λ > t)
    grid = t[:, :, 0]
    mean = np.trapezoid(survival, grid, axis=1)
    square = np.trapezoid(2.0 * grid * survival, grid, axis=1)
    return mean, square


@dataclass(frozen=True)
class EditPrediction:
    r"""The predicted effect of k ROME edits (:math:`C = I`) on a closed-form memory at one d.

    Attributes
    ----------
    ks : numpy.ndarray of int, shape (K,)
        Numbers of edits.
    interference : numpy.ndarray, shape (K,)
        The predicted rise of each class's interference total :math:`\bar{Q} (k) - \bar{Q} (0)`.
    error : numpy.ndarray, shape (K,)
        The predicted error of the other tokens after k edits (k = 0: the memory's).
    capacity : float
        The predicted edit capacity (inf if the error never rises by ``rise``).
    """

    ks: np.ndarray
    interference: np.ndarray
    error: np.ndarray
    capacity: float

    @property
    def damage(self) -> np.ndarray:
        """The predicted change of the other tokens' error, (K,)."""
        result: np.ndarray = self.error - self.error[0]
        return result


def interference_growth(
    q_edited: np.ndarray, q: np.ndarray, n_outputs: int, dim: int, margin: float, steps: int
) -> np.ndarray:
    r""":math:`\bar{Q} (k) - \bar{Q} (0)` for k = 0 … steps: the recursion of the module docstring.

    q_edited: weights of the band's tokens (each edit draws one uniformly), represented by
    :data:`REPRESENTATIVES` quantiles; q: all N weights; margin: m in score units."""
    total = float(np.sum(q**2)) / n_outputs  # Q̄(0)
    levels = (np.arange(REPRESENTATIVES) + 0.5) / REPRESENTATIVES
    q_edited = np.quantile(np.asarray(q_edited, dtype=np.float64), levels, method="inverted_cdf")
    # the moments once per distinct weight (a threshold memory's band holds two), then per
    # representative: each weight's moments are computed alone, so the same numbers
    distinct, index = np.unique(q_edited, return_inverse=True)
    sigmas = np.sqrt(total / dim) * np.geomspace(1.0, 20.0, SIGMA_GRID)
    cost = np.empty(SIGMA_GRID)  # E[λ² + (q − λ)² − q²] over the band, per σ
    for i, sigma in enumerate(sigmas):
        mean, square = (v[index] for v in edit_value_moments(distinct, margin, sigma, n_outputs))
        cost[i] = float(np.mean(2.0 * square - 2.0 * q_edited * mean))
    rise = np.zeros(steps + 1)
    for k in range(steps):
        sigma = np.sqrt(max(total + rise[k], 0.0) / dim)
        step = np.interp(np.log(sigma), np.log(sigmas), cost)
        rise[k + 1] = rise[k] + step / n_outputs
    return rise


def predict_edits(
    probs: np.ndarray,
    targets: np.ndarray,
    q: np.ndarray,
    dim: int,
    n_outputs: int,
    *,
    method: str = "rome",
    margin: float = 1.0,
    ks: Sequence[int] = (1, 2, 4, 8, 16, 32, 64),
    band: tuple[int, int] | None = None,
    rise: float = 0.1,
    max_edits: int = 512,
    law: EmbeddingLaw | None = None,
    large_m: bool | None = None,
) -> EditPrediction:
    r"""The predicted error of the other tokens after k edits, and the edit capacity.

    Parameters
    ----------
    probs, targets, q : numpy.ndarray, shape (N,)
        p (decreasing), f*(x) and the weights of ``W_q``.
    dim, n_outputs : int
        d and M.
    method : {"rome", "replace"}, default "rome"
        ROME edits with key covariance :math:`C = I`, or the closed-form replacement (no change
        of the interference in expectation).
    margin : float, default 1.0
        μ: the margin in units of the memory's score noise
        :math:`\sigma^2 = \bar{Q} /d + \operatorname{mean}(q^2)/d` (the spread of a token's wrong
        scores, as :meth:`EditableMemory.noise` measures it).
    ks : sequence of int
        The numbers of edits predicted.
    band : (int, int), optional
        The frequency ranks of the edited tokens (1-based, inclusive); default all N.
    rise, max_edits : float, int
        The capacity: the first k ≤ max_edits whose error exceeds ``(1 + rise)`` × the error
        before the edits.
    law : EmbeddingLaw, optional
        Default: Gaussian E, spherical U (the study's).
    large_m : bool, optional
        Integrate the other tokens' error by the large-M quadrature
        (:func:`~assocmem.analysis.large_m.token_success_large_m`) rather than predict.py's
        union grid; default: where M > :data:`LARGE_M` (the same model either way).

    Returns
    -------
    EditPrediction

    Notes
    -----
    The interference picture of Cabannes et al. (2024), Theorem 1, applied to the rank-one
    edits of ROME (Meng et al. 2022); see the docs: beyond/editing.md.
    """
    if method not in ("rome", "replace"):
        raise ConfigError("method", f'must be "rome" or "replace", got {method!r}')
    if not ks:
        raise ConfigError("ks", "give at least one number of edits")
    law = law or EmbeddingLaw()
    n = len(probs)
    low, high = band or (1, n)
    sigma = np.sqrt((float(np.sum(q**2)) / n_outputs + float(np.mean(q**2))) / dim)
    steps = max(max(ks), max_edits)
    if method == "replace":
        growth = np.zeros(steps + 1)
    else:
        growth = interference_growth(q[low - 1 : high], q, n_outputs, dim, margin * sigma, steps)

    grouped = n_outputs > LARGE_M if large_m is None else large_m

    @functools.cache
    def error(level: float) -> float:
        """The other tokens' error with every class total raised by ``level``."""
        extra = np.full(n_outputs, level)
        if grouped:
            success = token_success_large_m(q, targets, n_outputs, dim, law, extra=extra)
        else:
            success = token_success(q, targets, n_outputs, dim, law, extra)
        return float(probs @ (1.0 - success))

    grid = np.array([0, *ks])
    errors = np.array([error(float(growth[k])) for k in grid])
    capacity = _first_rise(growth[: max_edits + 1], error, errors[0] * (1 + rise))
    return EditPrediction(grid, growth[grid], errors, capacity)


def edit_value_draws(
    q: np.ndarray,
    targets: np.ndarray,
    n_outputs: int,
    dim: int,
    *,
    margin: float = 1.0,
    draws: int = 400,
    seed: int = 0,
    law: EmbeddingLaw | None = None,
) -> np.ndarray:
    r"""Draws of the ROME value λ of one edit (C = I) of a uniformly drawn token to a uniformly
    drawn other output, in a model that keeps what :func:`edit_value_moments` neglects at
    M ≫ d: the output Gram and the classes' unequal interference.

    The edited token x (weight q, class c) has wrong scores
    :math:`s_y \sim \mathcal{N}(0, \sigma_y^2)` independent, with
    :math:`d \sigma_y^2 = (1 + v_{\mathrm{diag}}) Q_y + v_{\mathrm{off}} (Q - Q_y)` (its class
    :math:`Q_y = \sum_{x' \in y} q(x')^2` and the leak of every other class through
    :math:`u_y \cdot u_{y'}`, x itself left out), and :math:`s_c = q + \sigma_c \zeta`. Each
    output y is passed at the rate :math:`c_y = (u_{y_1} - u_y) \cdot (u_{y_1} - u_c)`, drawn
    with the Gram entries :math:`u_y \cdot u_{y'} \sim \mathcal{N}(0, v_{\mathrm{off}})` and
    :math:`|u_y|^2 \sim 1 + \mathcal{N}(0, v_{\mathrm{diag}})`;
    :math:`\lambda = \max(0, \max_{y \ne y_1, c_y > 0} (m - s_{y_1} + s_y)/c_y)` as
    the editing study's ROME computes it (``edit_value``; an output with
    :math:`c_y \le 0` cannot be passed and is left out). The margin m is ``margin`` times the
    memory's noise :math:`\sqrt{\operatorname{mean}_y \sigma_y^2}`. At M = 5 it is the model of
    :func:`edit_value_moments` up to O(1/d); at M = N ≫ d the wrong scores concentrate on the
    stored classes and some output is nearly collinear with y₁ (:math:`c_y` near 0), so λ is
    larger and heavy-tailed (docs: beyond/facts.md).

    Parameters
    ----------
    q, targets : numpy.ndarray, shape (N,)
        The memory's weights and f*(x) in [0, M).
    n_outputs, dim : int
        M and d.
    margin : float, default 1.0
        In units of the memory's noise.
    draws, seed : int
        Edits drawn, and the seed of their numpy generator.
    law : EmbeddingLaw, optional
        Default: Gaussian E, spherical U (the editing study's).

    Returns
    -------
    numpy.ndarray, shape (draws,)
    """
    law = law or EmbeddingLaw()
    v_diag, v_off = law.output_gram_variances(dim)
    totals = np.bincount(targets, weights=q**2, minlength=n_outputs)
    variance = ((1 + v_diag) * totals + v_off * (totals.sum() - totals)) / dim  # (M,)
    m = margin * float(np.sqrt(variance.mean()))
    gen = np.random.default_rng(seed)
    out = np.empty(draws)
    for i in range(draws):
        x = int(gen.integers(q.size))
        old = int(targets[x])
        new = (old + 1 + int(gen.integers(n_outputs - 1))) % n_outputs
        own = variance.copy()
        own[old] = max(own[old] - (1 + v_diag - v_off) * q[x] ** 2 / dim, 0.0)  # x left out
        scores = gen.normal(0.0, np.sqrt(own))
        scores[old] += q[x]
        g_new, g_old = gen.normal(0.0, np.sqrt(v_off), (2, n_outputs))  # u_y·u_new, u_y·u_old
        norm_new, norm_old = 1.0 + gen.normal(0.0, np.sqrt(v_diag), 2)
        g_old[new] = g_new[old]  # u_new·u_old, one entry
        reach = norm_new - g_old[new] - g_new + g_old  # c_y for y ∉ {new, old}
        reach[old] = norm_new + norm_old - 2 * g_old[new]
        passable = reach > 0
        passable[new] = False
        need = (m - scores[new] + scores[passable]) / reach[passable]
        out[i] = max(0.0, float(need.max(initial=0.0)))
    return out


@functools.cache
def predict_scheme_edits(
    scheme: str,
    alpha: float,
    n_inputs: int,
    dim: int,
    n_outputs: int,
    *,
    margin: float = 1.0,
    method: str = "rome",
    ks: tuple[int, ...] = (1, 2, 4, 8, 16, 32, 64),
    rise: float = 0.1,
    max_edits: int = 512,
) -> EditPrediction:
    r""":func:`predict_edits` for the closed-form memory of a scheme (:mod:`assocmem.schemes`) at
    infinite data: p Zipf(α) over N tokens (α = 0: uniform), :math:`f^*(x) = x \bmod M`, q the
    scheme's weights at d (the editing study's memories, at M = 5 and at M = N). Cached: a call
    takes a second at M = 5 and a few at M = N = 1000; the search stops at
    ``min(max_edits, N − 1)`` edits (one token is left unedited)."""
    probs = zipf_probabilities(n_inputs, alpha).double().numpy()
    targets = mod_targets(n_inputs, n_outputs).numpy()
    q = scheme_weights(scheme, probs, [dim])[0]
    return predict_edits(
        probs, targets, q, dim, n_outputs, method=method, margin=margin, ks=ks, rise=rise,
        max_edits=min(max_edits, n_inputs - 1),
    )  # fmt: skip


def _first_rise(growth: np.ndarray, error: Callable[[float], float], threshold: float) -> float:
    """The first k ≥ 1 with ``error(growth[k]) > threshold``, inf if none: a binary search over
    the sorted rises (the error increases with the interference rise), so about log₂ K
    evaluations of the error, each exact (no interpolation between rises)."""
    levels = np.unique(growth[1:])
    if not levels.size or error(float(levels[-1])) <= threshold:
        return float("inf")
    low, high = -1, levels.size - 1  # error(levels[high]) > threshold; levels[low] is not
    while high - low > 1:
        middle = (low + high) // 2
        if error(float(levels[middle])) > threshold:
            high = middle
        else:
            low = middle
    return float(np.argmax(growth[1:] >= levels[high]) + 1)


__all__ = [
    "LARGE_M",
    "EditPrediction",
    "edit_value_moments",
    "interference_growth",
    "predict_edits",
]

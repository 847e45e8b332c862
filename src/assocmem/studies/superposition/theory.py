r"""Parallel memories (heads): parameter budgets and the signal-to-noise theory of summed heads.

Budgets: H heads of dimension d_h against one memory of dimension d (docs:
beyond/superposition.md), each head with its own input (N×d_h) and output (M×d_h) embeddings
and its own d_h×d_h matrix:

- ``width``: equal total width, :math:`H\cdot d_h = d`;
- ``matrix``: equal matrix parameters, :math:`H\cdot d_h^2 = d^2`, so
  :math:`d_h = \operatorname{round}(d/\sqrt{H})`;
- ``total``: equal parameters counting the embeddings,
  :math:`H\cdot (d_h^2 + (N+M)\cdot d_h) = d^2 + (N+M)\cdot d`, solved for d_h and rounded.

d_h is rounded to an integer ≥ 1; :func:`heads_parameter_counts` gives the actual counts.

Theory. Head h scores :math:`s_h(x, y) = \sum_{x'} q_h(x') G^h_{y f^*(x')} (e^h_{x'}\cdot e^h_x)`
with :math:`G^h = U_h U_h^\top`. Given x, the own-class sum of head h is Gaussian with mean
:math:`q_h(x) |e^h_x|^2` and variance :math:`|e^h_x|^2 Q^h_y / d_h`,
:math:`Q^h_y = \sum_{x' \ne x, f^*(x') = y} q_h(x')^2` (Cabannes et al. (2024), Theorem 1, per
head), and heads are independent. Summing H heads therefore adds the signals of the heads that store
x and the interference variances of *all* heads:

- ``same`` (q in every head): signal :math:`H\cdot q(x)`, variance :math:`H\cdot Q_y/d_h`: the
  signal-to-noise ratio of one memory of width :math:`D = H\cdot d_h` (the mean of H independent
  :math:`\chi^2_{d_h}/d_h` norms is :math:`\chi^2_D/D`, as for one memory of width D). Only the
  cross-class leak through the off-diagonal of each :math:`G^h` (variance :math:`1/d_h`, not
  :math:`1/D`) is larger;
- ``band``, ``random`` (x stored in one head, scores summed): signal ``q(x)``, variance
  :math:`\sum_h Q^h_y/d_h = Q_y/d_h` whatever the routing: one memory of width ``d_h`` holding every
  token — an H-fold loss of signal-to-noise against ``same``;
- ``band-gated``, ``random-gated`` (x read from its own head only): one memory of width d_h
  holding the head's share, so each token meets only its share's interference :math:`Q^h_y`.

Each case is a single memory whose retrieval probabilities :func:`retrieval_probability`
predicts (the Gaussian-score model of :func:`assocmem.analysis.predict.token_success`, integrated
over the correct score and the input norm); the predicted error is
:math:`\sum_x p(x)(1 - P(x \text{ retrieved}))`. Neglected, besides what that prediction neglects:
in the summed routed cases, the norm of the other heads' query embeddings (taken equal to the
own head's), and heads that store nothing (exact ties, always wrong, in the measurement).
"""

import functools
import math
from dataclasses import dataclass

import numpy as np
from numpy.polynomial.hermite_e import hermegauss
from scipy.special import log_ndtr

from assocmem.analysis.predict import EmbeddingLaw
from assocmem.config.errors import ConfigError, unknown_name
from assocmem.laws.tokens import mod_targets, zipf_probabilities
from assocmem.studies.superposition.memory import (
    ARRANGEMENTS,
    GATED,
    band_route,
    scheme_weights,
    trial_route,
)

BUDGETS = ("width", "matrix", "total")
BUDGET_RULES = {
    "width": "H·d_h = d",
    "matrix": "H·d_h² = d²",
    "total": "H·(d_h² + (N+M)·d_h) = d² + (N+M)·d",
}


def budget_head_dim(dim: int, heads: int, budget: str, n_inputs: int, n_outputs: int) -> int:
    r"""The dimension d_h of each of H heads matching one memory of dimension d under a budget.

    Parameters
    ----------
    dim : int
        d, the single memory's dimension.
    heads : int
        H ≥ 1.
    budget : {"width", "matrix", "total"}
        :math:`H\cdot d_h = d`; :math:`H\cdot d_h^2 = d^2`; or
        :math:`H\cdot (d_h^2 + (N+M)\cdot d_h) = d^2 + (N+M)\cdot d`.
    n_inputs, n_outputs : int
        N and M (the embeddings' rows, for ``"total"``).

    Returns
    -------
    int
        d_h rounded to the nearest integer, at least 1 (``d`` itself when H = 1).

    Raises
    ------
    ConfigError
        For an unknown budget.
    """
    if budget not in BUDGETS:
        raise unknown_name("budgets", "budget", budget, BUDGETS)
    if heads == 1:
        return dim
    if budget == "width":
        exact = dim / heads
    elif budget == "matrix":
        exact = dim / math.sqrt(heads)
    else:
        rows = n_inputs + n_outputs
        total = (dim * dim + rows * dim) / heads  # d_h² + rows·d_h = total
        exact = (-rows + math.sqrt(rows * rows + 4 * total)) / 2
    return max(1, round(exact))


@dataclass(frozen=True)
class ParameterCounts:
    r"""The actual sizes of H heads of dimension d_h (N inputs, M outputs).

    Attributes
    ----------
    width : int
        :math:`H\cdot d_h`.
    matrix : int
        :math:`H\cdot d_h^2`: the entries of the H memory matrices.
    embeddings : int
        :math:`H\cdot (N+M)\cdot d_h`: the entries of the H pairs of embeddings.
    total : int
        ``matrix + embeddings``.
    """

    width: int
    matrix: int
    embeddings: int
    total: int


def heads_parameter_counts(
    heads: int, head_dim: int, n_inputs: int, n_outputs: int
) -> ParameterCounts:
    """The actual sizes of H heads of dimension d_h.

    Parameters
    ----------
    heads, head_dim : int
        H and d_h.
    n_inputs, n_outputs : int
        N and M (the rows of each head's input and output embeddings).

    Returns
    -------
    ParameterCounts
        ``width`` H·d_h, ``matrix`` H·d_h², ``embeddings`` H·(N+M)·d_h and ``total``.
    """
    matrix = heads * head_dim**2
    embeddings = heads * (n_inputs + n_outputs) * head_dim
    return ParameterCounts(heads * head_dim, matrix, embeddings, matrix + embeddings)


QUADRATURE = 16  # Gauss–Hermite nodes over the correct score
NORMS = EmbeddingLaw("gaussian", n_norm_nodes=4)  # nodes of r = |e_x|² ~ χ²_d/d (at most 4)


def retrieval_probability(
    q: np.ndarray,
    targets: np.ndarray,
    n_outputs: int,
    dim: int,
    leak: float,
    tokens: np.ndarray | None = None,
) -> np.ndarray:
    r"""P(x retrieved) in one memory of width d storing q, Gaussian inputs and unit output rows.

    Given :math:`r = |e_x|^2` the correct score is :math:`\mathcal{N}(q(x), \sigma_c^2)` and a wrong
    score y is :math:`\mathcal{N}(0, \sigma_y^2)`, independent given the correct one, with (as in
    :func:`assocmem.analysis.predict.token_success`, whose model this is)

    .. math::

        \sigma_c^2 &= (Q_c + \mathrm{leak} \sum_{y' \ne c} Q_{y'}) / (r d), \\
        \sigma_y^2 &= (Q_y + \mathrm{leak} \sum_{y' \notin \{c, y\}} Q_{y'}) / (r d),

    :math:`Q_y = \sum_{x' \ne x, f^*(x') = y} q(x')^2`, and ``leak`` the variance of an off-diagonal
    entry of :math:`U U^\top` (1/d for unit rows).
    :math:`P = \mathbb{E}_r \mathbb{E}_u[\prod_{y \ne c} \Phi((q + \sigma_c u)/\sigma_y)]`: u by
    Gauss–Hermite quadrature (:data:`QUADRATURE` nodes), r over the :math:`\chi^2_d/d` nodes of
    :meth:`~assocmem.analysis.predict.EmbeddingLaw.norm_nodes` (:data:`NORMS`). A vectorised form of
    the same prediction (a coarser quadrature than ``token_success``'s, for speed; the tests compare
    them).

    Parameters
    ----------
    q : numpy.ndarray, shape (N,)
        The weights stored (≥ 0).
    targets : numpy.ndarray of int, shape (N,)
    n_outputs : int
        M.
    dim : int
        The memory's width d.
    leak : float
        The variance of an off-diagonal entry of :math:`U U^\top`.
    tokens : numpy.ndarray of int, optional
        The tokens to evaluate (default all).

    Returns
    -------
    numpy.ndarray, shape (len(tokens),)
    """
    x = np.arange(q.size) if tokens is None else np.asarray(tokens)
    # Tokens of one class and one weight have one prediction: evaluate each pair once.
    keys, inverse = np.unique(np.stack([targets[x], q[x]], 1), axis=0, return_inverse=True)
    c, qx = keys[:, 0].astype(np.int64), keys[:, 1]
    rows = np.arange(c.size)
    interference = np.broadcast_to(np.bincount(targets, q**2, n_outputs), (c.size, n_outputs))
    interference = interference.copy()
    interference[rows, c] = np.maximum(interference[rows, c] - qx**2, 0.0)
    own = interference[rows, c][:, None]
    others = interference.sum(1, keepdims=True)
    var_y = interference + leak * (others - interference - own) + 1e-30
    var_c = own + leak * (others - own) + 1e-30
    u, u_weights = hermegauss(QUADRATURE)
    u_weights = u_weights / u_weights.sum()
    success = np.zeros(c.size)
    for r, r_weight in zip(*NORMS.norm_nodes(dim), strict=True):
        scale = math.sqrt(r * dim)  # scores in units of 1/√(r d)
        correct = qx[:, None] * scale + np.sqrt(var_c) * u[None, :]  # (K, U)
        log_cdf = log_ndtr(correct[:, :, None] / np.sqrt(var_y)[:, None, :])  # (K, U, M)
        log_cdf[rows, :, c] = 0.0  # the correct output does not compete with itself
        failure = -np.expm1(log_cdf.sum(2)) @ u_weights
        success += r_weight * (1.0 - failure)
    return success[inverse.reshape(-1)]


@functools.cache
def _problem(n_inputs: int, n_outputs: int, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    probs = zipf_probabilities(n_inputs, alpha).numpy()
    return probs, mod_targets(n_inputs, n_outputs).numpy()


Prediction = tuple[float, float]  # (expected error, its per-trial standard deviation)


def _moments(probs: np.ndarray, success: np.ndarray) -> Prediction:
    r""":math:`\sum p (1 - s)` and :math:`\sqrt{\sum p^2 s (1 - s)}`: the error's mean and its
    spread over trials if tokens failed independently (a floor on the spread: rare failures of
    frequent tokens dominate it, and a few trials can miss them all)."""
    return float(probs @ (1 - success)), float(np.sqrt(probs**2 @ (success * (1 - success))))


@functools.cache
def _single(
    n_inputs: int, n_outputs: int, alpha: float, scheme: str, width: int, dim: int, leak_dim: int
) -> Prediction:
    """One memory of width ``dim`` storing the scheme at d = ``width``, its output Gram's
    off-diagonal of variance ``1/leak_dim``."""
    import torch

    probs, targets = _problem(n_inputs, n_outputs, alpha)
    q = scheme_weights(scheme, torch.from_numpy(probs), width).numpy()
    return _moments(probs, retrieval_probability(q, targets, n_outputs, dim, 1.0 / leak_dim))


@functools.cache
def _prediction(
    n_inputs: int,
    n_outputs: int,
    alpha: float,
    scheme: str,
    arrangement: str,
    heads: int,
    head_dim: int,
    seed: int,
    n_draws: int,
) -> Prediction:
    if arrangement not in ARRANGEMENTS:
        raise ConfigError("arrangement", f"unknown {arrangement!r}; allowed: {ARRANGEMENTS}")
    import torch

    width = heads * head_dim
    if arrangement == "same":  # one memory of width H·d_h, with each head's leak
        return _single(n_inputs, n_outputs, alpha, scheme, width, width, head_dim)
    if arrangement not in GATED:  # summed routed heads: one memory of width d_h holding all of q
        return _single(n_inputs, n_outputs, alpha, scheme, width, head_dim, head_dim)
    probs, targets = _problem(n_inputs, n_outputs, alpha)
    q_t = scheme_weights(scheme, torch.from_numpy(probs), width)
    q, leak = q_t.numpy(), 1.0 / head_dim  # each head's output rows are unit vectors in R^{d_h}
    if GATED[arrangement] == "band":
        shares = [band_route(q_t, torch.from_numpy(probs), heads).numpy()]
    else:
        shares = [trial_route(seed, t, n_inputs, heads).numpy() for t in range(n_draws)]
    moments = []
    for route in shares:
        success = np.zeros(n_inputs)
        for h in range(heads):
            mine = np.flatnonzero(route == h)
            if mine.size:  # one memory of width d_h holding the share
                stored = np.where(route == h, q, 0.0)
                success[mine] = retrieval_probability(
                    stored, targets, n_outputs, head_dim, leak, tokens=mine
                )
        moments.append(_moments(probs, success))
    mean, spread = np.mean(moments, axis=0)
    return float(mean), float(spread)


def predict_superposition(
    n_inputs: int,
    n_outputs: int,
    alpha: float,
    scheme: str,
    arrangement: str,
    heads: int,
    head_dim: int,
    *,
    seed: int = 0,
    n_draws: int = 4,
    spread: bool = False,
) -> float:
    r"""The predicted population error of H heads of dimension d_h (module docstring).

    Parameters
    ----------
    n_inputs, n_outputs : int
        N and M (Zipf law, :math:`f^*(x) = x \bmod M`).
    alpha : float
        The Zipf exponent α.
    scheme : str
        A sample-free scheme spec (``"population"``, ``"threshold:P=d/8"``); its d is the total
        width :math:`H\cdot d_h`.
    arrangement : str
        One of :data:`~assocmem.studies.superposition.memory.ARRANGEMENTS`.
    heads, head_dim : int
        H and d_h.
    seed : int, default 0
        The seed of the measurement: ``random-gated`` is averaged over the random routings of
        its trials :math:`0, \dots, n_{\mathrm{draws}} - 1`.
    n_draws : int, default 4
        Routings averaged for ``random-gated``.
    spread : bool, default False
        Return instead the standard deviation of one trial's error that the prediction implies
        if tokens failed independently, :math:`\sqrt{\sum_x p(x)^2 P(1 - P)}`: a floor on the Monte
        Carlo spread, which rare failures of the most frequent tokens dominate.

    Returns
    -------
    float
        :math:`\sum_x p(x)(1 - P(x \text{ retrieved}))` (or its spread).

    Raises
    ------
    ConfigError
        For an unknown arrangement.

    Notes
    -----
    The interference picture of Cabannes et al. (2024), Theorem 1, summed over heads; the docs:
    beyond/superposition.md.
    """
    args = (n_inputs, n_outputs, alpha, scheme, arrangement, heads, head_dim, seed, n_draws)
    return _prediction(*args)[1 if spread else 0]

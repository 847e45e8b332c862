r"""The composed error of two memories in series, from the laws of the single memories.

Beyond Cabannes et al. (2024); see the docs: beyond/hierarchy.md. Notation of
:mod:`assocmem.studies.hierarchy.memory`: memory 1 maps x to concepts z = f₁(x) (weights q₁, K
outputs, dimension d₁), memory 2 maps z to y = f₂(z) (weights q₂, M outputs, dimension d₂).

**Hard composition, exact.** With w₁(x) = 1{memory 1 wrong on x} and w₂(z) = 1{memory 2 wrong on
z}, the composed memory is wrong on x iff (w₁ = 0 and w₂(f₁(x)) = 1) or (w₁ = 1 and the concept
it picked does not give f₂(f₁(x))), so

.. math::

    E_{\mathrm{hard}} = E_1 + E_2(p_2) - B - L, \quad B = \sum_x p(x) w_1(x) w_2(f_1(x)), \quad
    L = \sum_x p(x) w_1(x) \ell(x)

(ℓ(x) = 1{memory 1 wrong on x but memory 2 answers f₂(f₁(x))}), with
:math:`E_2(p_2) = \sum_z p_2(z) w_2(z)` under the concept law :math:`p_2 = p \circ f_1^{-1}`. Hence
the union bound :math:`E_{\mathrm{hard}} \le E_1 + E_2(p_2)`, in every draw. **Prediction**: the
memories draw independent embeddings, so with the single-memory retrieval chances r₁(x), r₂(z) of
the interference picture (:func:`assocmem.analysis.predict.token_success`),

.. math::

    E_{\mathrm{hard}} \approx \sum_x p(x) [1 - r_1(x) r_2(f_1(x)) - (1 - r_1(x)) \lambda(f_1(x))],

where λ(c) is the chance that a wrong concept still gives the right output, taking the wrong
concept uniform over the K − 1 others and a wrong answer of memory 2 uniform over its M − 1 wrong
outputs (λ → 1/M for K ≫ M; λ ≈ 0 for K = M and a good memory 2).

**Soft composition: the added variance.** Feeding :math:`W_1 e_x` to memory 2 (inputs c_z) gives the
scores :math:`u_y^\top W_2 W_1 e_x = \sum_{x'} q_1(x') (e_{x'}\cdot e_x) s_2(f_1(x'), y)`, with s₂
memory 2's score table: given memory 2 and e_x they are exactly Gaussian (Gaussian e_{x'}). The mean
is :math:`q_1(x) q_2(c)` on y* = f₂(c) (c = f₁(x)), and memory 1's interference, carried by memory
2, adds to the score of output y the variance

.. math::

    V_{\mathrm{add}}(y) = \frac{1}{d_1} \sum_{z: f_2(z)=y} q_2(z)^2 Q_1(z), \quad
    Q_1(z) = \sum_{x' \ne x: f_1(x')=z} q_1(x')^2,

besides memory 2's own :math:`q_1(x)^2 \sum_{z \ne c: f_2(z)=y} q_2(z)^2/d_2` and O(1/d²) leaks
through the non-orthogonal embeddings. With q₂ ≡ 1, V_add(y) is the interference of a *direct*
memory of dimension d₁ storing the same tokens: the soft composition is the direct memory
:math:`W_2 W_1` (rank ≤ d₁) with noisier output vectors, and cannot use the K concepts. Its
predicted error treats the M scores as independent Gaussians (input norms at their mean; O(1/√d)
effects neglected).
"""

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.special import log_ndtr

from assocmem.analysis.predict import EmbeddingLaw, scheme_weights, token_success
from assocmem.config.errors import ConfigError
from assocmem.laws.tokens import zipf_probabilities
from assocmem.studies.hierarchy.memory import (
    HierarchyConfig,
    concept_law,
    concept_map,
    hierarchy_dim,
    token_frequencies,
)

GRID = np.linspace(-8.0, 8.0, 41)  # standardised nodes per score


@dataclass(frozen=True)
class HardPrediction:
    r"""Predicted errors of the hard composition and of its parts (floats).

    Attributes
    ----------
    first : float
        E₁, memory 1 on x → f₁(x).
    second : float
        E₂, memory 2 on z → f₂(z) under the concept law p₂.
    union_bound : float
        :math:`\min(1, E_1 + E_2)`.
    composed : float
        The hard composition (the independence formula of the module docstring).
    """

    first: float
    second: float
    union_bound: float
    composed: float


def _arrays(
    probs: Sequence[float] | np.ndarray, f1: Sequence[int] | np.ndarray, n_outputs: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    p = np.asarray(probs, dtype=np.float64)
    f = np.asarray(f1, dtype=np.int64)
    if f.shape != p.shape or f.min() < 0:
        raise ConfigError("f1", "needs one concept ≥ 0 per token")
    n_concepts = int(f.max()) + 1
    if n_concepts < n_outputs:
        raise ConfigError("f1", f"maps to {n_concepts} concepts, fewer than M = {n_outputs}")
    return p, f, np.arange(n_concepts) % n_outputs, n_concepts


def wrong_concept_luck(r2: np.ndarray, f2: np.ndarray, n_outputs: int) -> np.ndarray:
    """λ(c), (K,): the chance that a wrong concept z' ≠ c (uniform over the K − 1 others)
    still gives f₂(c): memory 2 right on z' with f₂(z') = f₂(c), or wrong on z' and answering
    f₂(c) (uniform over its M − 1 wrong outputs)."""
    right = np.bincount(f2, weights=r2, minlength=n_outputs)  # R_y = Σ_{f₂(z)=y} r₂(z)
    wrong = np.bincount(f2, weights=1.0 - r2, minlength=n_outputs)  # W_y
    same = right[f2] - r2
    other = (wrong.sum() - wrong[f2]) / (n_outputs - 1)
    return np.asarray((same + other) / max(len(r2) - 1, 1))


def predict_hard(
    probs: Sequence[float] | np.ndarray,
    f1: Sequence[int] | np.ndarray,
    n_outputs: int,
    q1: np.ndarray,
    q2: np.ndarray,
    dim1: int,
    dim2: int,
    law: EmbeddingLaw | None = None,
) -> HardPrediction:
    """Predicted errors of the hard composition from the two single-memory laws.

    Parameters
    ----------
    probs : array_like, shape (N,)
        p.
    f1 : array_like of int, shape (N,)
        The concept of each token, in [0, K); f₂(z) = z mod M.
    n_outputs : int
        M.
    q1 : numpy.ndarray, shape (N,)
        Memory 1's weights.
    q2 : numpy.ndarray, shape (K,)
        Memory 2's weights over the concepts.
    dim1, dim2 : int
        d₁ and d₂.
    law : EmbeddingLaw, optional
        The embedding law of both memories (default: Gaussian inputs, unit-norm outputs).

    Returns
    -------
    HardPrediction

    Notes
    -----
    The exact decomposition and its prediction are in the module docstring; the single-memory
    law is the interference picture of Cabannes et al. (2024), Theorem 1 (docs:
    beyond/predict.md).
    """
    p, f, f2, n_concepts = _arrays(probs, f1, n_outputs)
    law = law or EmbeddingLaw()
    r1 = token_success(np.asarray(q1, np.float64), f, n_concepts, dim1, law)
    r2 = token_success(np.asarray(q2, np.float64), f2, n_outputs, dim2, law)
    p2 = np.bincount(f, weights=p, minlength=n_concepts)
    luck = wrong_concept_luck(r2, f2, n_outputs)[f]
    first, second = float(p @ (1 - r1)), float(p2 @ (1 - r2))
    composed = float(p @ (1 - r1 * r2[f] - (1 - r1) * luck))
    return HardPrediction(first, second, min(1.0, first + second), composed)


def soft_moments(
    f1: Sequence[int] | np.ndarray, n_outputs: int, q1: np.ndarray, q2: np.ndarray, dim: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean of the right score and variances of all M scores of the soft composition.

    Returns ``(mean (N,), variance (N, M), added (N, M))``: the right output's mean
    :math:`q_1(x) q_2(f_1(x))` (the wrong ones have mean 0), every score's variance, and its part
    ``V_add`` carried over from memory 1's interference (module docstring), at d₁ = d₂ = d.
    """
    f = np.asarray(f1, dtype=np.int64)
    q1, q2 = np.asarray(q1, np.float64), np.asarray(q2, np.float64)
    n_concepts = len(q2)
    f2 = np.arange(n_concepts) % n_outputs
    target = np.asarray(f2[f], dtype=np.int64)
    q1_by_concept = np.bincount(f, weights=q1**2, minlength=n_concepts)  # Q₁(z) with x
    carried = np.bincount(f2, weights=q2**2 * q1_by_concept, minlength=n_outputs)  # (M,)
    class_q2 = np.bincount(f2, weights=q2**2, minlength=n_outputs)  # Σ_{f₂(z)=y} q₂²
    own = (q2[f] * q1) ** 2  # token x's own term, left out of its interference
    added: np.ndarray = np.broadcast_to(carried, (len(f), n_outputs)).astype(np.float64)
    added[np.arange(len(f)), target] -= own
    memory2: np.ndarray = q1[:, None] ** 2 * class_q2[None, :]
    memory2[np.arange(len(f)), target] -= own
    # Leaks through non-orthogonal c_z and u_y: O(1/d²) (third-party terms of the scores).
    leak = (q1_by_concept.sum() * class_q2[None, :] + q1[:, None] ** 2 * class_q2.sum()) / dim
    added = np.maximum(added, 0.0) / dim
    variance = added + (np.maximum(memory2, 0.0) + leak) / dim
    return q1 * q2[f], variance, added


def success_probability(mean: np.ndarray, variance: np.ndarray, target: np.ndarray) -> np.ndarray:
    """P(the target score is the strict maximum) for independent Gaussian scores, (n,).

    mean (n,): the target's mean (the others have mean 0); variance (n, M); target (n,). The
    failure density is integrated over the target's standardised score on the union of every
    score's nodes (all scales resolved).
    """
    rows = np.arange(len(mean))
    scale = np.sqrt(variance + 1e-30 + 1e-24 * mean[:, None] ** 2)
    sigma = scale[rows, target][:, None]
    mapped = (scale[:, :, None] * GRID - mean[:, None, None]) / sigma[:, :, None]
    u = np.concatenate(
        [np.broadcast_to(GRID, (len(mean), GRID.size)), mapped.reshape(len(mean), -1)], 1
    )
    u = np.sort(np.clip(u, GRID[0], GRID[-1]), axis=1)
    s = mean[:, None] + sigma * u
    log_cdf = log_ndtr(s[:, :, None] / scale[:, None, :])
    log_cdf[rows, :, target] = 0.0
    density = np.exp(-0.5 * u**2) / np.sqrt(2 * np.pi) * -np.expm1(log_cdf.sum(axis=2))
    return np.asarray(1.0 - np.clip(np.trapezoid(density, u, axis=1), 0.0, 1.0))


def predict_soft(
    probs: Sequence[float] | np.ndarray,
    f1: Sequence[int] | np.ndarray,
    n_outputs: int,
    q1: np.ndarray,
    q2: np.ndarray,
    dim: int,
) -> float:
    """Predicted error of the soft composition at d₁ = d₂ = d (independent Gaussian scores with
    the variances of :func:`soft_moments`)."""
    p, f, f2, _ = _arrays(probs, f1, n_outputs)
    mean, variance, _ = soft_moments(f, n_outputs, q1, q2, dim)
    target = f2[f]
    _, index = np.unique(np.column_stack([mean, variance]), axis=0, return_inverse=True)
    first = np.unique(index, return_index=True)[1]  # one token per distinct (mean, variances)
    success = success_probability(mean[first], variance[first], target[first])
    return float(p @ (1.0 - success[index.reshape(-1)]))


def predict_hierarchy(
    cfg: HierarchyConfig, scheme: str, parity: str = "matrix", trials: Sequence[int] = (0,)
) -> dict[str, np.ndarray]:
    """Predicted errors of the hierarchy at every d of ``cfg``, for one memory-1 scheme.

    Parameters
    ----------
    cfg : HierarchyConfig
        N, K, M, α, the concept map, the dims (of the direct memory), memory 2's scheme and
        n_samples (schemes on counts for finite T, drawn as the measured trials draw them).
    scheme : str
        Memory 1's scheme (e.g. ``"threshold:P=d/2"``).
    parity : {"matrix", "embeddings"}, default "matrix"
        How d₁ = d₂ = h follows from d (:func:`assocmem.studies.hierarchy.memory.hierarchy_dim`).
    trials : sequence of int, default (0,)
        The trials whose f₁ (and samples) the prediction is made for.

    Returns
    -------
    dict of str to numpy.ndarray
        ``first``, ``second``, ``union_bound``, ``hard`` (:func:`predict_hard`) and ``soft``
        (:func:`predict_soft`), each (len(trials), len(dims)); ``hidden``, the h of each d.

    Notes
    -----
    The cost grows like K² (memory 1's K-way competition): meant for K up to a few tens.
    Beyond Cabannes et al. (2024); see the docs: beyond/hierarchy.md.
    """
    names = ("first", "second", "union_bound", "hard", "soft")
    out = {name: np.zeros((len(trials), len(cfg.dims))) for name in names}
    hidden = np.array(
        [hierarchy_dim(d, parity, cfg.n_inputs, cfg.n_concepts, cfg.n_outputs) for d in cfg.dims]
    )
    probs = zipf_probabilities(cfg.n_inputs, cfg.alpha).numpy()
    for row, trial in enumerate(trials):
        concepts, freq = concept_map(cfg, trial), token_frequencies(cfg, trial)
        freq2 = concept_law(freq, concepts, cfg.n_concepts).numpy()
        q1 = scheme_weights(scheme, freq.numpy(), [int(h) for h in hidden])
        q2 = scheme_weights(cfg.concept_scheme, freq2, [int(h) for h in hidden])
        f1 = concepts.numpy()
        for i, h in enumerate(hidden):
            hard = predict_hard(probs, f1, cfg.n_outputs, q1[i], q2[i], int(h), int(h))
            out["first"][row, i], out["second"][row, i] = hard.first, hard.second
            out["union_bound"][row, i], out["hard"][row, i] = hard.union_bound, hard.composed
            out["soft"][row, i] = predict_soft(probs, f1, cfg.n_outputs, q1[i], q2[i], int(h))
    return {**out, "hidden": hidden}

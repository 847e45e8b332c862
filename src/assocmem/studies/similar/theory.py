r"""The Gaussian theory of the scores of a closed-form memory with clustered embeddings
(docs: beyond/similar.md, "Theory").

The model: :math:`e_x = \sqrt{\rho}\cdot c_{g(x)} + \sqrt{1-\rho}\cdot \xi_x`
(:func:`assocmem.embeddings.clustered_coordinates`), so
:math:`\mathbb{E}[z_x \cdot z_{x'}] / d = R_{xx'} =
(1-\rho) \cdot \mathbb{1}\{x = x'\} + \rho \cdot \mathbb{1}\{g(x) = g(x')\}`. With the stored rows
:math:`w_y(x') = q(x')\cdot L(x', y)` (L the stored label law; one-hot f* without label noise), the
class sums :math:`A_y(x) = \sum_{x'} w_y(x')\, e_{x'} \cdot e_x` have, exactly (Isserlis),

.. math::

    \text{mean} \quad \mu_y(x) &= \sum_{x'} w_y(x') R_{xx'}
        = (1-\rho)\, w_y(x) + \rho\, W_{g(x),y}, \\
    \text{cov} \quad C_{yy'}(x) &= (w_y^\top R\, w_{y'} + \mu_y \mu_{y'}) / d, \\
    w_y^\top R\, w_{y'} &= (1-\rho) \sum_{x'} w_y(x') w_{y'}(x') + \rho \sum_k W_{ky} W_{ky'},

with :math:`W_{k,y} = \sum_{x' \in k} w_y(x')` the group sums. The scores are :math:`s = G A` with
G = U Uᵀ independent of A; for random U (normalised so that E G = I)
:math:`\operatorname{Var} G_{yy} = v/d` and :math:`\operatorname{Var} G_{yy'} = o/d` (v = 2 Gaussian
rows, 2(1 − d/d_max) truncated spherical rows, 0 renormalised spherical; o = 1; both 0 for
orthogonal U), which adds :math:`(v \mu_y^2 + o \sum_{a\ne y} \mu_a^2) / d` to the variance of s_y
(and :math:`o\, \mu_y \mu_{y'} / d` to their covariance). The theory takes the scores as Gaussian
with these exact moments: the margins :math:`s_f - s_y` then have exact means and variances, and
their correlations are replaced by one common value (:func:`correct_probability`). With group-shared
targets every covariance between outputs vanishes and this is exact to second order; with
independent targets it is an approximation. Two limits of the Gaussian form: at small d (a few
coordinates) and when only a handful of tokens are stored (the output Gram's terms ``G_yy' A_y'``
are then products, not Gaussian).
"""

import functools
import math

import numpy as np
import torch

QUADRATURE_NODES = 48  # Gauss–Hermite nodes of the integral over the correct output's score
CERTAIN = 7.5  # margins beyond this many standard deviations: the union bound is exact enough


def output_gram_variances(kind: str, nested: str, dim: int, d_max: int) -> tuple[float, float]:
    r"""(v, o): :math:`d \cdot \operatorname{Var} G_{yy}` and
    :math:`d \cdot \operatorname{Var} G_{yy'}` of the output Gram G = U Uᵀ normalised to E G = I.

    Parameters
    ----------
    kind : {"gaussian", "spherical", "orthogonal"}
        The output-embedding law.
    nested : {"truncate", "renormalize"}
    dim, d_max : int
        d, and the largest d of the run (truncated spherical rows are unit norm at d_max).
    """
    if kind == "orthogonal":
        return 0.0, 0.0
    if kind == "gaussian":
        return 2.0, 1.0
    if nested == "renormalize":
        return 0.0, 1.0
    return 2.0 * (1.0 - dim / d_max) * d_max / (d_max + 2.0), 1.0


def score_moments(
    weights: torch.Tensor,
    labels: torch.Tensor,
    groups: torch.Tensor,
    similarity: float,
    dim: int,
    gram: tuple[float, float] = (0.0, 1.0),
) -> tuple[torch.Tensor, torch.Tensor]:
    r"""Mean and covariance of the scores :math:`u_y^\top W_q e_x` under clustered Gaussian
    embeddings.

    Parameters
    ----------
    weights : torch.Tensor, shape (N,)
        q(x).
    labels : torch.Tensor, shape (M, N)
        The stored label law L(x, y) (one-hot f* without label noise).
    groups : torch.Tensor, shape (N,), int64
        g(x).
    similarity : float
        ρ (0: independent Gaussian embeddings, the model of Cabannes et al. 2024).
    dim : int
        d.
    gram : (float, float), default (0, 1)
        (v, o) of the output Gram (:func:`output_gram_variances`).

    Returns
    -------
    mean : torch.Tensor, shape (N, M)
        E s_y(x), in units where E e_x·e_x = 1 (the scale changes no argmax).
    covariance : torch.Tensor, shape (N, M, M)
        Cov(s_y(x), s_y'(x)).

    Notes
    -----
    The moments of the module docstring (docs: beyond/similar.md, "Theory"): exact at every d.
    """
    rho = float(similarity)
    v, o = gram
    w = weights[None, :] * labels  # (M, N)
    n_groups = int(groups.max()) + 1 if groups.numel() else 1
    group_sums = w.new_zeros(w.shape[0], n_groups).index_add_(1, groups, w)  # W: (M, G)
    mean = ((1 - rho) * w + rho * group_sums[:, groups]).T  # (N, M)
    shared = (1 - rho) * w @ w.T + rho * group_sums @ group_sums.T  # (M, M): w_yᵀ R w_y'
    outer = mean[:, :, None] * mean[:, None, :]  # (N, M, M)
    class_cov = (shared[None] + outer) / dim  # Cov(A_y, A_y')
    # s = G A: off the diagonal E[G_yy G_y'y'] = 1 and E[G_yy'²] = o/d pair A_y with A_y'.
    covariance = class_cov * (1 + o / dim) + o * outer / dim
    a_var = class_cov.diagonal(dim1=1, dim2=2)  # C_yy
    second = a_var + mean.square()  # E A_y²
    others = second.sum(1, keepdim=True) - second  # Σ_{a≠y} E A_a²
    diagonal = a_var * (1 + v / dim) + (v * mean.square() + o * others) / dim
    covariance.diagonal(dim1=1, dim2=2).copy_(diagonal)
    return mean, covariance


def correct_probability(
    mean: torch.Tensor, covariance: torch.Tensor, targets: torch.Tensor
) -> torch.Tensor:
    r"""P(the target is the strict argmax) of Gaussian scores, shape (N,).

    The margins :math:`\Delta_y = s_f - s_y` (y ≠ f) are Gaussian with exact means ``m_y`` and
    variances ``v_y``; their correlation is taken as one common covariance c (the mean over pairs),
    so :math:`\Delta_y = m_y + \sqrt{c}\cdot Z + \sqrt{v_y - c}\cdot \varepsilon_y` and
    :math:`P = \int \varphi(t) \prod_y \Phi((m_y + \sqrt{c}\, t)/\sqrt{v_y - c})\, dt`
    (Gauss–Hermite, :data:`QUADRATURE_NODES` nodes; a zero variance is a point mass: ties lose).
    With group-shared targets the scores are uncorrelated and c = Var s_f for every pair: exact.
    Tokens whose margins all exceed :data:`CERTAIN` standard deviations get the union bound
    :math:`1 - \sum_y \Phi (-m_y/\sqrt{v_y})` (exact to < 1e-12); equal rows are integrated once.

    Parameters
    ----------
    mean : torch.Tensor, shape (N, M)
        E s_y(x) (:func:`score_moments`).
    covariance : torch.Tensor, shape (N, M, M)
        Cov(s_y(x), s_y'(x)).
    targets : torch.Tensor, shape (N,), int64
        f*(x).

    Returns
    -------
    torch.Tensor, shape (N,)
        P(s_f(x) > s_y(x) for every y ≠ f*(x)).

    Notes
    -----
    Similar tokens beyond Cabannes et al. (2024); see the docs: beyond/similar.md, "Theory".
    """
    gap, var, common = _margins(mean, covariance, targets)
    # no variance: the sign of the gap decides, and a tie loses (0·inf would be NaN)
    certain = torch.where(gap > 0, math.inf, -math.inf).to(gap.dtype)
    z = torch.where(var > 0, gap / var.clamp(min=1e-300).sqrt(), certain)
    z[torch.arange(len(targets)), targets] = math.inf
    out = 1.0 - torch.special.ndtr(-z).sum(1)
    unsure = (z.amin(1) < CERTAIN).nonzero()[:, 0]
    if len(unsure):
        # Equal rows (tokens with the same signal: unseen tokens of one group, tokens with no
        # signal at all) are integrated once; rows are told apart by a fixed random projection.
        parts = (gap[unsure], var[unsure], common[unsure, None], targets[unsure, None])
        rows = torch.cat([part.to(gap.dtype) for part in parts], 1)
        key = rows @ _projection(rows.shape[1]).to(rows.dtype)
        _, inverse = torch.unique(key, return_inverse=True)
        first = torch.full((int(inverse.max()) + 1,), len(inverse), dtype=torch.long)
        first.scatter_reduce_(0, inverse, torch.arange(len(inverse)), "amin")
        pick = unsure[first]
        found = _quadrature(gap[pick], var[pick], common[pick], targets[pick])
        out[unsure] = found[inverse]
    result: torch.Tensor = out
    return result


def _margins(
    mean: torch.Tensor, covariance: torch.Tensor, targets: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Margin means and variances (N, M) (the target's own entry: 0, 0) and the common
    covariance c (N,) of distinct margins, clipped to [0, min_y v_y]."""
    n, m = mean.shape
    rows = torch.arange(n)
    with_f = covariance[rows, targets]  # (N, M): Cov(s_f, s_y)
    var_f = with_f[rows, targets]
    gap = mean[rows, targets][:, None] - mean
    var = (var_f[:, None] + covariance.diagonal(dim1=1, dim2=2) - 2 * with_f).clamp(min=0)
    pairs = var_f[:, None, None] - with_f[:, :, None] - with_f[:, None, :] + covariance
    keep = ~torch.eye(m, dtype=torch.bool)[None].expand(n, m, m).clone()
    keep[rows, targets, :] = False
    keep[rows, :, targets] = False
    count = keep.sum((1, 2)).clamp(min=1)
    common = (pairs * keep).sum((1, 2)) / count
    var[rows, targets] = 0.0
    gap[rows, targets] = 0.0
    smallest = torch.where(var > 0, var, math.inf)
    smallest[rows, targets] = math.inf
    ceiling = smallest.amin(1).clamp(max=torch.finfo(var.dtype).max)
    common = torch.minimum(common.clamp(min=0), ceiling)
    return gap, var, common


@functools.cache
def _projection(width: int) -> torch.Tensor:
    return torch.from_numpy(np.random.default_rng(20261124).standard_normal(width))


@functools.cache
def _nodes(count: int) -> tuple[np.ndarray, np.ndarray]:
    """Gauss–Hermite nodes and weights for the standard normal density."""
    nodes, weights = np.polynomial.hermite_e.hermegauss(count)
    return nodes, weights / math.sqrt(2 * math.pi)


def _quadrature(
    gap: torch.Tensor, var: torch.Tensor, common: torch.Tensor, targets: torch.Tensor
) -> torch.Tensor:
    """:func:`correct_probability` by quadrature, for every row (see :func:`_margins`)."""
    nodes, node_weights = _nodes(QUADRATURE_NODES)
    t = torch.as_tensor(nodes, dtype=gap.dtype)
    a = torch.as_tensor(node_weights, dtype=gap.dtype)
    shifted = gap[:, :, None] + common.sqrt()[:, None, None] * t[None, None, :]  # (n, M, K)
    own = (var - common[:, None]).clamp(min=0).sqrt()[:, :, None]
    beats = torch.where(
        own > 0,
        torch.special.ndtr(shifted / own.clamp(min=1e-300)),
        (shifted > 0).to(gap.dtype),
    )
    beats[torch.arange(len(targets)), targets] = 1.0
    found: torch.Tensor = (beats.prod(1) * a[None, :]).sum(1)
    return found

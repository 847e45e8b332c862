r"""predict.py's M − 1-competitor theory at large M: the same model, a quadrature that scales.

:func:`assocmem.analysis.predict.token_success` integrates, for each token x of class c, the
correct score ``N(g q(x), σ_c²)`` against M − 1 independent wrong scores ``N(0, σ_y²)`` on the
union of every score's grid: ``41 (M + 1)`` nodes × M terms per token, minutes at M = 50 and
out of reach at M = N. Here the model is unchanged (the variances are predict.py's, term for
term) and only the quadrature differs:

- the wrong classes enter through their interference :math:`Q_y = \sum_{x' \in y} q(x')^2`
  alone: the ``exact`` largest ones one by one, the rest in ``bins`` groups of equal size by rank of
  ``Q_y``, each at its mean Q (the sum of ``log Φ(s/σ_y)`` over a group is taken as its size
  times the term at the group's mean);
- the correct score is integrated on one fixed grid of ``u = (s − g q)/σ_c`` (``grid_nodes``
  nodes on [−8, 8]): at M = N each class holds one token, so ``σ_c`` is the leak alone and the
  wrong scores are at least as wide (:math:`\sigma_y \ge \sigma_c` up to O(1/d)), which a fixed
  grid resolves.

The resolution (:class:`Quadrature`): 61 grid nodes, 16 + 48 class groups, at most 8 nodes per
norm (d = 16 takes 6). Against the finer one used before (:data:`REFERENCE`: 241 nodes,
32 + 96 groups), the predicted population error of q = p at T = ∞ differs by at most 3.4e-5
over facts-errors' M = 50, 500, N and d = 16 … 512 (N = 1000, Zipf α = 2; three target
draws; the quick and full specs share these points): 3.4e-5 at M = 50, d = 128 (the grid;
121 nodes: 7.4e-6), ≤ 4e-8 at M = 500 and N (the groups). That is far below the claims'
tolerance (0.03 + 2 s.e., facts-6). tests/test_facts_theory.py holds it to 1e-4 where each
coarsening shows most (31 grid nodes, or 3 norm nodes, fail there). CPU time of one d = 64 at
N = 1000: 2.9 → 0.85 s at M = 50 (the grid), 8.0 → 1.0 s at M = N (the grid and the groups).

Cost: ``N × grid_nodes × (exact + bins)`` evaluations of log Φ per quadrature node of the norms,
taken by torch's ``special.log_ndtr`` on float64 (on the process's threads: half the time of
SciPy's on two cores; the two agree to 1e-14 relative). The tests compare it with predict.py
where both run (M = 5, 50).
"""

from dataclasses import dataclass, replace

import numpy as np
import torch

from assocmem.analysis.predict import EmbeddingLaw

BLOCK = 256  # tokens per block (N × grid × classes values bounded)


@dataclass(frozen=True)
class Quadrature:
    """The large-M quadrature's resolution.

    Attributes
    ----------
    grid_nodes : nodes of the fixed grid of the standardised correct score on [−8, 8].
    exact, bins : the wrong classes of largest ``Q_y`` taken one by one, and the groups of the rest.
    norm_nodes : at most this many Gauss–Hermite nodes for each of the norms r = |e_x|² and
        g_c = |u_c|² (:attr:`EmbeddingLaw.n_norm_nodes`; fewer at large d, where they are narrow).
    """

    grid_nodes: int = 61
    exact: int = 16
    bins: int = 48
    norm_nodes: int = 8


REFERENCE = Quadrature(grid_nodes=241, exact=32, bins=96, norm_nodes=8)  # the yardstick (tests)


def class_groups(
    totals: np.ndarray, exact: int, bins: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Groups of classes by rank of ``Q_y``: the ``exact`` largest alone, then ``bins`` groups.

    Returns the groups' mean Q (G,), their sizes (G,) and each class's group (M,).
    """
    order = np.argsort(-totals, kind="stable")
    head, rest = order[:exact], order[exact:]
    parts = [np.array([y]) for y in head] + [p for p in np.array_split(rest, bins) if p.size]
    means = np.array([totals[p].mean() for p in parts])
    sizes = np.array([p.size for p in parts], dtype=np.float64)
    group = np.empty(totals.size, dtype=np.int64)
    for k, p in enumerate(parts):
        group[p] = k
    return means, sizes, group


def token_success_large_m(
    q: np.ndarray,
    targets: np.ndarray,
    n_outputs: int,
    dim: int,
    law: EmbeddingLaw | None = None,
    quadrature: Quadrature = Quadrature(),
    extra: np.ndarray | None = None,
) -> np.ndarray:
    """Predicted P(retrieved) of each token at dimension d, shape (N,) (predict.py's model).

    q: (N,) the weights; targets: (N,) f*(x) in [0, M). The law's ``n_norm_nodes`` is the
    quadrature's ``norm_nodes``. ``extra`` (M,), if given, is added to each class's
    interference ``Q_y`` as in :func:`~assocmem.analysis.score_integral.token_success` (the
    associations edits add: :func:`~assocmem.analysis.edit_theory.predict_edits`); the totals
    stay ≥ 0.
    """
    law = replace(law or EmbeddingLaw(), n_norm_nodes=quadrature.norm_nodes)
    grid = np.linspace(-8.0, 8.0, quadrature.grid_nodes)
    totals = np.bincount(targets, weights=q**2, minlength=n_outputs)  # Q_y
    if extra is not None:
        totals = np.maximum(totals + np.asarray(extra, dtype=np.float64), 0.0)
    means, sizes, group = class_groups(totals, quadrature.exact, quadrature.bins)
    v_diag, v_off = law.output_gram_variances(dim)
    own = np.maximum(totals[targets] - q**2, 0.0)  # Q_c without x
    rest = totals.sum() - totals[targets]  # Σ_{y ≠ c} Q_y
    success = np.zeros(q.size)
    g_nodes, g_weights = law.diag_nodes(dim)
    for r, r_weight in zip(*law.norm_nodes(dim), strict=True):
        scale = 1.0 / (r * dim)
        # a wrong class y: (1 + v_diag) Q_y + v_off (Σ_{y' ∉ {c, y}} Q_y'), over r d
        common = v_off * rest * scale  # (N,)
        wrong_var = (1 + v_diag - v_off) * means[None, :] * scale + common[:, None]  # (N, G)
        self_var = (1 + v_diag - v_off) * means[group[targets]] * scale + common  # c as a group
        for g, g_weight in zip(g_nodes, g_weights, strict=True):
            correct_var = g**2 * own * scale + common
            weight = r_weight * g_weight
            success += weight * _success(g * q, correct_var, wrong_var, sizes, self_var, grid)
    return success


def _log_ndtr(x: np.ndarray) -> np.ndarray:
    """log Φ(x), float64, elementwise (torch's, on the process's threads)."""
    out: np.ndarray = torch.special.log_ndtr(torch.from_numpy(x)).numpy()
    return out


def _success(
    mean: np.ndarray, correct_var: np.ndarray, wrong_var: np.ndarray, sizes: np.ndarray,
    self_var: np.ndarray, grid: np.ndarray,
) -> np.ndarray:  # fmt: skip
    """∫ φ(u) Π_{y ≠ c} Φ(s(u)/σ_y) du with s = mean + σ_c u, on the fixed grid, per token."""
    out = np.empty(mean.size)
    for start in range(0, mean.size, BLOCK):
        part = slice(start, start + BLOCK)
        sigma_c = np.sqrt(correct_var[part] + 1e-30 + 1e-24 * mean[part] ** 2)
        s = mean[part, None] + sigma_c[:, None] * grid  # (B, K)
        wrong = np.sqrt(wrong_var[part] + 1e-30)  # (B, G)
        log_cdf = _log_ndtr(s[:, :, None] / wrong[:, None, :]) @ sizes  # (B, K)
        log_cdf -= _log_ndtr(s / np.sqrt(self_var[part, None] + 1e-30))  # c is no competitor
        failure = np.exp(-0.5 * grid**2) / np.sqrt(2 * np.pi) * -np.expm1(log_cdf)
        out[part] = 1.0 - np.clip(np.trapezoid(failure, grid, axis=1), 0.0, 1.0)
    return out


def predict_errors_large_m(
    probs: np.ndarray, targets: np.ndarray, q: np.ndarray, dims: list[int], n_outputs: int,
    law: EmbeddingLaw | None = None, quadrature: Quadrature = Quadrature(),
) -> np.ndarray:  # fmt: skip
    r"""The predicted population error :math:`\sum_x p(x)(1 - P(\mathrm{correct}_x))` at each
    d, (len(dims),)."""
    return np.array(
        [
            probs @ (1.0 - token_success_large_m(q, targets, n_outputs, d, law, quadrature))
            for d in dims
        ]
    )

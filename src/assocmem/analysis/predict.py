r"""Predicted error curves of closed-form memories from the interference picture of Theorem 1.

Beyond the paper, which gives exponents only: for a weighting q (see the docs: science/schemes.md)
and an embedding law, predict the expected population error at every d.

The model. For :math:`W_q = \sum_x q(x) u_{f^*(x)} e_x^\top` the score of output y on token x is
:math:`s_y = \sum_{y'} G_{yy'} Z_{y'}` with :math:`G = U U^\top` and
:math:`Z_{y'} = \sum_{x': f^*(x')=y'} q(x') e_{x'}\cdot e_x`.
Given ``e_x`` (:math:`r = |e_x|^2`), each :math:`Z_{y'}` is exactly Gaussian (Gaussian
:math:`e_{x'}`; nearly so for spherical ones) with mean :math:`r q(x) \mathbb{1}\{y' = f^*(x)\}` and
variance :math:`r Q_{y'}/d`, where :math:`Q_{y'} = \sum_{x' \ne x, f^*(x') = y'} q(x')^2` is the
interference of class y' (Theorem 1's :math:`Q_\infty`). ``G`` has a diagonal :math:`g_y = |u_y|^2`
(scaled to mean 1, variance ``v_diag``: 0 for unit rows, :math:`2/d` for Gaussian rows,
:math:`2/d - 2/d_{\max}` for rows normalised at d_max and truncated) and zero-mean off-diagonal
entries of variance :math:`v_{\mathrm{off}} \approx 1/d`, which leak the other classes into every
score. Treating the M scores as independent Gaussians given ``(r, g_c)`` (c = f*(x)), dividing by r,
the correct score is :math:`\mathcal{N}(g_c q, \sigma_c^2)` and a wrong one
:math:`\mathcal{N}(0, \sigma_y^2)` with

.. math::

    \sigma_c^2 &= g_c^2 Q_c/(r d) + v_{\mathrm{off}} \sum_{y' \ne c} Q_{y'}/(r d), \\
    \sigma_y^2 &= (1 + v_{\mathrm{diag}}) Q_y/(r d) +
        v_{\mathrm{off}} \sum_{y' \notin \{c, y\}} Q_{y'}/(r d)

(the pair leak :math:`G_{yc}` enters :math:`s_c - s_y` only as the factor
:math:`1 - G_{yc} > 0`, so it cannot flip that comparison and is left out)

so
:math:`P(\text{wrong} \mid r, g_c) = \int \mathcal{N}(s; g_c q, \sigma_c^2)\,
(1 - \prod_{y \ne c} \Phi(s/\sigma_y))\, ds`. The integral is a trapezoid rule in the standardised
correct score on the union of the grids :math:`\mu_k + \sigma_k\cdot u` (u ∈ [−8, 8]) of all M
scores, which resolves every scale at once. The norm ``r`` (:math:`\chi^2_d/d` for Gaussian inputs,
1 for spherical ones) and the correct output's ``g_c`` (a scaled χ² with variance ``v_diag``) are
integrated by Gauss–Hermite quadrature after the Wilson–Hilferty transform. The predicted error is
:math:`\sum_x p(x) (1 - P(\mathrm{correct}_x))`. Neglected: the dependence between scores through
shared ``G`` entries, the non-Gaussian (scale-mixture) law of the wrong scores, and the non-Gaussian
tails of :math:`G\cdot Z` — O(1/√d) effects that show at d ≲ 30.
"""

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import torch
from numpy.polynomial.hermite_e import hermegauss
from scipy.special import log_ndtr

from assocmem import rng
from assocmem.closed_form.config import ClosedFormConfig
from assocmem.config.checks import int_at_least
from assocmem.config.errors import ConfigError
from assocmem.laws.counts import multinomial_prefix_counts
from assocmem.laws.tokens import (
    mod_targets,
    normalize_probabilities,
    prefix_counts,
    random_targets,
    sample_tokens,
    zipf_probabilities,
)
from assocmem.progress import progress_bar
from assocmem.schemes import parse_scheme

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
    of the memory add: :mod:`assocmem.studies.editing.theory`); the totals stay ≥ 0.
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


def predict_errors(
    probs: Sequence[float] | np.ndarray,
    targets: Sequence[int] | np.ndarray,
    weights: np.ndarray,
    dims: Sequence[int],
    n_outputs: int,
    law: EmbeddingLaw | None = None,
) -> np.ndarray:
    r"""The predicted population error :math:`\sum_x p(x) (1 - P(\mathrm{correct}_x))` at each d.

    Beyond the paper, which gives exponents only: the scores of a memory ``W_q`` with random
    embeddings are Gaussian given the norms, so the chance that x is retrieved is a one-dimensional
    integral, computed by quadrature.

    Parameters
    ----------
    probs : array_like of float, shape (N,)
        The data law p.
    targets : array_like of int, shape (N,)
        f*(x) in ``[0, n_outputs)``.
    weights : numpy.ndarray of float, shape (N,) or (len(dims), N)
        q: the same at every d, or one row per d (a d-dependent scheme such as thresholding).
    dims : sequence of int
        The memory dimensions d.
    n_outputs : int
        M.
    law : EmbeddingLaw, optional
        The embedding law (default: Gaussian inputs, spherical outputs).

    Returns
    -------
    numpy.ndarray of float64, shape (len(dims),)
        The expected error at each d.

    Notes
    -----
    The interference picture of Cabannes et al. (2024), Theorem 1; see the docs:
    science/theory.md.
    """
    law = law or EmbeddingLaw()
    p = np.asarray(probs, dtype=np.float64)
    f = np.asarray(targets, dtype=np.int64)
    q = np.asarray(weights, dtype=np.float64)
    q = np.broadcast_to(q, (len(dims), p.size)) if q.ndim == 1 else q
    if q.shape != (len(dims), p.size) or f.shape != p.shape:
        raise ConfigError("weights", "need one weight per token (and per d if d-dependent)")
    if (q < 0).any() or (f < 0).any() or (f >= n_outputs).any():
        raise ConfigError("weights", "weights must be ≥ 0 and targets in [0, M)")
    return np.array(
        [p @ (1.0 - token_success(q[i], f, n_outputs, int(d), law)) for i, d in enumerate(dims)]
    )


def scheme_weights(spec: str, freq: np.ndarray, dims: Sequence[int]) -> np.ndarray:
    """q of a registered scheme (:mod:`assocmem.schemes`) at each d, shape (len(dims), N).

    freq: (N,) the population law p (infinite data) or the sample counts n(x).
    """
    scheme = parse_scheme(spec)
    q = scheme.weights(torch.as_tensor(freq, dtype=torch.float64)[None], list(dims))  # (D|1, 1, N)
    return np.broadcast_to(q[:, 0].numpy(), (len(dims), freq.size)).copy()


def sample_frequencies(cfg: ClosedFormConfig, trial: int) -> dict[int, np.ndarray]:
    """Counts n_T(x) of the first T samples for each finite T of ``cfg``, drawn from the same
    named random stream as Monte Carlo trial ``trial`` of the closed-form engine (the T tokens,
    or the multinomial count vectors with ``counts = "multinomial"``)."""
    sizes = sorted({t for t in cfg.n_samples if t is not None})
    if not sizes:
        return {}
    if cfg.counts == "multinomial":
        gen = rng.generator(cfg.seed, "counts", trial)
        counts = multinomial_prefix_counts(_probs(cfg), sizes, gen).numpy()
    else:
        tokens = sample_tokens(_probs(cfg), max(sizes), rng.generator(cfg.seed, "data", trial))
        counts = prefix_counts(tokens, cfg.n_inputs, sizes).numpy()
    return dict(zip(sizes, counts, strict=True))


def _probs(cfg: ClosedFormConfig) -> torch.Tensor:
    if cfg.probabilities is not None:
        return normalize_probabilities(cfg.probabilities)
    if cfg.words is not None:
        from assocmem.laws.words import word_distribution

        return torch.from_numpy(word_distribution(cfg.words, cfg.n_inputs).probabilities)
    return zipf_probabilities(cfg.n_inputs, cfg.alpha)


def _targets(cfg: ClosedFormConfig, trial: int) -> np.ndarray:
    if cfg.target == "mod":
        return mod_targets(cfg.n_inputs, cfg.n_outputs).numpy()
    gen = rng.generator(cfg.seed, "targets", trial)
    return random_targets(cfg.n_inputs, cfg.n_outputs, gen).numpy()


def embedding_law(cfg: ClosedFormConfig) -> EmbeddingLaw:
    """The :class:`EmbeddingLaw` of a closed-form configuration (its nested-d convention too)."""
    if cfg.embedding == "orthogonal":
        raise ConfigError(
            "embedding", "the prediction needs random input embeddings (gaussian, spherical)"
        )
    d_max = max(cfg.dims) if cfg.nested == "truncate" else None
    return EmbeddingLaw(cfg.embedding, cfg.output_embedding, output_d_max=d_max)


def predict_config(
    cfg: ClosedFormConfig, *, n_draws: int = 10, progress: bool = False
) -> list[dict[str, Any]]:
    """The predicted mean error of every (scheme, T, d) of a closed-form configuration.

    Data-dependent schemes at finite T see a random q: the prediction is averaged over the
    sampled counts of the first ``n_draws`` Monte Carlo trials (the same named data streams
    :func:`run_closed_form` uses), not computed from expected counts; likewise random targets.

    Parameters
    ----------
    cfg : ClosedFormConfig
        The configuration (its embeddings give the :class:`EmbeddingLaw`).
    n_draws : int, default 10
        Trials whose samples are averaged over.
    progress : bool, default False
        A bar on standard error (one step per column and draw).

    Returns
    -------
    list of dict
        One record per (scheme, T, d) with keys ``scheme`` (str), ``dim`` (int), ``n_samples``
        (int or None for infinite data) and ``predicted`` (float).

    Notes
    -----
    See :func:`predict_errors`.
    """
    int_at_least("n_draws", n_draws, 1)
    law = embedding_law(cfg)
    probs = _probs(cfg).numpy()
    dims = sorted(set(cfg.dims))
    columns = [
        (scheme, size)
        for scheme in cfg.parsed_schemes
        for size in (dict.fromkeys(cfg.n_samples) if scheme.uses_data else [None])
    ]
    # a column is random only through the sample (finite T) or random targets
    draws = [n_draws if size is not None or cfg.target != "mod" else 1 for _, size in columns]
    sums: dict[tuple[str, int | None], np.ndarray] = {}
    counts: dict[int, dict[int, np.ndarray]] = {}
    with progress_bar(sum(draws), "predict", "curve", progress) as bar:
        for (scheme, size), count in zip(columns, draws, strict=True):
            total = np.zeros(len(dims))
            for trial in range(count):
                if size is not None and trial not in counts:
                    counts[trial] = sample_frequencies(cfg, trial)  # every T of that trial
                freq = probs if size is None else counts[trial][size]
                q = scheme_weights(scheme.spec, freq, dims)
                total += predict_errors(probs, _targets(cfg, trial), q, dims, cfg.n_outputs, law)
                bar.update()
            sums[(scheme.spec, size)] = total / count
    return [
        {"scheme": spec, "n_samples": size, "dim": d, "predicted": float(v)}
        for (spec, size), values in sums.items()
        for d, v in zip(dims, values, strict=True)
    ]


def compare_records(
    predictions: Sequence[dict[str, Any]], records: Sequence[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Join predictions with Monte Carlo records on (scheme, T, d).

    Parameters
    ----------
    predictions : sequence of dict
        :func:`predict_config` records.
    records : sequence of dict
        :attr:`ClosedFormResult.records` of the same configuration.

    Returns
    -------
    list of dict
        The predictions with ``mc_mean``, ``mc_sem``, ``rel_error`` = (predicted − mc) / mc and
        ``z`` = (predicted − mc) / sem (how many Monte Carlo standard errors apart).
    """
    index = {(r["scheme"], r["n_samples"], r["dim"]): r for r in records}
    rows = []
    for pred in predictions:
        rec = index[(pred["scheme"], pred["n_samples"], pred["dim"])]
        mc, sem = float(rec["mean"]), float(rec["sem"])
        diff = pred["predicted"] - mc
        rows.append(
            {
                **pred,
                "mc_mean": mc,
                "mc_sem": sem,
                "rel_error": diff / mc if mc > 0 else math.inf,
                "z": diff / sem if sem > 0 else math.inf,
            }
        )
    return rows


def check_min_dim(min_dim: int) -> None:
    """The smallest d of the large-d summaries: an integer ≥ 1."""
    int_at_least("min_dim", min_dim, 1)


def summarise_comparison(rows: list[dict[str, Any]], min_dim: int) -> list[dict[str, Any]]:
    """Per (scheme, T): median and max |relative error| over all d and over d ≥ min_dim, and the
    max absolute error, of the rows of :func:`compare_records`. Points with zero Monte Carlo
    error (relative error undefined) are left out of the relative summaries."""
    check_min_dim(min_dim)
    groups: dict[tuple[str, Any], list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault((row["scheme"], row["n_samples"]), []).append(row)
    out = []
    for (scheme, size), group in groups.items():
        rel = np.abs([r["rel_error"] for r in group if r["mc_mean"] > 0])
        big = np.abs([r["rel_error"] for r in group if r["mc_mean"] > 0 and r["dim"] >= min_dim])
        out.append(
            {
                "scheme": scheme,
                "n_samples": size,
                "median_abs_rel": float(np.median(rel)) if rel.size else None,
                "max_abs_rel": float(rel.max()) if rel.size else None,
                "median_abs_rel_large_d": float(np.median(big)) if big.size else None,
                "max_abs_rel_large_d": float(big.max()) if big.size else None,
                "max_abs_error": max(abs(r["predicted"] - r["mc_mean"]) for r in group),
            }
        )
    return out

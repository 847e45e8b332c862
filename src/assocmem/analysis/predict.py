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
from typing import Any

import numpy as np
import torch

from assocmem import rng

# The per-token model, re-exported (``as``): the studies import it from here.
from assocmem.analysis.score_integral import EmbeddingLaw as EmbeddingLaw
from assocmem.analysis.score_integral import token_success as token_success
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

"""A straightforward reference for closed-form memories: build W explicitly, take the argmax.

Independent of the kernel's algebra and of the scheme registry: the weightings are written out
here from their definitions (docs/science/schemes.md). Only the random draws are shared (same
streams, same functions), so both see the same embeddings and samples.
"""

import math

import numpy as np
import torch

from assocmem import rng
from assocmem.closed_form.config import ClosedFormConfig
from assocmem.embeddings import standard_coordinates
from assocmem.laws.tokens import (
    mod_targets,
    noisy_labels,
    random_targets,
    sample_tokens,
    zipf_probabilities,
)

DATA_SCHEMES = ("empirical", "seen_once", "empirical_threshold", "min_count")


def _size(rule: str, d: int, n: int) -> int:
    if rule.isdigit():
        value = int(rule)
    elif rule == "d/log d":
        value = math.floor(d / math.log(d)) if d > 1 else 1
    else:
        value = math.floor(d / float(rule.split("/")[1])) if "/" in rule else d
    return min(max(value, 1), n)


def _top(freq: np.ndarray, size: int) -> np.ndarray:
    """1 on the `size` most frequent tokens with positive frequency (ties: lower index first)."""
    order = sorted(range(len(freq)), key=lambda x: (-freq[x], x))
    mask = np.zeros(len(freq))
    for x in order[:size]:
        if freq[x] > 0:
            mask[x] = 1.0
    return mask


def naive_weights(spec: str, probs: np.ndarray, freq: np.ndarray, d: int) -> np.ndarray:
    name, _, rest = spec.partition(":")
    params = dict(item.split("=") for item in rest.split(",") if item)
    rho = float(params.get("rho", "0" if name == "empirical_threshold" else "1"))
    n = len(probs)
    if name == "population":
        return np.where(probs > 0, probs**rho, 0.0)
    if name == "uniform":
        return np.ones(n)
    if name == "threshold":
        return _top(probs, _size(params.get("P", "d/8"), d, n))
    if name == "empirical":
        return np.where(freq > 0, freq**rho, 0.0)
    if name == "seen_once":
        return (freq > 0).astype(float)
    if name == "empirical_threshold":
        top = _top(freq, _size(params.get("P", "d/8"), d, n))
        return top * np.where(freq > 0, freq**rho, 0.0)
    if name == "min_count":  # a law (T = ∞, non-integer frequencies) passes every k
        k = int(params.get("k", "1")) if np.all(freq == np.round(freq)) else 0
        return _top(freq, _size(params.get("P", "d/8"), d, n)) * (freq >= k)
    raise ValueError(spec)


def _embedding_at(kind: str, nested: str, coords: np.ndarray, d: int) -> np.ndarray:
    """(rows, d) embeddings at dimension d from raw (d_max, rows) coordinates."""
    raw = coords[:d].T
    d_max = coords.shape[0]
    if kind == "gaussian":
        return raw / math.sqrt(d_max if nested == "truncate" else d)
    norms = np.linalg.norm(coords.T if nested == "truncate" else raw, axis=1, keepdims=True)
    return raw / norms


def naive_errors(cfg: ClosedFormConfig, trial: int) -> dict[tuple[str, int | None, int], float]:
    """Error of every (scheme, T, d) for one trial, with W formed explicitly (float64)."""
    probs = zipf_probabilities(cfg.n_inputs, cfg.alpha).numpy()
    targets = _targets(cfg, trial)
    out = {}
    for key, scores in naive_scores(cfg, trial).items():
        best = scores.max(axis=1)
        unique = (scores == best[:, None]).sum(axis=1) == 1
        correct = unique & (scores.argmax(axis=1) == targets)
        out[key] = float(probs @ (~correct))
    return out


def _targets(cfg: ClosedFormConfig, trial: int) -> np.ndarray:
    if cfg.target == "mod":
        return mod_targets(cfg.n_inputs, cfg.n_outputs).numpy()
    gen = rng.generator(cfg.seed, "targets", trial)
    return random_targets(cfg.n_inputs, cfg.n_outputs, gen).numpy()


def _majority(joint: np.ndarray, ties: np.ndarray) -> np.ndarray:
    """(N, M) one-hot of each token's most frequent label, ties to the highest priority."""
    out = np.zeros_like(joint)
    for x, row in enumerate(joint):
        if row.sum() > 0:
            tied = [y for y in range(len(row)) if row[y] == row.max()]
            out[x, max(tied, key=lambda y: ties[x, y])] = 1.0
    return out


def naive_scores(
    cfg: ClosedFormConfig, trial: int
) -> dict[tuple[str, int | None, int], np.ndarray]:
    """Scores (N, M) of every (scheme, T, d) for one trial, with W formed explicitly (float64)."""
    n, m = cfg.n_inputs, cfg.n_outputs
    probs_t = zipf_probabilities(n, cfg.alpha)
    probs = probs_t.numpy()
    targets = _targets(cfg, trial)
    dims = sorted(set(cfg.dims))
    finite = sorted({t for t in cfg.n_samples if t is not None})
    counts, label_laws = {}, {}
    eps = cfg.label_noise
    population_law = np.where(
        np.arange(m)[None, :] == targets[:, None], 1 - eps, eps / max(m - 1, 1)
    )
    if cfg.label_rule == "majority":  # the most probable label is f*(x)
        population_law = (np.arange(m)[None, :] == targets[:, None]).astype(float)
    ties = None
    if cfg.label_rule == "majority":
        gen = rng.generator(cfg.seed, "label_ties", trial)
        ties = torch.rand(m, n, generator=gen, dtype=torch.float64).numpy().T  # (N, M)
    if finite:
        tokens = sample_tokens(probs_t, max(finite), rng.generator(cfg.seed, "data", trial))
        labels = torch.as_tensor(targets)[tokens]
        if eps > 0:
            labels = noisy_labels(labels, m, eps, rng.generator(cfg.seed, "labels", trial))
        tokens_np, labels_np = tokens.numpy(), labels.numpy()
        for size in finite:
            joint = np.zeros((n, m))
            np.add.at(joint, (tokens_np[:size], labels_np[:size]), 1.0)
            counts[size] = joint.sum(axis=1)
            label_laws[size] = joint / np.maximum(counts[size], 1)[:, None]
            if ties is not None:
                label_laws[size] = _majority(joint, ties)
    dt = torch.float64
    e_gen = rng.generator(cfg.seed, "embeddings", trial)
    u_gen = rng.generator(cfg.seed, "output_embeddings", trial)
    # Orthogonal embeddings: the canonical basis (the scores are rotation invariant).
    if cfg.embedding == "orthogonal":
        inputs = {d: np.eye(d)[:n] for d in dims}
    else:
        coords = standard_coordinates(n, dims[-1], e_gen, dtype=dt).numpy()
        inputs = {d: _embedding_at(cfg.embedding, cfg.nested, coords, d) for d in dims}
    if cfg.output_embedding == "orthogonal":
        outputs = {d: np.eye(d)[:m] for d in dims}
    else:
        coords_u = standard_coordinates(m, dims[-1], u_gen, dtype=dt).numpy()
        outputs = {d: _embedding_at(cfg.output_embedding, cfg.nested, coords_u, d) for d in dims}
    out: dict[tuple[str, int | None, int], np.ndarray] = {}
    for spec in cfg.schemes:
        uses_data = spec.split(":")[0] in DATA_SCHEMES
        sizes: list[int | None] = list(dict.fromkeys(cfg.n_samples)) if uses_data else [None]
        for t in sizes:
            freq = probs if t is None else counts[t]
            law = population_law if t is None else label_laws[t]  # (N, M): stored label law
            for d in dims:
                q = naive_weights(spec, probs, freq, d)
                e, u = inputs[d], outputs[d]
                w = sum(q[x] * np.outer(law[x] @ u, e[x]) for x in range(n))  # Σ q u_y L eᵀ
                out[(spec, t, d)] = e @ np.asarray(w).T @ u.T  # scores[x, y] = u_yᵀ W e_x
    return out

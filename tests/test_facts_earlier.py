"""The earlier questions at M = N (issue 37, criterion 2d; studies/facts/earlier.py): the edit
capacity and the equal-width comparison that the facts study reads from the editing and
superposition run kinds' records, against naive explicit implementations at small sizes (W built
as a d × d matrix, edited, every token counted), and the specs' settings."""

import math

import numpy as np
import pytest
import torch

from assocmem.experiments.experiment import parse_sweeps
from assocmem.experiments.frames import StoredFrames
from assocmem.studies.editing.runs import EditingConfig, drawn_embeddings, edit_plan
from assocmem.studies.editing.summary import predicted
from assocmem.studies.facts.earlier import (
    QUICK_N,
    capacity_summary,
    earlier_kinds,
    earlier_sweeps,
    edit_capacities,
    width_gaps,
)
from assocmem.studies.superposition.memory import head_coordinates, head_embeddings
from assocmem.sweep.execute import run_sweep

N, DIMS, TRIALS = 40, [16, 32], 3  # M = N = 40: every answer its own output
ZIPF = 2.0


def _stored(raw: dict, name: str, tmp_path) -> "StoredFrames":
    specs = parse_sweeps({name: raw}, "quick", "cpu")
    run_sweep(specs[name], tmp_path / "runs.db")
    return StoredFrames(tmp_path / "runs.db", specs)


def _zipf(n: int) -> np.ndarray:
    p = (np.arange(n) + 1.0) ** -ZIPF
    return p / p.sum()


def _wrong(scores: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """Tokens whose target is not the strict argmax of their scores (N, M)."""
    rows = np.arange(len(targets))
    others = scores.copy()
    others[rows, targets] = -np.inf
    return ~(scores[rows, targets] > others.max(axis=1))


def naive_edit_capacity(cfg: EditingConfig, trial: int) -> int | None:
    """ROME (C = I) edits of W = Σ_x 1{x < d/8} u_{f*(x)} e_xᵀ built explicitly (d × d), f* the
    identity at M = N, in the trial's order: the first k at which the p-weighted error of the
    tokens not edited rises above 1.1 × its value before the edits (None: never)."""
    n, d = cfg.n_inputs, cfg.dim
    E, U = drawn_embeddings(cfg, trial)  # (N, d), (M, d): the trial's draws
    targets, probs = np.arange(n) % cfg.n_outputs, _zipf(n)
    q = (np.arange(n) < d / 8).astype(float)
    W = sum(q[x] * np.outer(U[targets[x]], E[x]) for x in range(n))  # (d, d)
    scores = E @ W.T @ U.T  # (N, M)
    wrong_scores = [np.delete(scores[x], targets[x]) for x in range(n)]
    sigma = math.sqrt(np.mean([np.var(w, ddof=1) for w in wrong_scores]))  # the margin's unit
    before = _wrong(scores, targets)
    order, new = edit_plan(cfg, trial)
    left = np.ones(n, dtype=bool)
    for j in range(min(cfg.max_edits, n - 1)):
        x, y0, y1 = int(order[j]), int(targets[order[j]]), int(new[j])
        s = U @ W @ E[x]  # the token's M scores
        step = U[y1] - U[y0]
        need = [0.0]  # the smallest λ ≥ 0 with s_y1 − s_y ≥ m for every y it can pass
        for y in range(cfg.n_outputs):
            reach = (U[y1] - U[y]) @ step
            if y != y1 and reach > 0:
                need.append((cfg.margin * sigma - (s[y1] - s[y])) / reach)
        W = W + max(need) * np.outer(step, E[x]) / (E[x] @ E[x])  # ΔW = (v − W k) kᵀ / kᵀk
        left[x] = False
        after = _wrong(E @ W.T @ U.T, targets)
        mass = probs[left].sum()
        if probs[left] @ after[left] / mass > (1 + cfg.rise) * (probs[left] @ before[left] / mass):
            return j + 1
    return None


def test_edit_capacity_at_m_equals_n_matches_an_explicit_w(tmp_path):
    """The editing kind's records at M = N, read by edit_capacities, give the capacity of W
    built and edited explicitly, trial by trial (fails if the records' columns were misread,
    e.g. the C = I and covariance methods swapped, or an unreached search not capped)."""
    raw = {
        "kind": "editing",
        "trials": TRIALS,
        "base": {"memory": "threshold:P=d/8", "n_inputs": N, "n_outputs": N, "alpha": ZIPF,
                 "max_edits": N, "checkpoints": [1, 2, 4], "band_edits": 2},
        "axes": {"dim": DIMS},
    }  # fmt: skip
    frame = _stored(raw, "edits", tmp_path).edits
    caps = edit_capacities(frame)
    assert len(caps) == len(DIMS) * TRIALS
    # the theory beside them, at the runs' own settings: the editing study's prediction
    theory = capacity_summary(frame).set_index("dim")["theory"]
    for dim in DIMS:
        study = predicted("threshold:P=d/8", ZIPF, N, dim, N, 1.0, "rome", rise=0.1, max_edits=N)
        assert study is not None and theory[dim] == study.capacity
    reached = 0
    for _, row in caps.iterrows():
        cfg = EditingConfig(memory="threshold:P=d/8", n_inputs=N, n_outputs=N,
                            dim=int(row["dim"]), max_edits=N, checkpoints=(1, 2, 4))  # fmt: skip
        naive = naive_edit_capacity(cfg, int(row["trial"]))
        assert row["reached"] == (naive is not None)
        assert row["capacity"] == (naive if naive is not None else N - 1)
        reached += naive is not None
    assert reached > 0  # the comparison reaches the rise at least once


def naive_width_error(n: int, dim: int, heads: int, trial: int, scheme: str) -> float:
    """The p-weighted error of H heads of d/H, each W_h = Σ_x q(x) u^h_{f*(x)} (e^h_x)ᵀ built
    explicitly, scores summed, f* the identity (M = N); q at the total width d."""
    probs, targets = _zipf(n), np.arange(n)
    q = probs if scheme == "population" else (np.arange(n) < dim / 8).astype(float)
    d_h, total = dim // heads, np.zeros((n, n))
    for h in range(heads):
        coords = [
            head_coordinates(0, trial, h, n, d_h, f"superposition/{s}", torch.float64)
            for s in ("inputs", "outputs")
        ]
        E, U = (t.numpy() for t in head_embeddings(*coords, d_h))
        W = sum(q[x] * np.outer(U[targets[x]], E[x]) for x in range(n))  # (d_h, d_h)
        total += E @ W.T @ U.T
    return float(probs @ _wrong(total, targets))


def test_equal_width_at_m_equals_n_matches_explicit_heads(tmp_path):
    """The superposition kind's records at M = N, read by width_gaps, give the errors of
    explicitly built heads (float64), and their paired gap, trial by trial."""
    schemes = ["threshold:P=d/8", "population"]
    raw = {
        "kind": "superposition",
        "trials": TRIALS,
        "base": {"n_inputs": N, "n_outputs": N, "alpha": ZIPF, "dims": DIMS, "heads": [1, 2, 4],
                 "budgets": ["width"], "schemes": schemes, "arrangements": ["same"],
                 "dtype": "float64"},
    }  # fmt: skip
    gaps = width_gaps(_stored(raw, "parallel", tmp_path).parallel)
    assert len(gaps) == len(schemes) * len(DIMS) * 2
    for _, cell in gaps.iterrows():
        dim, heads, scheme = int(cell["dim"]), int(cell["heads"]), str(cell["scheme"])
        one = [naive_width_error(N, dim, 1, t, scheme) for t in range(TRIALS)]
        many = [naive_width_error(N, dim, heads, t, scheme) for t in range(TRIALS)]
        assert cell["error_one"] == pytest.approx(np.mean(one), abs=1e-12)
        assert cell["error_heads"] == pytest.approx(np.mean(many), abs=1e-12)
        assert cell["gap"] == pytest.approx(np.mean(np.subtract(many, one)), abs=1e-12)
        assert cell["head_dim"] == dim // heads


def test_the_specs_put_m_equals_n_beside_m_equals_5():
    """Quick and full: M ∈ {5, N} at one N, the kinds registered, quick N = QUICK_N."""
    earlier_kinds()
    for scale, n in (("quick", QUICK_N), ("full", 1000)):
        for raw in earlier_sweeps(scale).values():
            assert raw["base"]["n_inputs"] == n
            assert raw["axes"]["n_outputs"] == [5, n]
            assert raw["base"]["alpha"] == ZIPF

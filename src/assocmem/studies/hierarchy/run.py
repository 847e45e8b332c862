"""Run the closed-form hierarchy of :mod:`assocmem.studies.hierarchy.memory`: every trial's exact
population errors of memory 1, memory 2, their hard and soft compositions, and the direct memory.

A trial's numbers depend only on its config, seed and index (its own named streams), never on
which trials run beside it.
"""

import time
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from assocmem.laws.tokens import zipf_probabilities
from assocmem.ops.population import PopulationError, strict_argmax, wrong_tokens
from assocmem.ops.scores import memory_scores
from assocmem.runtime import intra_op_threads
from assocmem.schemes import parse_scheme
from assocmem.studies.hierarchy.memory import (
    PARITIES,
    HierarchyConfig,
    concept_law,
    concept_map,
    draw_coordinates,
    embedding_at,
    scheme_scores,
    token_frequencies,
)

# Per-trial metrics: name → axes after the trial axis (P parities, S schemes, D dims).
METRICS = {
    "direct": ("scheme", "dim"),  # the direct memory's error
    "first": ("parity", "scheme", "dim"),  # E₁: memory 1 on x → f₁(x)
    "second": ("parity", "dim"),  # E₂: hard memory 2 on z → f₂(z), under p₂
    "second_soft": ("parity", "dim"),  # memory 2 reading c_z (the soft composition's)
    "hard": ("parity", "scheme", "dim"),  # the hard composition
    "soft": ("parity", "scheme", "dim"),  # the soft composition W₂ˢ W₁
    "both_wrong": ("parity", "scheme", "dim"),  # B: memory 1 wrong on x, memory 2 on f₁(x)
    "lucky": ("parity", "scheme", "dim"),  # L: a wrong concept, the right output
}


@dataclass(frozen=True)
class HierarchyResult:
    """Per-trial errors of :func:`run_hierarchy`.

    Attributes
    ----------
    config : HierarchyConfig
    trials : list of int
    hidden_dims : dict of str to tuple of int
        The hierarchy's h at each d, by parity ("matrix", "embeddings").
    metrics : dict of str to numpy.ndarray
        By name of :data:`METRICS`: arrays (R, S, D) for ``direct``, (R, P, D) for ``second``
        and ``second_soft``, (R, P, S, D) for the others; R trials, P parities in
        :data:`~assocmem.studies.hierarchy.memory.PARITIES` order, S schemes in ``config.schemes``
        order, D dims. Each is an exact p-weighted population error (or part of one).
    wall_seconds : float
    """

    config: HierarchyConfig
    trials: list[int]
    hidden_dims: dict[str, tuple[int, ...]]
    metrics: dict[str, np.ndarray]
    wall_seconds: float


class _Trial:
    """One trial's draws and the memories' errors at each hidden dimension."""

    def __init__(self, cfg: HierarchyConfig, trial: int, error: PopulationError) -> None:
        self.cfg, self.error = cfg, error
        self.f1 = concept_map(cfg, trial).to(cfg.device)
        self.f2 = torch.arange(cfg.n_concepts, device=cfg.device) % cfg.n_outputs
        self.targets = self.f2[self.f1]  # y = f₂(f₁(x))
        self.freq = token_frequencies(cfg, trial)
        self.freq2 = concept_law(self.freq, self.f1.cpu(), cfg.n_concepts)
        self.coords = draw_coordinates(cfg, trial)

    def weights(self, freq: torch.Tensor, specs: Iterable[Any], dim: int) -> torch.Tensor:
        """(S, n) weights of each scheme at dimension d, on ``freq`` (n,)."""
        rows = [scheme.weights(freq[None], [dim])[0, 0] for scheme in specs]
        return torch.stack(rows).to(self.cfg.device)

    def direct(self, dim: int) -> np.ndarray:
        """The direct memory's error for each scheme at d: (S,)."""
        inputs = embedding_at(self.coords["direct_inputs"], dim, unit=False)
        outputs = embedding_at(self.coords["direct_outputs"], dim, unit=True)
        q = self.weights(self.freq, self.cfg.parsed, dim)
        scores = scheme_scores(inputs, outputs, self.targets, q)
        return self.error(wrong_tokens(scores, self.targets))[0].cpu().numpy()

    def first_scores(self, hiddens: list[int]) -> Iterator[tuple[int, torch.Tensor]]:
        r"""Memory 1's scores :math:`c_z^\top W_1 e_x` (S, N, K) at each h of ``hiddens``
        (increasing).

        Two exact routes, chosen by their cost from the sizes alone (so a config always takes
        the same one): :math:`E (E^\top \operatorname{diag}(q) F) G` at each h (O(N·h·S·K)), or, for
        many concepts, the token Gram :math:`E E^\top` grown coordinate block by block over the
        nested h (O(N²·h_max) in all) and scattered into concepts (O(S·N·n) per h).
        """
        cfg, f1, coords = self.cfg, self.f1, self.coords["inputs"]
        n, k, s = cfg.n_inputs, cfg.n_concepts, len(cfg.schemes)
        by_gram = n * n * hiddens[-1] < sum(n * h * s * k for h in hiddens)
        raw, done = coords.new_zeros((n, n) if by_gram else (0, 0)), 0
        for hidden in hiddens:
            concepts = embedding_at(self.coords["concepts"], hidden, unit=True)  # c_z (K, h)
            q1 = self.weights(self.freq, cfg.parsed, hidden)  # (S, N)
            if not by_gram:
                inputs = embedding_at(coords, hidden, unit=False)
                yield hidden, scheme_scores(inputs, concepts, f1, q1)
                continue
            raw += coords[done:hidden].T @ coords[done:hidden]  # Σ_{k<h} coordinate k's outer
            done = hidden
            stored = (q1 > 0).any(0).nonzero()[:, 0]
            gram = raw[:, stored] / hidden  # e_x·e_x' for the stored x', (N, n)
            rows = gram[None] * q1[:, None, stored].to(gram.dtype)  # (S, N, n)
            by_concept = rows.new_zeros(s, n, k).index_add_(2, f1[stored], rows)
            yield hidden, by_concept @ (concepts @ concepts.T)

    def hierarchy(self, hidden: int, first: torch.Tensor) -> dict[str, np.ndarray]:
        """Every hierarchy metric at d₁ = d₂ = h from memory 1's scores ``first`` (S, N, K):
        (S,) each, or a scalar for memory 2."""
        cfg, f1, targets = self.cfg, self.f1, self.targets
        concepts = embedding_at(self.coords["concepts"], hidden, unit=True)  # c_z (K, h)
        outputs = embedding_at(self.coords["outputs"], hidden, unit=True)  # u_y (M, h)
        wrong1 = wrong_tokens(first, f1)  # (S, N): f₁(x) is not the strict maximum
        # Memory 2 (one scheme): hard, on its own inputs c'_z; soft, reading c_z.
        q2 = self.weights(self.freq2, [parse_scheme(cfg.concept_scheme)], hidden)  # (1, K)
        concept_inputs = embedding_at(self.coords["concept_inputs"], hidden, unit=False)
        second = scheme_scores(concept_inputs, outputs, self.f2, q2)[0]  # (K, M)
        stored = q2[0].to(first.dtype)[:, None] * torch.nn.functional.one_hot(
            self.f2, cfg.n_outputs
        ).to(first.dtype)  # (K, M): q₂(z) 1{f₂(z) = y}
        readout = stored @ (outputs @ outputs.T)  # A[z, y] = q₂(z) u_y·u_{f₂(z)}
        # u_yᵀ W₂ˢ c_z, (K, M): (C Cᵀ)(A G)
        second_soft = memory_scores(concepts, stored[:, None], outputs, order="gram")[:, 0]
        wrong2 = wrong_tokens(second[None], self.f2)[0][f1]  # memory 2 wrong on f₁(x), (N,)
        wrong2_soft = wrong_tokens(second_soft[None], self.f2)[0][f1]
        answer2 = strict_argmax(second)  # g₂(z), −1 on a tie
        picked = strict_argmax(first)  # ẑ(x), (S, N)
        hard = torch.where(picked >= 0, answer2[picked.clamp(min=0)], -1)  # (S, N)
        right = hard == targets
        soft = wrong_tokens(first @ readout, targets)  # u_yᵀ W₂ˢ W₁ e_x
        tables = {
            "first": wrong1,
            "hard": ~right,
            "soft": soft,
            "both_wrong": wrong1 & wrong2,
            "lucky": wrong1 & right,
            "second": wrong2[None],
            "second_soft": wrong2_soft[None],
        }
        errors = self.error(torch.cat(list(tables.values())))[0].cpu().numpy()  # one product
        bounds = np.cumsum([0, *(len(t) for t in tables.values())])
        out = {name: errors[bounds[i] : bounds[i + 1]] for i, name in enumerate(tables)}
        return {name: v[0] if name.startswith("second") else v for name, v in out.items()}


def run_hierarchy(cfg: HierarchyConfig, trials: Iterable[int] | None = None) -> HierarchyResult:
    r"""Exact population errors of the hierarchy and of the direct memory, trial by trial.

    Parameters
    ----------
    cfg : HierarchyConfig
        The problem: N, K, M, α, the concept map, the direct memory's dims, the schemes.
    trials : iterable of int, optional
        Trial indices (default ``[0]``); each trial draws f₁ (balanced maps), the samples
        (finite T) and every embedding from its own streams.

    Returns
    -------
    HierarchyResult
        Errors by :data:`METRICS` name. For every trial, scheme, parity and d:
        :math:`\mathrm{hard} = \mathrm{first} + \mathrm{second} - \mathrm{both\_wrong} -
        \mathrm{lucky}` exactly, so :math:`\mathrm{hard} \le \mathrm{first} + \mathrm{second}` (the
        union bound).

    Notes
    -----
    Memories in series, beyond Cabannes et al. (2024); see the docs: beyond/hierarchy.md.
    """
    start = time.perf_counter()
    trial_ids = list(trials) if trials is not None else [0]
    hidden = {parity: cfg.hidden_dims(parity) for parity in PARITIES}
    error = PopulationError(zipf_probabilities(cfg.n_inputs, cfg.alpha).to(cfg.device))
    n_s, n_d, n_p = len(cfg.schemes), len(cfg.dims), len(PARITIES)
    shapes = {"direct": (n_s, n_d), "second": (n_p, n_d), "second_soft": (n_p, n_d)}
    metrics = {
        name: np.zeros((len(trial_ids), *shapes.get(name, (n_p, n_s, n_d)))) for name in METRICS
    }
    # Small tensor programs: one intra-op thread each, trials side by side on the cores (a
    # trial's numbers do not depend on which thread computes it).
    # As many trials at once as the memory budget holds (each fits it: checked by the config).
    fits = int(cfg.memory_gb * 2**30 // max(cfg.working_set_bytes(), 1.0))
    workers = max(1, min(len(trial_ids), torch.get_num_threads(), fits))
    with intra_op_threads(1), ThreadPoolExecutor(workers) as pool:
        tables = pool.map(lambda t: _one_trial(cfg, t, error, hidden), trial_ids)
        for row, table in enumerate(tables):
            for name, values in table.items():
                metrics[name][row] = values
    return HierarchyResult(cfg, trial_ids, hidden, metrics, time.perf_counter() - start)


def _one_trial(
    cfg: HierarchyConfig, trial: int, error: PopulationError, hidden: dict[str, tuple[int, ...]]
) -> dict[str, np.ndarray]:
    """Every metric of one trial, shaped as :data:`METRICS` without the trial axis."""
    n_s, n_d, n_p = len(cfg.schemes), len(cfg.dims), len(PARITIES)
    shapes = {"direct": (n_s, n_d), "second": (n_p, n_d), "second_soft": (n_p, n_d)}
    out = {name: np.zeros(shapes.get(name, (n_p, n_s, n_d))) for name in METRICS}
    with torch.inference_mode():
        draws = _Trial(cfg, trial, error)
        for i, dim in enumerate(cfg.dims):
            out["direct"][:, i] = draws.direct(dim)
        hiddens = sorted({h for dims in hidden.values() for h in dims})
        done = {h: draws.hierarchy(h, first) for h, first in draws.first_scores(hiddens)}
    for p, parity in enumerate(PARITIES):
        for i, h in enumerate(hidden[parity]):
            for name, values in done[h].items():
                out[name][p, ..., i] = values
    return out

"""Closed-form associative memories with exact population error, without forming W.

For ``W_q = Σ_x q(x) u_{f*(x)} e_xᵀ`` (PAPER.md §2) the score of output y for input x is

    u_yᵀ W e_x = Σ_{y'} (u_y·u_{y'}) · Σ_{x': f*(x')=y'} q(x') (e_{x'}·e_x),

so with ``S = Eᵀ diag(q) F`` (d×M, F the one-hot N×M target matrix) and ``G = U Uᵀ`` (M×M),
``scores = (E S) G``: O(N·d·M) work per weighting instead of the O(N·d²) of forming W
(ARCHITECTURE.md, idea 1). Row k of S depends only on coordinate k of the embeddings, so every
nested d comes from one pass over the coordinates with running sums. Weightings that change with
d (thresholds with P = d/8, or per-d renormalised spherical rows) are recomputed at each d.

Each trial is computed on its own (its own 2-D matrix products), from its own named random
streams, so its numbers are identical whether it runs alone or among many trials, in any chunk.
Orthogonal embeddings are taken as the canonical basis: the scores ``u_yᵀ W e_x`` do not change
when the input and the output spaces are rotated (separately), so this is the same law, and with
it ``E Eᵀ = I`` holds exactly, so the exact ties of unstored tokens stay exact in floating point.

The correct output must be the *strict* maximum: ties count as errors (a memory that stores
nothing about x, scores 0 everywhere, never answers x correctly).
"""

import math
import platform
import socket
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from assocmem import __version__, rng
from assocmem.closed_form.config import ClosedFormConfig, working_set_bytes
from assocmem.embeddings import nested_row_scales, standard_coordinates
from assocmem.laws.tokens import (
    label_law,
    mod_targets,
    noisy_error,
    noisy_labels,
    normalize_probabilities,
    prefix_label_counts,
    random_targets,
    sample_tokens,
    zipf_probabilities,
)
from assocmem.runtime import intra_op_threads
from assocmem.schemes import Scheme

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class Column:
    """One weighting evaluated at every d: a scheme at one sample size (None = infinite data)."""

    scheme: str
    n_samples: int | None


@dataclass
class ClosedFormResult:
    """Per-trial errors of every (column, d), and their summary records.

    errors, head: (n_trials, n_columns, n_dims) float64 — the population error and the part of
    it on the head tokens (the tail part is ``errors - head``). readout: the same shape, the
    calibrated softmax metrics when the config asks for them (``readout = true``).
    """

    config: ClosedFormConfig
    trials: list[int]
    columns: list[Column]
    dims: list[int]
    errors: np.ndarray
    head: np.ndarray
    readout: dict[str, np.ndarray] = field(default_factory=dict)  # cross_entropy, p_correct, beta
    provenance: dict[str, Any] = field(default_factory=dict)

    @property
    def records(self) -> list[dict[str, Any]]:
        """One record per scheme × d × T with mean, std and standard error over trials."""
        out = []
        n = len(self.trials)
        for c, column in enumerate(self.columns):
            for i, dim in enumerate(self.dims):
                values = self.errors[:, c, i]
                std = float(values.std(ddof=1)) if n > 1 else 0.0
                out.append(
                    {
                        "scheme": column.scheme,
                        "dim": dim,
                        "n_samples": column.n_samples,
                        "n_trials": n,
                        "mean": float(values.mean()),
                        "std": std,
                        "sem": std / math.sqrt(n),
                        "head_mean": float(self.head[:, c, i].mean()),
                        "tail_mean": float((values - self.head[:, c, i]).mean()),
                        "errors": values.tolist(),
                        **self._noisy(float(values.mean())),
                        **{f"{k}_mean": float(v[:, c, i].mean()) for k, v in self.readout.items()},
                    }
                )
        return out

    def _noisy(self, error: float) -> dict[str, float]:
        """With label noise ε: the error against noisy labels and the Bayes floor ε.

        The Bayes predictor is f* (ε < (M−1)/M); a predictor wrong (vs f*) on mass E has error
        ``ε + (1 − ε M/(M−1)) E`` against the noisy labels, so its excess error is ∝ E.
        """
        eps, m = self.config.label_noise, self.config.n_outputs
        if eps == 0:
            return {}
        return {"noisy_mean": noisy_error(error, eps, m), "bayes_error": eps}

    def to_frame(self) -> "pd.DataFrame":
        """Tidy rows, one per trial: scheme, dim, n_samples (inf = ∞), trial, error, head, tail."""
        import pandas as pd

        rows = [
            {
                "scheme": column.scheme,
                "dim": dim,
                "n_samples": math.inf if column.n_samples is None else column.n_samples,
                "trial": trial,
                "error": self.errors[r, c, i],
                "head": self.head[r, c, i],
                "tail": self.errors[r, c, i] - self.head[r, c, i],
            }
            for r, trial in enumerate(self.trials)
            for c, column in enumerate(self.columns)
            for i, dim in enumerate(self.dims)
        ]
        return pd.DataFrame(rows)

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": "closed_form",
            "config": self.config.to_dict(),
            "records": self.records,
            "provenance": self.provenance,
        }


class _Problem:
    """What every trial shares: the law p, the columns, the dims, the head mask."""

    def __init__(self, cfg: ClosedFormConfig) -> None:
        self.cfg = cfg
        self.device = torch.device(cfg.device)
        self.dtype = cfg.torch_dtype
        if cfg.probabilities is not None:
            probs = normalize_probabilities(cfg.probabilities)
        elif cfg.words is not None:
            from assocmem.laws.words import word_distribution

            probs = torch.from_numpy(word_distribution(cfg.words, cfg.n_inputs).probabilities)
        else:
            probs = zipf_probabilities(cfg.n_inputs, cfg.alpha)
        self.probs_cpu = probs
        self.probs = probs.to(self.device)
        self.dims = sorted(set(cfg.dims))
        self.sample_sizes = list(dict.fromkeys(cfg.n_samples))
        self.finite_sizes = sorted({t for t in self.sample_sizes if t is not None})
        self.schemes = cfg.parsed_schemes
        self.columns = [
            Column(s.spec, t)
            for s in self.schemes
            for t in (self.sample_sizes if s.uses_data else [None])
        ]
        n_head = math.ceil(cfg.head_fraction * cfg.n_inputs)
        head_tokens = torch.sort(probs, descending=True, stable=True).indices[:n_head]
        head = torch.zeros(cfg.n_inputs, dtype=torch.float64)
        head[head_tokens] = 1.0
        self.head_probs = (head * probs).to(self.device)
        self.all_per_dim = cfg.embedding == "orthogonal" or (
            cfg.embedding == "spherical" and cfg.nested == "renormalize"
        )
        # Columns are computed as [fixed columns, varying columns]; order[i] is the position of
        # the i-th computed column in self.columns.
        fixed: list[int] = []
        varying: list[int] = []
        for scheme in self.schemes:
            start = len(fixed) + len(varying)
            width = len(self.sample_sizes) if scheme.uses_data else 1
            (fixed if self.is_fixed(scheme) else varying).extend(range(start, start + width))
        self.order = fixed + varying

    def is_fixed(self, scheme: Scheme) -> bool:
        """A scheme's weights are the same at every d (one pass of running sums serves all d)."""
        return not scheme.uses_dim and not self.all_per_dim

    def targets(self, trial: int) -> torch.Tensor:
        cfg = self.cfg
        if cfg.target == "mod":
            return mod_targets(cfg.n_inputs, cfg.n_outputs)
        return random_targets(
            cfg.n_inputs, cfg.n_outputs, rng.generator(cfg.seed, "targets", trial)
        )

    def population_labels(self, targets: torch.Tensor) -> torch.Tensor:
        """The label law of each token, (M, N) float64: f*(x) w.p. 1 − ε, else uniform."""
        return label_law(targets.cpu(), self.cfg.n_outputs, self.cfg.label_noise).T

    def sample_statistics(
        self, trial: int, targets: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Frequencies (R, N) and stored label laws (R, M, N) for each sample size, float64.

        Row r is for ``sample_sizes[r]``: counts n(x) of the first T samples and the empirical
        label law n(x, y)/n(x) (zero for unseen x), or p and the population label law for T = ∞.
        """
        cfg = self.cfg
        n, m, eps = cfg.n_inputs, cfg.n_outputs, cfg.label_noise
        freq = torch.empty(len(self.sample_sizes), n, dtype=torch.float64)
        labels = torch.empty(len(self.sample_sizes), m, n, dtype=torch.float64)
        if self.finite_sizes:
            tokens = sample_tokens(
                self.probs_cpu, max(self.finite_sizes), rng.generator(cfg.seed, "data", trial)
            )
            observed = targets[tokens]
            if eps > 0:
                observed = noisy_labels(observed, m, eps, rng.generator(cfg.seed, "labels", trial))
            joint = prefix_label_counts(tokens, observed, n, m, self.finite_sizes)  # (R_f, M, N)
        for row, size in enumerate(self.sample_sizes):
            if size is None:
                freq[row], labels[row] = self.probs_cpu, self.population_labels(targets)
            else:
                counts = joint[self.finite_sizes.index(size)]
                freq[row] = counts.sum(0)
                labels[row] = counts / freq[row].clamp(min=1)
        return freq.to(self.device), labels.to(self.device)

    def weights(self, trial: int, targets: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """Weights and stored label laws of every column, d-independent columns first.

        Returns fixed_q (K_f, N), varying_q (n_d, K_v, N), fixed_labels (K_f, M, N) and
        varying_labels (K_v, M, N).
        """
        freq, labels = self.sample_statistics(trial, targets)
        population = self.population_labels(targets).to(self.device)[None]  # sample-free schemes
        fixed, varying, fixed_labels, varying_labels = [], [], [], []
        n_d = len(self.dims)
        for scheme in self.schemes:
            source, law = (freq, labels) if scheme.uses_data else (self.probs[None], population)
            q = scheme.weights(source, self.dims)  # (n_d or 1, R, N)
            if self.is_fixed(scheme):
                fixed.append(q[0])
                fixed_labels.append(law)
            else:
                varying.append(q.expand(n_d, *q.shape[1:]))
                varying_labels.append(law)
        n, m = self.cfg.n_inputs, self.cfg.n_outputs
        empty = freq.new_zeros(0, m, n)
        return (
            torch.cat(fixed) if fixed else freq.new_zeros(0, n),
            torch.cat(varying, dim=1) if varying else freq.new_zeros(n_d, 0, n),
            torch.cat(fixed_labels) if fixed_labels else empty,
            torch.cat(varying_labels) if varying_labels else empty,
        )


def _stored(q: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """``(diag(q) L)ᵀ`` for every column: q (..., K, N), label laws Lᵀ (K, M, N) → (..., K·M, N).

    Without label noise L is the one-hot matrix F of f*.
    """
    return (q.unsqueeze(-2) * labels).flatten(-3, -2)


def _stored_end(q: torch.Tensor) -> list[int]:
    """For q (D, K, N): one past the last token with a nonzero weight, at each of the D dims.

    Thresholds store the most frequent tokens, which under Zipf come first: products with the
    stored side only need this prefix of the tokens (a view of the embeddings, no gather).
    """
    nonzero = q.ne(0).any(1)  # (D, N)
    position = torch.arange(1, q.shape[-1] + 1, device=q.device)
    return (nonzero * position).amax(1).clamp(min=1).tolist()


class _Evaluator:
    """Turns class-aggregated scores ``(E S)ᵀ`` into the population error of each column."""

    def __init__(self, problem: _Problem, targets: torch.Tensor) -> None:
        self.m = problem.cfg.n_outputs
        targets = targets.to(problem.device)
        self.target_index = targets[None, None, None, :]  # (1, 1, 1, N)
        self.onehot_t = torch.nn.functional.one_hot(targets, self.m).T.bool()  # (M, N)
        self.probs = problem.probs
        self.head_probs = problem.head_probs
        self.label_law = problem.population_labels(targets).to(problem.device)  # (M, N)
        self.readout = problem.cfg.readout

    def __call__(self, aggregated: torch.Tensor, grams: torch.Tensor) -> dict[str, torch.Tensor]:
        """aggregated: (D, K·M, N), column x = ``Sᵀ e_x`` at each of D dims; grams: (D, M, M).

        Returns metrics, each (D, K): the error and its head part, and with ``readout`` the
        calibrated softmax metrics of :func:`calibrated_softmax`.
        """
        n_dims, _, n = aggregated.shape
        n_cols = aggregated.shape[1] // self.m
        scores = torch.bmm(  # (D·K, M, M) @ (D·K, M, N) -> scores (D, K, M, N)
            grams.repeat_interleave(n_cols, 0), aggregated.view(n_dims * n_cols, self.m, n)
        ).view(n_dims, n_cols, self.m, n)
        metrics = (
            calibrated_softmax(scores, self.label_law, self.probs, self.onehot_t)
            if self.readout
            else {}
        )
        index = self.target_index.expand(n_dims, scores.shape[1], 1, n)
        true = scores.gather(2, index)[:, :, 0]
        other = scores.masked_fill_(self.onehot_t, -math.inf).amax(2)
        wrong = (true <= other).to(torch.float64)  # (D, K, N); ties count as errors
        return {"error": wrong @ self.probs, "head": wrong @ self.head_probs, **metrics}


def calibrated_softmax(
    scores: torch.Tensor,
    law: torch.Tensor,
    probs: torch.Tensor,
    onehot_t: torch.Tensor,
    iterations: int = 40,
    beta_max: float = 1e4,
) -> dict[str, torch.Tensor]:
    """Softmax readout at the best inverse temperature, for every (d, column).

    The scale of ``q`` (and so of the scores) is arbitrary for a closed-form memory, so the
    readout is calibrated: ``β* = argmin_β CE(β)`` with the population cross-entropy
    ``CE(β) = Σ_x p(x) Σ_y L(y|x) (−log softmax(β s_x)_y)`` against the label law L (one-hot
    without label noise). CE is convex in β; damped Newton steps from β = 0, β ∈ [0, β_max] on
    scores scaled to unit standard deviation (a memory that answers every token right has
    CE → 0 as β → ∞, and stops at β_max).

    scores: (D, K, M, N); law: (M, N); probs: (N,). Returns ``cross_entropy``, ``p_correct``
    (Σ_x p(x) softmax(β* s_x)[f*(x)]) and ``beta`` (β* in units of the scores' std), each (D, K).
    """
    s = scores.to(torch.float64)
    s = s / s.std(dim=(2, 3), keepdim=True).clamp(min=1e-300)
    law = law.to(torch.float64)
    target = (s * law).sum(2)  # (D, K, N): E_L[s]
    beta = s.new_zeros(s.shape[0], s.shape[1], 1, 1)
    for _ in range(iterations):
        prob = torch.softmax(beta * s, dim=2)
        mean = (prob * s).sum(2)
        var = (prob * s * s).sum(2) - mean.square()
        grad = (mean - target) @ probs  # dCE/dβ, (D, K)
        hess = var.clamp(min=0) @ probs
        step = grad / hess.clamp(min=1e-12)
        beta = (beta - step.clamp(-10.0, 10.0)[..., None, None]).clamp(0.0, beta_max)
    log_prob = torch.log_softmax(beta * s, dim=2)
    return {
        "cross_entropy": -(law * log_prob).sum(2) @ probs,
        "p_correct": (log_prob.exp() * onehot_t).sum(2) @ probs,
        "beta": beta[..., 0, 0],
    }


def _output_grams(problem: _Problem, trial: int) -> list[torch.Tensor]:
    """``G_d = U_d U_dᵀ`` (M×M) for each d, under the output-embedding law and nested convention."""
    cfg = problem.cfg
    gen = rng.generator(cfg.seed, "output_embeddings", trial, device=problem.device)
    if cfg.output_embedding == "orthogonal":  # canonical basis: U Uᵀ = I exactly
        return [
            torch.eye(cfg.n_outputs, device=problem.device, dtype=problem.dtype)
            for _ in problem.dims
        ]
    coords = standard_coordinates(
        cfg.n_outputs, problem.dims[-1], gen, device=problem.device, dtype=problem.dtype
    )  # (d_max, M)
    scales = nested_row_scales(coords, problem.dims, cfg.output_embedding, cfg.nested)
    grams, running, prev = [], coords.new_zeros(cfg.n_outputs, cfg.n_outputs), 0
    for i, d in enumerate(problem.dims):
        block = coords[prev:d]
        running = running + block.T @ block
        grams.append(scales[i][:, None] * running * scales[i][None, :])
        prev = d
    return grams


@dataclass
class _Draws:
    """Everything random about one trial: targets, weights and label laws, output Grams and the
    raw input coordinates. Drawn ahead of time (in a helper thread) while the previous trial
    computes: the generator is serial, the matrix products are not."""

    targets: torch.Tensor
    weights: tuple[torch.Tensor, ...]  # fixed_q, varying_q, fixed_labels, varying_labels
    grams: torch.Tensor  # (D, M, M)
    coords: torch.Tensor | None  # (d_max, N) raw N(0, 1); None for orthogonal embeddings


def _draw(problem: _Problem, trial: int) -> _Draws:
    cfg = problem.cfg
    with torch.inference_mode():
        targets = problem.targets(trial)
        weights = tuple(w.to(problem.dtype) for w in problem.weights(trial, targets))
        grams = torch.stack(_output_grams(problem, trial))
        coords = None
        if cfg.embedding != "orthogonal":
            gen = rng.generator(cfg.seed, "embeddings", trial, device=problem.device)
            coords = standard_coordinates(
                cfg.n_inputs, problem.dims[-1], gen, device=problem.device, dtype=problem.dtype
            )
    return _Draws(targets, weights, grams, coords)


def _aggregates(
    problem: _Problem, draws: _Draws
) -> tuple[torch.Tensor, torch.Tensor, "_Evaluator"]:
    """One trial's ``(E_d S_d)ᵀ`` (D, K·M, N), its output Grams (D, M, M) and its evaluator."""
    evaluate = _Evaluator(problem, draws.targets)
    fixed_q, varying_q, fixed_labels, varying_labels = draws.weights
    if draws.coords is None:  # orthogonal = canonical basis: E Eᵀ = I, so E S = diag(q) L exactly
        return _stored(varying_q, varying_labels), draws.grams, evaluate
    labels = (fixed_labels, varying_labels)
    aggregated = _nested_scores(problem, draws.coords, fixed_q, varying_q, labels)
    return aggregated, draws.grams, evaluate


def _trial(problem: _Problem, draws: _Draws) -> dict[str, np.ndarray]:
    """Metrics of one trial (error, head, and the readout metrics if asked): (n_columns, n_dims)."""
    aggregated, grams, evaluate = _aggregates(problem, draws)
    order = problem.order
    out = {}
    for name, values in evaluate(aggregated, grams).items():
        out[name] = np.zeros((len(problem.columns), len(problem.dims)))
        out[name][order] = values.T.cpu().numpy()
    return out


def trial_scores(cfg: ClosedFormConfig, trial: int = 0) -> dict[tuple[Column, int], torch.Tensor]:
    """The score matrices ``scores[x, y] = u_yᵀ W_q e_x`` (N, M) of one trial, per (column, d).

    For pictures of what a memory stores (e.g. the softmax of the scores, PAPER.md §5).
    """
    problem = _Problem(cfg)
    with torch.inference_mode():
        aggregated, grams, _ = _aggregates(problem, _draw(problem, trial))
        n_dims, _, n = aggregated.shape
        blocks = aggregated.view(n_dims, -1, cfg.n_outputs, n)  # (D, K, M, N)
        scores = (grams[:, None].transpose(-1, -2) @ blocks).transpose(-1, -2)  # (D, K, N, M)
    order = problem.order
    return {
        (problem.columns[col], d): scores[i, k].cpu()
        for k, col in enumerate(order)
        for i, d in enumerate(problem.dims)
    }


def _dim_groups(dims: Sequence[int], ratio: float = 3.0) -> list[slice]:
    """Consecutive runs of the sorted dims whose largest is at most ``ratio`` × their smallest."""
    groups, first = [], 0
    for i, d in enumerate(dims):
        if d > ratio * dims[first]:
            groups.append(slice(first, i))
            first = i
    groups.append(slice(first, len(dims)))
    return groups


def _nested_scores(
    problem: _Problem,
    coords: torch.Tensor,
    fixed_q: torch.Tensor,
    varying_q: torch.Tensor,
    labels: tuple[torch.Tensor, torch.Tensor],
) -> torch.Tensor:
    """``(E_d S_d)ᵀ`` at every nested d: (D, K·M, N), fixed columns first.

    coords: (d_max, N) raw N(0, 1) coordinates; fixed_q (K_f, N); varying_q (D, K_v, N).
    """
    cfg = problem.cfg
    scales = nested_row_scales(coords, problem.dims, cfg.embedding, cfg.nested)  # (D, N)
    spherical = cfg.embedding == "spherical"
    if spherical:  # the stored side carries the row norms too
        fixed_q = fixed_q * scales[0]  # truncate: fixed along d (renormalize has no fixed columns)
        varying_q = varying_q * scales[:, None, :]
    fixed_stored = _stored(fixed_q, labels[0])  # (K_f·M, N)
    ends = _stored_end(varying_q) if varying_q.shape[1] else [1] * len(problem.dims)
    varying_stored = _stored(varying_q[..., : max(ends)], labels[1][..., : max(ends)])
    n_dims, n_var = varying_stored.shape[:2]  # (D, K_v·M, end)
    n_fixed = fixed_stored.shape[0]
    # Summaries S_dᵀ = (Eᵀ diag(q) L)ᵀ on the first d coordinates, zero beyond: (·, d_max).
    fixed_summary = (coords @ fixed_stored.T).T  # (K_f·M, d_max); this orientation is faster
    var_summary = coords.new_zeros(n_dims, n_var, coords.shape[0])
    if n_var:
        for i, (d, end) in enumerate(zip(problem.dims, ends, strict=True)):
            torch.mm(varying_stored[i, :, :end], coords[:d, :end].T, out=var_summary[i, :, :d])
    n = coords.shape[1]
    out = coords.new_empty(n_dims, n_fixed + n_var, n)
    # Fixed columns: E_d S grows block by block (one pass over the coordinates): the products of
    # the blocks, then a running sum over d.
    prev = 0
    for j, d in enumerate(problem.dims):
        torch.mm(fixed_summary[:, prev:d], coords[prev:d], out=out[j, :n_fixed])
        prev = d
    out[:, :n_fixed] = out[:, :n_fixed].cumsum(dim=0)
    # Columns that change with d: one GEMM per group of similar d (summaries are zero beyond
    # their d, so each group reads only the coordinates below its largest d).
    for group in _dim_groups(problem.dims):
        top = problem.dims[group.stop - 1]
        rows = var_summary[group, :, :top].reshape(-1, top)
        out[group, n_fixed:] = (rows @ coords[:top]).view(group.stop - group.start, n_var, n)
    # query-side row scale (for Gaussian rows, a constant covering the stored side as well)
    return out.mul_((scales if spherical else scales.square())[:, None, :])


def provenance(device: str, wall_seconds: float) -> dict[str, Any]:
    return {
        "assocmem": __version__,
        "torch": torch.__version__,
        "python": platform.python_version(),
        "device": device,
        "host": socket.gethostname(),
        "wall_seconds": round(wall_seconds, 3),
    }


def run_closed_form(
    cfg: ClosedFormConfig,
    *,
    trials: Iterable[int] | None = None,
    progress: bool | Callable[[int], None] = False,
) -> ClosedFormResult:
    """Run every (scheme, d, T) of ``cfg`` for each trial (default ``range(cfg.trials)``).

    ``progress``: True for a progress bar on stderr, or a callable called after each trial.
    """
    from tqdm import tqdm

    start = time.perf_counter()
    problem = _Problem(cfg)
    trial_ids = list(range(cfg.trials) if trials is None else trials)
    bar = tqdm(total=len(trial_ids), desc="closed-form", unit="trial", disable=progress is not True)
    # Draw trial t+1 while trial t computes, when two trials' embeddings fit the memory budget.
    # The generator is serial: leave it one core, and the matrix products the others.
    overlap = 2 * working_set_bytes(cfg) <= cfg.memory_gb * 2**30
    threads = torch.get_num_threads()
    if overlap and problem.device.type == "cpu":
        threads -= 1
    with intra_op_threads(threads):
        metrics = _run_trials(problem, trial_ids, overlap, bar, progress)
    return ClosedFormResult(
        config=cfg,
        trials=trial_ids,
        columns=problem.columns,
        dims=problem.dims,
        errors=metrics.pop("error"),
        head=metrics.pop("head"),
        readout=metrics,
        provenance=provenance(cfg.device, time.perf_counter() - start),
    )


def _run_trials(
    problem: _Problem,
    trial_ids: list[int],
    overlap: bool,
    bar: Any,
    progress: bool | Callable[[int], None],
) -> dict[str, np.ndarray]:
    """Every trial's metrics, (n_trials, n_columns, n_dims) each; see :func:`run_closed_form`."""
    shape = (len(trial_ids), len(problem.columns), len(problem.dims))
    metrics: dict[str, np.ndarray] = {}
    with torch.inference_mode(), bar, ThreadPoolExecutor(max_workers=1) as pool:
        upcoming: Future[_Draws] | None = None
        for row, trial in enumerate(trial_ids):
            draws = upcoming.result() if upcoming else _draw(problem, trial)
            upcoming = None
            if overlap and row + 1 < len(trial_ids):
                upcoming = pool.submit(_draw, problem, trial_ids[row + 1])
            for name, values in _trial(problem, draws).items():
                metrics.setdefault(name, np.zeros(shape))[row] = values
            bar.update()
            if callable(progress):
                progress(row + 1)
    return metrics


def summary_rows(records: Sequence[dict[str, Any]]) -> list[list[Any]]:
    """Table rows (scheme, d, T, mean, sem, head, tail) for printing."""
    return [
        [
            r["scheme"],
            r["dim"],
            "inf" if r["n_samples"] is None else r["n_samples"],
            r["mean"],
            r["sem"],
            r["head_mean"],
            r["tail_mean"],
        ]
        for r in records
    ]

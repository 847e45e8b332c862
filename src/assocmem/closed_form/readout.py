"""From class-aggregated scores to metrics: the population error (and its head part) of each
column, and the calibrated softmax readout."""

import math

import torch

from assocmem.closed_form.problem import Problem


class Evaluator:
    r"""Turns class-aggregated scores :math:`(E S)^\top` into the population error of each
    column."""

    def __init__(self, problem: Problem, targets: torch.Tensor) -> None:
        self.m = problem.cfg.n_outputs
        self.target_flat, self.onehot_t, self.hide_target = problem.shared(
            "target_tables",
            lambda: _target_tables(targets.to(problem.device), self.m, problem.dtype),
        )
        self.probs = problem.probs
        self.population_error = problem.population_error
        self.label_law = problem.population_labels(targets).to(problem.device)  # (M, N)
        self.readout = problem.cfg.readout
        self.workspace = problem.workspace  # the scores' buffer, reused from trial to trial

    def __call__(self, aggregated: torch.Tensor, grams: torch.Tensor) -> dict[str, torch.Tensor]:
        r"""aggregated: (D, K·M, N), column x = :math:`S^\top e_x` at each of D dims; grams:
        (D, M, M).

        Returns metrics, each (D, K): the error and its head part, and with ``readout`` the
        calibrated softmax metrics of :func:`calibrated_softmax`.
        """
        scores = self.scores(aggregated, grams)
        metrics = (
            calibrated_softmax(scores, self.label_law, self.probs, self.onehot_t)
            if self.readout
            else {}
        )
        error, head = self.population_error(self.wrong(scores))  # (D, K)
        return {"error": error, "head": head, **metrics}

    def scores(self, aggregated: torch.Tensor, grams: torch.Tensor) -> torch.Tensor:
        """Scores (D, K, M, N) from aggregated (D, K·M, N) and grams (D, M, M)."""
        n_dims, _, n = aggregated.shape
        n_cols = aggregated.shape[1] // self.m
        shape = (n_dims * n_cols, self.m, n)
        buffer = self.workspace("scores", shape, aggregated.dtype)
        return torch.bmm(  # (D·K, M, M) @ (D·K, M, N) -> scores (D, K, M, N)
            grams.repeat_interleave(n_cols, 0), aggregated.view(shape), out=buffer
        ).view(n_dims, n_cols, self.m, n)

    def wrong(self, scores: torch.Tensor) -> torch.Tensor:
        """(D, K, N) bool: token x is not retrieved (its target is not the strict maximum).

        Adds −∞ to the target's scores in ``scores`` (D, K, M, N), in place: the other
        outputs' maximum is then the maximum over all (a NaN anywhere compares as before).
        """
        n_dims, n_cols, m, n = scores.shape
        true = scores.reshape(n_dims * n_cols, m * n).index_select(1, self.target_flat)
        other = scores.add_(self.hide_target).amax(2)  # x + 0 = x; −0 becomes +0, as ≤ sees it
        return true.view(n_dims, n_cols, n) <= other  # ties count as errors


def _target_tables(
    targets: torch.Tensor, m: int, dtype: torch.dtype
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    r"""For targets (N,): the flat position :math:`y\cdot N + x` of each token's target score in a
    (M, N) block, the (M, N) bool one-hot, and −∞ at each target, 0 elsewhere (in ``dtype``:
    added to the scores it hides the targets, at a tenth of a broadcast ``masked_fill_``)."""
    n = targets.numel()
    flat = targets * n + torch.arange(n, device=targets.device)
    onehot_t = targets[None, :] == torch.arange(m, device=targets.device)[:, None]
    hide = torch.zeros(m, n, device=targets.device, dtype=dtype).masked_fill_(onehot_t, -math.inf)
    return flat, onehot_t, hide


def calibrated_softmax(
    scores: torch.Tensor,
    law: torch.Tensor,
    probs: torch.Tensor,
    onehot_t: torch.Tensor,
    iterations: int = 40,
    beta_max: float = 1e4,
) -> dict[str, torch.Tensor]:
    r"""Softmax readout at the best inverse temperature, for every (d, column).

    The scale of ``q`` (and so of the scores) is arbitrary for a closed-form memory, so the
    readout is calibrated: :math:`\beta^* = \operatorname{argmin}_\beta \operatorname{CE}(\beta)`
    with the population cross-entropy
    :math:`\operatorname{CE}(\beta) = \sum_x p(x) \sum_y L(y|x)\,
    (-\log \operatorname{softmax}(\beta s_x)_y)` against the label law L (one-hot without label
    noise). CE is convex in β; damped Newton steps from β = 0, β ∈ [0, β_max] on scores scaled to
    unit standard deviation (a memory that answers every token right has CE → 0 as β → ∞, and stops
    at β_max).

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

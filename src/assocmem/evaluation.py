"""Exact population metrics of a batch of logit tables (PAPER.md §1).

``E = Σ_x p(x) · 1{argmax_y logits(x) ≠ f*(x)}``; a token counts as correct only when its target
logit is the strict unique maximum (ties are errors). Head: the ⌈N/10⌉ most probable tokens.
"""

import math
from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class PopulationMetrics:
    """Per-run metrics, each of shape (R,)."""

    error: torch.Tensor
    head_error: torch.Tensor
    tail_error: torch.Tensor
    cross_entropy: torch.Tensor  # against the label law L (one-hot f* without label noise)
    finite: torch.Tensor  # bool: every logit of the run is finite
    p_correct: torch.Tensor | None = None  # Σ_x p(x) softmax(logits_x)[f*(x)]


def head_size(n_inputs: int) -> int:
    return math.ceil(n_inputs / 10)


def wrong_tokens(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """(R, N) bool: the target logit is not the strict unique maximum (or is not finite)."""
    target_logit = logits.gather(2, targets.expand(logits.shape[0], -1)[:, :, None])
    others = logits.scatter(2, targets.expand(logits.shape[0], -1)[:, :, None], -math.inf)
    correct = target_logit[:, :, 0] > others.amax(2)
    return ~correct


def population_metrics(
    logits: torch.Tensor,
    targets: torch.Tensor,
    probs: torch.Tensor,
    law: torch.Tensor | None = None,
) -> PopulationMetrics:
    """Metrics of logits (R, N, M) for targets (N,) int64 and probabilities (N,).

    law: the label law L(y|x), (N, M), for label noise; the cross-entropy is
    ``Σ_x p(x) Σ_y L(y|x)(−log softmax(logits_x)_y)`` (the closed-form readout's definition,
    at β = 1: a trained memory's scale is learned). Default: one-hot f*.
    """
    weights = probs.to(torch.float64)
    wrong = wrong_tokens(logits, targets).to(torch.float64) * weights
    head = head_size(logits.shape[1])
    log_probs = torch.log_softmax(logits.to(torch.float64), dim=2)
    index = targets.expand(logits.shape[0], -1)[:, :, None]
    target_log_prob = log_probs.gather(2, index)[:, :, 0]  # (R, N)
    nll = -target_log_prob if law is None else -(log_probs * law.to(torch.float64)).sum(2)
    return PopulationMetrics(
        error=wrong.sum(1),
        head_error=wrong[:, :head].sum(1),
        tail_error=wrong[:, head:].sum(1),
        cross_entropy=(nll * weights).sum(1),
        finite=torch.isfinite(logits).flatten(1).all(1),
        p_correct=(target_log_prob.exp() * weights).sum(1),
    )

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
    cross_entropy: torch.Tensor
    finite: torch.Tensor  # bool: every logit of the run is finite


def head_size(n_inputs: int) -> int:
    return math.ceil(n_inputs / 10)


def wrong_tokens(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """(R, N) bool: the target logit is not the strict unique maximum (or is not finite)."""
    target_logit = logits.gather(2, targets.expand(logits.shape[0], -1)[:, :, None])
    others = logits.scatter(2, targets.expand(logits.shape[0], -1)[:, :, None], -math.inf)
    correct = target_logit[:, :, 0] > others.amax(2)
    return ~correct


def population_metrics(
    logits: torch.Tensor, targets: torch.Tensor, probs: torch.Tensor
) -> PopulationMetrics:
    """Metrics of logits (R, N, M) for targets (N,) int64 and probabilities (N,)."""
    weights = probs.to(torch.float64)
    wrong = wrong_tokens(logits, targets).to(torch.float64) * weights
    head = head_size(logits.shape[1])
    log_probs = torch.log_softmax(logits.to(torch.float64), dim=2)
    nll = -log_probs.gather(2, targets.expand(logits.shape[0], -1)[:, :, None])[:, :, 0]
    return PopulationMetrics(
        error=wrong.sum(1),
        head_error=wrong[:, :head].sum(1),
        tail_error=wrong[:, head:].sum(1),
        cross_entropy=(nll * weights).sum(1),
        finite=torch.isfinite(logits).flatten(1).all(1),
    )

r"""Noisy labels for training runs: each sample's label is f*(x) w.p. 1 − ε, else uniform over
the other M − 1 outputs (the same law as the closed-form kernel's ``label_noise``).

A step sees its batch through per-token weights :math:`c(x)/B` and a per-token label law
:math:`c(x, y)/c(x)` (the kernels' softmax error is :math:`(\operatorname{softmax} - L) \cdot c/B`,
which is the mean cross-entropy gradient over the batch's samples); full-batch training uses p(x)
and the population label law, the expected gradient over noisy labels.
"""

import torch

from assocmem.laws.tokens import noisy_labels
from assocmem.rng import generator
from assocmem.training.config import TrainConfig


def draw_labels(cfg: TrainConfig, clean: torch.Tensor) -> torch.Tensor | None:
    """A run's noisy labels of its samples (clean: (T,) targets f*(x_t)), or None when ε = 0.

    Drawn from the run's own stream ``labels`` keyed by (seed, N, M): independent of its batch
    companions, and coupled across ε (a sample is flipped iff its uniform is < ε).
    """
    if not cfg.label_noise:
        return None
    stream = generator(cfg.seed, "labels", cfg.n_inputs, cfg.n_outputs)
    return noisy_labels(clean.cpu(), cfg.n_outputs, cfg.label_noise, stream).to(clean.device)


def batch_label_law(
    tokens: torch.Tensor, labels: torch.Tensor, n_inputs: int, n_outputs: int
) -> torch.Tensor:
    r"""Empirical label law of each token in a batch, :math:`c(x, y) / \max(c(x), 1)`.

    tokens, labels: (R, B) int64. Returns (R, N, M) float32 (zero rows for unseen tokens).
    """
    runs = tokens.shape[0]
    flat = torch.zeros(runs, n_inputs * n_outputs, dtype=torch.float32, device=tokens.device)
    flat.scatter_add_(1, tokens * n_outputs + labels, torch.ones_like(tokens, dtype=flat.dtype))
    counts = flat.view(runs, n_inputs, n_outputs)
    return counts / counts.sum(2, keepdim=True).clamp_(min=1)

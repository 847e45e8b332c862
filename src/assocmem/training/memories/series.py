r"""Two matrix memories in series through a bottleneck of K learned concepts (docs:
beyond/hierarchy.md): with fixed embeddings :math:`e_x` (inputs) and :math:`u_y` (outputs) of
width h, learned W₁, W₂ (h×h) and concept keys ``c_z`` and values ``c'_z`` (K×h),

.. math::

    a(x) = (c_z^\top W_1 e_x)_z, \quad \pi = \operatorname{softmax}(a), \quad
    v = \sum_z \pi_z c'_z, \quad \mathrm{scores} = (u_y^\top W_2 v)_y.

Every tensor may carry leading run axes (R, …) or none (one run); the gradient of the mean
cross-entropy is written out (:func:`series_gradients`, tested against autograd).
"""

from typing import ClassVar

import torch

from assocmem.ops.cross_entropy import softmax_error
from assocmem.training.memories.base import AbstractMemory, Batch, State, rows_of

SERIES_TENSORS = ("W1", "keys", "values", "W2")  # the learned tensors, in this order


def series_gradients(
    tensors: list[torch.Tensor], inputs: torch.Tensor, outputs: torch.Tensor, labels: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, list[torch.Tensor]]:
    """The mean cross-entropy of a batch, its scores and the gradients, written out by hand.

    tensors: W₁ (…, h, h), keys (…, K, h), values (…, K, h), W₂ (…, h, h); inputs (…, B, h):
    the rows e_x of the batch; outputs (…, M, h): u_y; labels (…, B). Returns the loss (…),
    the scores (…, B, M) and the gradients in the order of ``tensors``.
    """
    first, keys, values, second = tensors
    hidden = inputs @ first.mT  # W₁ e_x, (B, h)
    weights = torch.softmax(hidden @ keys.mT, dim=-1)  # π, (B, K)
    mixed = weights @ values  # v, (B, h)
    logits = (mixed @ second.mT) @ outputs.mT  # (B, M)
    delta = softmax_error(logits, labels)  # d(CE)/d(logits), (B, M)
    loss = -torch.log1p(delta.gather(-1, labels[..., None]))[..., 0].mean(-1)  # log1p(p − 1)
    delta /= labels.shape[-1]
    back = delta @ outputs  # d/d(W₂ v), (B, h)
    grad_mixed = back @ second  # (B, h)
    grad_weights = grad_mixed @ values.mT  # (B, K)
    grad_scores = weights * (grad_weights - (weights * grad_weights).sum(-1, keepdim=True))
    grad_hidden = grad_scores @ keys  # (B, h)
    grads = [
        grad_hidden.mT @ inputs,
        grad_scores.mT @ hidden,
        weights.mT @ grad_mixed,
        back.mT @ mixed,
    ]
    return loss, logits, grads


class SeriesMemory(AbstractMemory):
    """State ``E`` (…, N, h), ``U`` (…, M, h) fixed; ``W1``, ``keys``, ``values``, ``W2``
    learned, starting from the caller's draws (copied)."""

    name: ClassVar[str] = "series"
    learned: ClassVar[tuple[str, ...]] = SERIES_TENSORS

    def init(self, fixed: State, generator: torch.Generator) -> State:
        return {name: fixed[name].clone() for name in self.learned}

    def scores(self, state: State, tokens: torch.Tensor | None) -> torch.Tensor:
        first, keys, values, second = (state[name] for name in self.learned)
        weights = torch.softmax((rows_of(state["E"], tokens) @ first.mT) @ keys.mT, dim=-1)
        return ((weights @ values) @ second.mT) @ state["U"].mT

    def gradients(self, state: State, batch: Batch) -> tuple[torch.Tensor, State]:
        tensors = [state[name] for name in self.learned]
        inputs = rows_of(state["E"], batch.tokens)
        _, scores, grads = series_gradients(tensors, inputs, state["U"], batch.targets)
        return scores, dict(zip(self.learned, grads, strict=True))

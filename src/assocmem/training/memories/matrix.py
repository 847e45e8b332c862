r"""The paper's matrix memory with fixed embeddings (Cabannes et al. 2024): scores
:math:`u_y^\top W e_x`, W (d×d) learned from zero, E and U fixed.

Scores are formed as :math:`E (U W)^\top`, O(M d² + B M d) a step instead of the O(B d²) of
:math:`E W^\top` (with a small M, seconds against minutes), or hidden states first,
:math:`(E W^\top) U^\top` (``hidden_first``: the trained hierarchy's direct memory, whose bits
are those of that order); the gradient of the mean cross-entropy is
:math:`U^\top \delta^\top E / B`, δ the softmax error (written out, tested against autograd).
"""

from typing import ClassVar

import torch

from assocmem.ops.cross_entropy import softmax_error
from assocmem.training.memories.base import AbstractMemory, Batch, State, rows_of


class MatrixMemory(AbstractMemory):
    """:math:`u_y^\top W e_x`; state ``E`` (R, N, d), ``U`` (R, M, d) fixed, ``W`` (R, d, d)
    from zero, or from the caller's draw ``fixed["W"]`` (copied) where it gives one.

    Parameters
    ----------
    hidden_first : bool, default False
        Form :math:`(E W^\top) U^\top` (any leading axes, or none) instead of
        :math:`E (U W)^\top`.
    """

    name: ClassVar[str] = "matrix"
    learned: ClassVar[tuple[str, ...]] = ("W",)

    def __init__(self, hidden_first: bool = False) -> None:
        self.hidden_first = hidden_first

    def init(self, fixed: State, generator: torch.Generator) -> State:
        E = fixed["E"]
        if "W" in fixed:
            return {"W": fixed["W"].clone()}
        return {"W": E.new_zeros(E.shape[0], E.shape[2], E.shape[2])}

    def scores(self, state: State, tokens: torch.Tensor | None) -> torch.Tensor:
        e = rows_of(state["E"], tokens)  # (R, B, d)
        if self.hidden_first:
            return (e @ state["W"].mT) @ state["U"].mT
        return torch.bmm(e, torch.bmm(state["U"], state["W"]).transpose(1, 2))  # E (U W)ᵀ

    def gradients(self, state: State, batch: Batch) -> tuple[torch.Tensor, State]:
        e, U = rows_of(state["E"], batch.tokens), state["U"]
        if self.hidden_first:
            scores = (e @ state["W"].mT) @ U.mT
            delta = softmax_error(scores, batch.targets)
            return scores, {"W": (delta @ U).mT @ e / batch.targets.shape[-1]}
        scores = torch.bmm(e, torch.bmm(U, state["W"]).transpose(1, 2))  # (R, B, M)
        delta = softmax_error(scores, batch.targets).div_(e.shape[1])  # d(mean CE)/d(scores)
        grad = torch.bmm(U.transpose(1, 2), torch.bmm(delta.transpose(1, 2), e))  # Uᵀ δᵀ E
        return scores, {"W": grad}

    def features(self, state: State, run: int, e: torch.Tensor) -> torch.Tensor:
        """:math:`W e_x` of run ``run`` for input embeddings e (b, d): (b, d), whose products
        with U are the scores."""
        return e @ state["W"][run].T

    def closed_form(self, fixed: State, targets: torch.Tensor, weights: torch.Tensor) -> State:
        r""":math:`W_q = \sum_x q(x)\, u_{f^*(x)} e_x^\top` with q the weights, (R, d, d)."""
        U_targets = fixed["U"][:, targets]  # (R, N, d)
        return {"W": torch.bmm((U_targets * weights[:, :, None]).transpose(1, 2), fixed["E"])}

    def trained_parameters(self, dim: int) -> int:
        return dim * dim

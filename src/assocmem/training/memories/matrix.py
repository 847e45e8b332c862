r"""The paper's matrix memory with fixed embeddings (Cabannes et al. 2024, Eq. 2): scores
:math:`u_y^\top W e_x`, W (d×d) learned from zero, E and U fixed.

Scores are formed as :math:`E (U W)^\top`, O(M d² + B M d) a step instead of the O(B d²) of
:math:`E W^\top` (with a small M, seconds against minutes); the gradient of the mean
cross-entropy is :math:`U^\top \delta^\top E / B`, δ the softmax error (written out, tested
against autograd).
"""

from typing import ClassVar

import torch

from assocmem.ops.cross_entropy import softmax_error
from assocmem.training.memories.base import AbstractMemory, Batch, State, rows_of


class MatrixMemory(AbstractMemory):
    """:math:`u_y^\top W e_x`; state ``E`` (R, N, d), ``U`` (R, M, d) fixed, ``W`` (R, d, d)."""

    name: ClassVar[str] = "matrix"
    learned: ClassVar[tuple[str, ...]] = ("W",)

    def init(self, fixed: State, generator: torch.Generator) -> State:
        E = fixed["E"]
        return {"W": E.new_zeros(E.shape[0], E.shape[2], E.shape[2])}

    def scores(self, state: State, tokens: torch.Tensor | None) -> torch.Tensor:
        e = rows_of(state["E"], tokens)  # (R, B, d)
        return torch.bmm(e, torch.bmm(state["U"], state["W"]).transpose(1, 2))  # E (U W)ᵀ

    def gradients(self, state: State, batch: Batch) -> tuple[torch.Tensor, State]:
        e, U = rows_of(state["E"], batch.tokens), state["U"]
        scores = torch.bmm(e, torch.bmm(U, state["W"]).transpose(1, 2))  # (R, B, M)
        delta = softmax_error(scores, batch.targets).div_(e.shape[1])  # d(mean CE)/d(scores)
        grad = torch.bmm(U.transpose(1, 2), torch.bmm(delta.transpose(1, 2), e))  # Uᵀ δᵀ E
        return scores, {"W": grad}

    def features(self, state: State, run: int, e: torch.Tensor) -> torch.Tensor:
        """:math:`W e_x` of run ``run`` for input embeddings e (b, d): (b, d), whose products
        with U are the scores."""
        return e @ state["W"][run].T

    def closed_form(self, fixed: State, targets: torch.Tensor, weights: torch.Tensor) -> State:
        r""":math:`W = \sum_x q(x)\, u_{f^*(x)} e_x^\top` (Eq. 4), (R, d, d)."""
        U_targets = fixed["U"][:, targets]  # (R, N, d)
        return {"W": torch.bmm((U_targets * weights[:, :, None]).transpose(1, 2), fixed["E"])}

    def trained_parameters(self, dim: int) -> int:
        return dim * dim

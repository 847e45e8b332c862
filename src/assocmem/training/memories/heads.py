r"""H parallel matrix memories (heads) trained jointly, their scores summed: head h has fixed
embeddings ``E_h`` (N×d_h) and ``U_h`` (M×d_h) and a learned ``W_h`` (d_h×d_h); the scores are
:math:`\sum_h (u^h_y)^\top W_h e^h_x` (docs: beyond/superposition.md).

The gradient of the mean cross-entropy is written out:
:math:`\partial L/\partial W_h = U_h^\top G^\top E_h[\mathrm{tokens}] / B`, G (B, M) the softmax
error of the summed scores.
"""

from typing import ClassVar

import torch

from assocmem.ops.cross_entropy import softmax_error
from assocmem.training.memories.base import AbstractMemory, Batch, State


class HeadsMemory(AbstractMemory):
    """State ``E`` (R, H, N, d_h), ``U`` (R, H, M, d_h) fixed; ``W`` (R, H, d_h, d_h) learned,
    starting from the caller's draw ``fixed["W"]`` (copied)."""

    name: ClassVar[str] = "heads"
    learned: ClassVar[tuple[str, ...]] = ("W",)

    def init(self, fixed: State, generator: torch.Generator) -> State:
        return {"W": fixed["W"].clone()}

    def rows(self, E: torch.Tensor, tokens: torch.Tensor | None) -> torch.Tensor:
        """Every head's input rows (R, H, B, d_h) of tokens (R, B); E itself for None."""
        if tokens is None:
            return E
        runs, heads, _, dim = E.shape
        return E.gather(2, tokens[:, None, :, None].expand(runs, heads, -1, dim))

    def scores(self, state: State, tokens: torch.Tensor | None) -> torch.Tensor:
        readout = state["W"].transpose(-1, -2) @ state["U"].transpose(-1, -2)  # (R, H, d, M)
        return (self.rows(state["E"], tokens) @ readout).sum(1)  # (R, B, M)

    def gradients(self, state: State, batch: Batch) -> tuple[torch.Tensor, State]:
        assert batch.tokens is not None, "heads train on token batches"
        U = state["U"]
        rows = self.rows(state["E"], batch.tokens)  # (R, H, B, d)
        scores = (rows @ (state["W"].transpose(-1, -2) @ U.transpose(-1, -2))).sum(1)
        residual = softmax_error(scores, batch.targets).div_(batch.tokens.shape[1])  # (R, B, M)
        stored = residual.transpose(1, 2)[:, None] @ rows  # Gᵀ E_b: (R, H, M, d)
        return scores, {"W": U.transpose(-1, -2) @ stored}

    def trained_parameters(self, dim: int) -> int:
        raise NotImplementedError("H heads of d_h hold H·d_h² parameters: they depend on H")

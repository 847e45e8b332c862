r"""The MLP key–value memory: scores
:math:`u_y^\top W_{\mathrm{out}}\, \sigma(W_{\mathrm{in}} e_x)`, σ = ReLU, with h hidden units.

W_in (h×d) is drawn ``N(0, 1/d)`` (float32 on the CPU, so every device starts from the same
bits; then in E's dtype and device),
W_out (d×h) starts at zero; E and U are fixed. 2dh trained parameters (h = d/2, the default,
matches the matrix memory's d²). The gradient is written out (tested against autograd).
"""

from typing import ClassVar

import torch

from assocmem.ops.cross_entropy import softmax_error
from assocmem.training.memories.base import AbstractMemory, Batch, State, rows_of


class KeyValueMemory(AbstractMemory):
    """State ``E`` (R, N, d), ``U`` (R, M, d) fixed; ``W_in`` (R, h, d), ``W_out`` (R, d, h).

    Parameters
    ----------
    width : int, optional
        h, the hidden units; default ``max(1, d // 2)`` (2dh = d²).
    """

    name: ClassVar[str] = "mlp"
    learned: ClassVar[tuple[str, ...]] = ("W_in", "W_out")
    min_dim: ClassVar[int] = 2

    def __init__(self, width: int | None = None) -> None:
        self.width = width

    def hidden_units(self, dim: int) -> int:
        """h: the width given, else the h with ``2 d h = d²`` (at least 1)."""
        return self.width if self.width is not None else max(1, dim // 2)

    def init(self, fixed: State, generator: torch.Generator) -> State:
        E = fixed["E"]
        runs, _, dim = E.shape
        h = self.hidden_units(dim)
        w_in = torch.randn(runs, h, dim, generator=generator) / dim**0.5  # on the CPU
        return {"W_in": w_in.to(E), "W_out": E.new_zeros(runs, dim, h)}

    def scores(self, state: State, tokens: torch.Tensor | None) -> torch.Tensor:
        hidden = torch.bmm(rows_of(state["E"], tokens), state["W_in"].transpose(1, 2)).clamp(min=0)
        return torch.bmm(hidden, torch.bmm(state["U"], state["W_out"]).transpose(1, 2))

    def gradients(self, state: State, batch: Batch) -> tuple[torch.Tensor, State]:
        e, U = rows_of(state["E"], batch.tokens), state["U"]
        pre = torch.bmm(e, state["W_in"].transpose(1, 2))  # (R, B, h)
        hidden = pre.clamp(min=0)
        readout = torch.bmm(U, state["W_out"])  # (R, M, h): U W_out
        scores = torch.bmm(hidden, readout.transpose(1, 2))  # (R, B, M)
        delta = softmax_error(scores, batch.targets).div_(e.shape[1])
        g_out = torch.bmm(delta, U)  # (R, B, d)
        grad_out = torch.bmm(g_out.transpose(1, 2), hidden)  # (R, d, h)
        g_hidden = torch.bmm(delta, readout).mul_(pre > 0)  # (R, B, h)
        grad_in = torch.bmm(g_hidden.transpose(1, 2), e)  # (R, h, d)
        return scores, {"W_in": grad_in, "W_out": grad_out}

    def features(self, state: State, run: int, e: torch.Tensor) -> torch.Tensor:
        r""":math:`W_{\mathrm{out}}\, \sigma(W_{\mathrm{in}} e_x)` of run ``run`` for input
        embeddings e (b, d): (b, d), whose products with U are the scores."""
        hidden = (e @ state["W_in"][run].T).clamp_(min=0)  # (b, h)
        return hidden @ state["W_out"][run].T

    def trained_parameters(self, dim: int) -> int:
        return 2 * dim * self.hidden_units(dim)

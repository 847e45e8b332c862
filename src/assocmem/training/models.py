r"""Trained models, batched over a leading run axis R (Cabannes et al. 2024, Section 4; see the
docs: science/optimisation.md).

Every model maps token rows to logits :math:`u_y^\top h(x)`:

- ``matrix``: :math:`h = W e_x`, learn W (E, U fixed);
- ``learned``: :math:`h = W e_x`, learn W, E and U;
- ``relu``: :math:`h = \operatorname{ReLU}(e_x)`, learn E and U (no W; the authors call it
  "exponential").

The "layer norm" option divides h by :math:`\sqrt{\|h\|^2 + 10^{-6}}` (no gain, no bias).
State tensors: ``W`` (R, d, d), ``E`` (R, N, d), ``U`` (R, M, d).
"""

from abc import ABC, abstractmethod
from typing import ClassVar

import torch

LAYER_NORM_EPS = 1e-6


def gather_rows(table: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
    """``table[r, rows[r]]`` for every run r: (R, n, k) from table (R, N, k) and rows (R, n)."""
    return torch.gather(table, 1, rows[:, :, None].expand(-1, -1, table.shape[2]))


def layer_norm(hidden: torch.Tensor) -> torch.Tensor:
    r""":math:`h / \sqrt{\|h\|^2 + 10^{-6}}` along the last axis."""
    return hidden / (hidden.square().sum(-1, keepdim=True) + LAYER_NORM_EPS).sqrt()


class AbstractModel(ABC):
    """A model: which state tensors it learns and how it turns token rows into logits."""

    name: ClassVar[str]
    learned: ClassVar[tuple[str, ...]]  # names among "W", "E", "U"

    @abstractmethod
    def hidden(self, state: dict[str, torch.Tensor], rows: torch.Tensor) -> torch.Tensor:
        """Features h(x) of the rows, (R, n, d)."""

    def logits(
        self, state: dict[str, torch.Tensor], rows: torch.Tensor, *, normalize: bool
    ) -> torch.Tensor:
        r"""Logits :math:`u_y^\top h(x)` of token rows (R, n), shape (R, n, M)."""
        hidden = self.hidden(state, rows)
        if normalize:
            hidden = layer_norm(hidden)
        return torch.bmm(hidden, state["U"].transpose(1, 2))


class MatrixModel(AbstractModel):
    name = "matrix"
    learned: ClassVar[tuple[str, ...]] = ("W",)

    def hidden(self, state: dict[str, torch.Tensor], rows: torch.Tensor) -> torch.Tensor:
        return torch.bmm(gather_rows(state["E"], rows), state["W"].transpose(1, 2))


class LearnedEmbeddingsModel(MatrixModel):
    name = "learned"
    learned = ("W", "E", "U")


class ReluEmbeddingsModel(AbstractModel):
    name = "relu"
    learned = ("E", "U")

    def hidden(self, state: dict[str, torch.Tensor], rows: torch.Tensor) -> torch.Tensor:
        return torch.relu(gather_rows(state["E"], rows))


MODEL_REGISTRY: dict[str, AbstractModel] = {
    model.name: model for model in (MatrixModel(), LearnedEmbeddingsModel(), ReluEmbeddingsModel())
}

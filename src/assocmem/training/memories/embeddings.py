r"""The engine's memories with learned embeddings (:mod:`assocmem.training.models`), as memories
of the trainer: ``relu`` (:math:`u_y^\top \operatorname{ReLU}(e_x)`, learn E and U) and
``learned`` (:math:`u_y^\top W e_x`, learn W, E and U), each with the optional layer norm
(:math:`h / \sqrt{\|h\|^2 + 10^{-6}}`). Gradients by autograd; the engine's fast kernels
(:mod:`assocmem.training.kernels`) write them out for the configs they support.
"""

from typing import ClassVar

import torch

from assocmem.training.memories.base import AbstractMemory, State
from assocmem.training.models import MODEL_REGISTRY


class EngineModelMemory(AbstractMemory):
    """A model of :data:`~assocmem.training.models.MODEL_REGISTRY` (by this class's ``name``):
    state ``E`` (R, N, d), ``U`` (R, M, d) and, for the W models, ``W`` (R, d, d), the learned
    ones starting from the caller's draws (copied).

    Parameters
    ----------
    layer_norm : bool, default False
        Normalise the features before the readout.
    """

    def __init__(self, layer_norm: bool = False) -> None:
        self.layer_norm = layer_norm
        self.model = MODEL_REGISTRY[self.name]

    def init(self, fixed: State, generator: torch.Generator) -> State:
        return {name: fixed[name].clone() for name in self.learned}

    def scores(self, state: State, tokens: torch.Tensor | None) -> torch.Tensor:
        if tokens is None:
            runs, n, _ = state["E"].shape
            tokens = torch.arange(n, device=state["E"].device).expand(runs, n)
        return self.model.logits(state, tokens, normalize=self.layer_norm)

    def trained_parameters(self, dim: int) -> int:
        raise NotImplementedError("learned embeddings count N·d + M·d: they depend on N and M")


class ReluMemory(EngineModelMemory):
    r""":math:`u_y^\top \operatorname{ReLU}(e_x)`: learn E and U (no W)."""

    name: ClassVar[str] = "relu"
    learned: ClassVar[tuple[str, ...]] = ("E", "U")


class LearnedEmbeddingsMemory(EngineModelMemory):
    r""":math:`u_y^\top W e_x`: learn W, E and U (W drawn by the caller, in ``fixed``)."""

    name: ClassVar[str] = "learned"
    learned: ClassVar[tuple[str, ...]] = ("W", "E", "U")

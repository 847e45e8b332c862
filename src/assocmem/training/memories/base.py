r"""The memory interface: what the one trainer (:mod:`assocmem.training.trainer`) asks of every
trained memory.

A memory maps inputs to scores over M outputs, for R runs at once (a leading run axis on every
tensor). Its **state** is a dict of tensors (R, ...): the fixed ones drawn by the caller (for the
paper's memories the input and output embeddings ``E`` (R, N, d) and ``U`` (R, M, d)) and the
learned ones, named in :attr:`AbstractMemory.learned`, which :meth:`AbstractMemory.init` draws
and the optimiser moves. Inputs are token rows (R, B) or sequences (R, B, T); ``None`` stands
for every input once (full batch, (R, N) rows). The loss is the mean cross-entropy over a batch's
rows, per run; its gradient is written out where a memory writes it
(:meth:`AbstractMemory.gradients`), else taken by autograd through :meth:`AbstractMemory.scores`.
"""

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import ClassVar

import torch
import torch.nn.functional as F

State = dict[str, torch.Tensor]  # named tensors, each with a leading run axis R


@dataclass(frozen=True)
class Batch:
    """The inputs and targets of one step (or one evaluation).

    Attributes
    ----------
    targets : torch.Tensor
        int64: (N,) with ``tokens=None``; else (B,) shared by the runs or (R, B).
    tokens : torch.Tensor or None
        Token rows (R, B) or sequences (R, B, T); None: every input once.
    """

    targets: torch.Tensor
    tokens: torch.Tensor | None = None


def rows_of(table: torch.Tensor, tokens: torch.Tensor | None) -> torch.Tensor:
    """``table[r, tokens[r]]`` for every run, (R, B, k) from (R, N, k) and tokens (R, B) (any
    leading axes, or none); the table itself for ``tokens=None`` (every input once)."""
    if tokens is None:
        return table
    return table.gather(-2, tokens[..., None].expand(*tokens.shape, table.shape[-1]))


def mean_cross_entropy(scores: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Each run's mean cross-entropy over its rows, (R,) from scores (R, B, M) and targets
    broadcastable to (R, B)."""
    runs, rows, outputs = scores.shape
    labels = targets.expand(runs, rows).reshape(-1)
    ce = F.cross_entropy(scores.reshape(-1, outputs), labels, reduction="none")
    return ce.view(runs, rows).mean(1)


class AbstractMemory(ABC):
    """A trained memory: its learned tensors, its scores and their gradient, batched over runs.

    Subclass it with a class attribute ``name`` and :meth:`scores` (and :meth:`init`), then
    :func:`~assocmem.training.memories.registry.register_memory` it: the trainer needs nothing
    else (gradients by autograd). A memory whose gradient is written out overrides
    :meth:`gradients`; one with a closed-form construction, :meth:`closed_form`. Constructor
    arguments are the memory's hyper-parameters (the key–value memory's width h).
    """

    name: ClassVar[str]
    learned: ClassVar[tuple[str, ...]]  # the state tensors the optimiser moves
    min_dim: ClassVar[int] = 1  # the smallest d the memory is defined at

    @abstractmethod
    def init(self, fixed: State, generator: torch.Generator) -> State:
        """The learned tensors at step 0, (R, ...) on the device of ``fixed`` (the tensors the
        caller drew: ``E`` (R, N, d), ``U`` (R, M, d) for the paper's memories)."""

    @abstractmethod
    def scores(self, state: State, tokens: torch.Tensor | None) -> torch.Tensor:
        """Scores (R, B, M) of token rows (R, B) or sequences (R, B, T); (R, N, M) for None."""

    def gradients(self, state: State, batch: Batch) -> tuple[torch.Tensor, State]:
        """The batch's scores (R, B, M) and the gradients of each run's mean cross-entropy in
        the learned tensors (each the shape of its tensor). By autograd here."""
        leaves = {name: state[name].detach().requires_grad_(True) for name in self.learned}
        with torch.enable_grad():
            scores = self.scores({**state, **leaves}, batch.tokens)
            loss = mean_cross_entropy(scores, batch.targets).sum()
            grads = torch.autograd.grad(loss, list(leaves.values()))
        return scores.detach(), dict(zip(leaves, grads, strict=True))

    def closed_form(self, fixed: State, targets: torch.Tensor, weights: torch.Tensor) -> State:
        """The learned tensors of the closed-form construction with weights q(x) (R, N) and
        targets f* (N,), where the memory has one: the schemes :math:`W_q` of Cabannes et al.
        (2024)."""
        raise NotImplementedError(f"the {self.name} memory has no closed form")

    def trained_parameters(self, dim: int) -> int:
        """Trained parameters of one run at dimension d (fixed tensors excluded)."""
        raise NotImplementedError(f"the {self.name} memory does not count its parameters")

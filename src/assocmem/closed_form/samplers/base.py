r"""What a closed-form sampler does: from one trial's weights to :math:`(E_d S_d)^\top` at every d.

A sampler owns the randomness of the input embeddings E (the targets, the weights q, the label
laws and the output embeddings are drawn by the kernel, the same for every sampler). It returns
the class-aggregated products :math:`(E_d E_d^\top A)^\top` that
:class:`~assocmem.closed_form.readout.Evaluator` turns into errors,
:math:`A = \operatorname{diag}(q) L` (N×M per weighting; L the one-hot targets or the label law),
scaled as the embeddings' convention says.
"""

from abc import ABC, abstractmethod
from collections.abc import Iterator
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import Any, ClassVar

import torch

from assocmem.closed_form.problem import Problem


@dataclass
class TrialWeights:
    """One trial's targets (N,) and weights: fixed_q (K_f, N), varying_q (D, K_v, N),
    fixed_labels (K_f, M, N), varying_labels (K_v, M, N) (see :meth:`Problem.weights`)."""

    trial: int
    targets: torch.Tensor
    fixed_q: torch.Tensor
    varying_q: torch.Tensor
    fixed_labels: torch.Tensor
    varying_labels: torch.Tensor


class Sampler(ABC):
    """One way of drawing the input embeddings' randomness; registered by :attr:`name`."""

    name: ClassVar[str]
    # its draws are worth a helper thread, drawing the next trial while this one computes ...
    draws_ahead: ClassVar[bool] = False
    # ... from this many tokens on: below it a trial is a few hundred small calls that hold the
    # GIL, and two threads of them contend more than they overlap
    ahead_from_tokens: ClassVar[int] = 0
    # its random numbers are a few long calls that release the GIL: drawn in a helper thread
    # during a trial, and when whole trials are not drawn ahead, the next trial is drawn in
    # line before this one computes with its random numbers in the helper (see ``draw``)
    draws_in_background: ClassVar[bool] = False

    @abstractmethod
    def draw(self, problem: Problem, weights: TrialWeights, helper: Executor | None = None) -> Any:
        """Randomness that can be drawn ahead of the trial (in a helper thread), or None.

        helper: a thread the sampler may hand its random numbers to (it returns their future,
        the numbers are the same); None: everything is drawn in this thread.
        """

    @abstractmethod
    def aggregates(
        self, problem: Problem, weights: TrialWeights, drawn: Any
    ) -> Iterator[tuple[slice, torch.Tensor]]:
        r""":math:`(E_d S_d)^\top` for consecutive runs of the sorted dims, fixed columns first.

        Yields ``(dims, aggregated)``: a slice of ``problem.dims`` and a tensor
        (len(dims), K·M, N), row :math:`k\cdot M + y` the column y of weighting k. A yielded tensor
        may be a reused buffer: valid until the next one is asked for.
        """

"""A training step replayed as a CUDA graph (``torch.cuda.graphs``).

On CUDA a group's step is a few dozen small kernels whose launches, not their arithmetic, set
the time (the grid's programs hold tens of runs of d ≤ 1000). :class:`GraphedSteps` records one
step of a kernel once, on static input tensors, and replays it: each later step copies its
batch, weights and learning rates into those tensors and launches the whole step at once. The
replay runs the same kernels on the same shapes as the eager step, so it gives the same bits
(tested where a GPU is at hand: ``tests/test_batched_path.py``).

A step can be recorded when it is the same program every time: no per-step targets (noisy
labels) and no shadow W. An optimiser whose step reads the step count (``depends_on_step``:
Adam with β ≠ 0 corrects its bias by t) reads it from a
:class:`~assocmem.training.optimizers.base.StepClock` that each replay sets first.
``ASSOCMEM_CUDA_GRAPHS=0`` turns replay off.
"""

import os

import torch

from assocmem.training.kernels import AbstractKernel
from assocmem.training.optimizers.base import StepClock

SWITCH = "ASSOCMEM_CUDA_GRAPHS"  # "0": eager steps on CUDA
WARMUP_STEPS = 3  # eager steps before recording: optimiser slots and buffers exist by then


def graphs_enabled(kernel: AbstractKernel, device: torch.device | str) -> bool:
    """Whether this kernel's steps on ``device`` are replayed as a CUDA graph."""
    cuda = torch.device(device).type == "cuda" and torch.cuda.is_available()
    return cuda and os.environ.get(SWITCH, "1") != "0"


class GraphedSteps:
    """:meth:`AbstractKernel.advance` with every step after the first :data:`WARMUP_STEPS`
    replayed from one recorded CUDA graph (same arguments, same results)."""

    def __init__(self, kernel: AbstractKernel) -> None:
        self.kernel = kernel
        self.graph: torch.cuda.CUDAGraph | None = None
        self.tokens: torch.Tensor | None = None  # (R, B) static inputs of the recorded step
        self.weights = self.lr = torch.empty(0)  # (R, N), (R,)
        optimizer = kernel.optimizer
        self.clock = StepClock(optimizer, kernel.cfg.device) if optimizer.depends_on_step else None

    def advance(
        self, t0: int, tokens: torch.Tensor | None, weights: torch.Tensor, lr: torch.Tensor
    ) -> None:
        """Steps t0 + 1 … t0 + S: tokens (R, S, B) or None; weights (R, S, N); lr (R, S)."""
        for s in range(lr.shape[1]):
            batch = None if tokens is None else tokens[:, s]
            if self.graph is None and t0 + s < WARMUP_STEPS:
                self.kernel.step(t0 + s + 1, batch, weights[:, s], lr[:, s])
                continue
            if self.graph is None:
                self._record(t0 + s + 1, batch, weights[:, s], lr[:, s])
            self._replay(t0 + s + 1, batch, weights[:, s], lr[:, s])

    def _record(
        self, t: int, tokens: torch.Tensor | None, weights: torch.Tensor, lr: torch.Tensor
    ) -> None:
        """Record one step on static copies of its inputs (recording runs nothing; an optimiser
        that reads the step count reads the clock)."""
        self.tokens = None if tokens is None else tokens.clone()
        self.weights, self.lr = weights.clone(), lr.clone()
        torch.cuda.synchronize()
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph):
            self.kernel.step(self.clock or t, self.tokens, self.weights, self.lr)

    def _replay(
        self, t: int, tokens: torch.Tensor | None, weights: torch.Tensor, lr: torch.Tensor
    ) -> None:
        assert self.graph is not None
        if self.clock is not None:
            self.clock.set(t)
        if tokens is not None and self.tokens is not None:
            self.tokens.copy_(tokens)
        self.weights.copy_(weights)
        self.lr.copy_(lr)
        self.graph.replay()

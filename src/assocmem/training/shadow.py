r"""W itself for the fast kernels that move only a product of it (``train(..., keep_w=True)``).

The fast kernels of the matrix model never form the d×d memory: under linear optimisers they
move the logit table :math:`E W^\top U^\top` or the hidden states :math:`E W^\top` (layer norm),
under sign-like steps :math:`W^\top U^\top` (:mod:`assocmem.training.kernels`). What they hold
determines the logits, but not W (the sign of a rank-M gradient is a full d×d matrix whose part
outside the span of U never reaches a logit). :class:`ShadowW` keeps W beside such a kernel along
the run's *own* trajectory: before each step it forms the gradient of the mean cross-entropy with
respect to W from the kernel's current state, :math:`\nabla W = U^\top D^\top E` (D the
count-weighted softmax error of the logits; through the layer norm's Jacobian under layer norm), and
applies the run's optimiser to W with that gradient and the run's learning rate. So
:math:`E W^\top U^\top` equals the kernel's table, and W equals the W that the autograd path
(``fast=False``) trains, up to float rounding; the kernel's own numbers are untouched
(tests/test_training_state.py).

The cost is one d×d gradient and step per run and step (the autograd path's), so W is kept only
when asked for. The ``qupdate`` model's memory is :math:`W_q = \sum_x q(x) u_{f^*(x)} e_x^\top` by
definition (Eq. 16 of Cabannes et al. 2024): it is formed once from the trained q.
"""

import torch

from assocmem.ops.scores import one_hot_weights
from assocmem.training.config import TrainConfig
from assocmem.training.kernels.base import AbstractKernel, per_run_products, weighted_softmax_error
from assocmem.training.models import LAYER_NORM_EPS
from assocmem.training.optimizers import lr_factor
from assocmem.training.optimizers.base import Slot


class ShadowW:
    """W of a group of runs, (R, d, d), stepped beside a kernel that holds a product of W.

    Parameters
    ----------
    cfg : TrainConfig
        The group's config (its optimiser, layer norm, lr scaling).
    W0 : torch.Tensor, shape (R, d, d)
        The runs' initial memories, as drawn (copied).
    E, U : torch.Tensor, shapes (R, N, d) and (R, M, d)
        The runs' fixed embeddings.
    """

    def __init__(
        self, cfg: TrainConfig, W0: torch.Tensor, E: torch.Tensor, U: torch.Tensor
    ) -> None:
        self.cfg = cfg
        self.W = W0.clone()
        self.E, self.U = E, U
        self.slot: Slot = {}  # the optimiser's state for W (momentum, ...)
        self.factor = lr_factor(cfg, "W")

    @staticmethod
    def needed(kernel: AbstractKernel) -> bool:
        """Whether the kernel moves a product of W (and not W, q or no W at all)."""
        return bool(kernel.memory_tensors().keys() & {"EWU", "WU", "EW"})

    def step(self, kernel: AbstractKernel, t: int, weights: torch.Tensor, lr: torch.Tensor) -> None:
        """Optimiser step t (1-based) of W from the kernel's state *before* its step t.

        weights: (R, N) the step's :math:`c(x)/B` (or ``p(x)``); lr: (R,) scheduled rates."""
        grad = self.gradient(kernel, weights)
        self.cfg.optimizer.step(self.slot, self.W, grad, lr * self.factor, t)

    def gradient(self, kernel: AbstractKernel, weights: torch.Tensor) -> torch.Tensor:
        r""":math:`\nabla W` of :math:`\sum_x w(x) \operatorname{CE}(x)` at the kernel's state,
        (R, d, d), one run at a time."""
        held = kernel.memory_tensors()
        if "EW" in held:  # layer norm: back through h / ‖h‖ to the hidden states
            hidden_grad = layer_norm_backward(held["EW"], self.U, kernel.targets, weights)
            return per_run_products(hidden_grad.transpose(1, 2), self.E)  # Σ_x ∂h_x e_xᵀ
        delta = weighted_softmax_error(kernel.logits(), kernel.targets, weights)  # (R, N, M)
        # Uᵀ Dᵀ E: (R, d, M) (R, M, N) (R, N, d)
        dtE = per_run_products(delta.transpose(1, 2), self.E)  # (R, M, d)
        return per_run_products(self.U.transpose(1, 2), dtE)


def layer_norm_backward(
    hidden: torch.Tensor, U: torch.Tensor, targets: torch.Tensor, weights: torch.Tensor
) -> torch.Tensor:
    r""":math:`\partial /\partial h_x` of
    :math:`\sum_x w(x) \operatorname{CE}(\operatorname{softmax}(U h_x/\|h_x\|), f^*(x))`, (R, N, d),
    as the layer-norm kernel computes it. hidden: (R, N, d); U: (R, M, d); weights: (R, N)."""
    scale = (hidden.square().sum(2, keepdim=True) + LAYER_NORM_EPS).sqrt()
    z = hidden / scale
    logits = per_run_products(z, U.transpose(1, 2))
    delta = weighted_softmax_error(logits, targets, weights)
    grad_z = per_run_products(delta, U)  # (R, N, d)
    return (grad_z - z * (z * grad_z).sum(2, keepdim=True)) / scale


def q_memory(
    q: torch.Tensor, E: torch.Tensor, U: torch.Tensor, targets: torch.Tensor
) -> torch.Tensor:
    r""":math:`W_q = \sum_x q(x) u_{f^*(x)} e_x^\top` = :math:`U^\top (q\cdot F)^\top E` of every
    run, (R, d, d).

    q: (R, N); E: (R, N, d); U: (R, M, d); targets: (N,) the outputs f*(x)."""
    stored = one_hot_weights(q, targets, U.shape[1])  # diag(q) F, (R, N, M)
    return per_run_products(U.transpose(1, 2), per_run_products(stored.transpose(1, 2), E))


def final_w(
    kernel: AbstractKernel, shadow: ShadowW | None, E: torch.Tensor, U: torch.Tensor
) -> torch.Tensor | None:
    """W of every run after training, (R, d, d), or None for a model without one (relu)."""
    held = kernel.memory_tensors()
    if "W" in held:
        return held["W"]
    if shadow is not None:
        return shadow.W
    if "q" in held:
        return q_memory(held["q"], E, U, kernel.targets)
    return None


__all__ = ["ShadowW", "final_w", "layer_norm_backward", "q_memory"]

r"""The matrix model under sign-like steps (sign-like Adam β = (0, 0), sign-SGD, normalised SGD).

The state is :math:`V = W^\top U^\top` (d×M). The gradient's :math:`W^\top`-side is ``P U`` with
:math:`P = E^\top D` (d×M, rank ≤ M); its elementwise shape (the optimiser's direction) is projected
back by :math:`U^\top` row by row in the compiled kernel of :mod:`assocmem.training.native`
(``projected_steps``, a span of steps per call), never storing the d×d matrix (torch ops, one run at
a time, for normalised SGD or where no compiler is found). O(d²M) per step, independent of B.
"""

import torch

from assocmem.runtime import uses_batched_path
from assocmem.training import native
from assocmem.training.config import TrainConfig
from assocmem.training.kernels.base import (
    AbstractKernel,
    RunInputs,
    gram,
    per_run_products,
    run_lr_factor,
    weighted_softmax_error,
)
from assocmem.training.optimizers import NORM_FLOOR
from assocmem.training.optimizers.base import Step


class ProjectedMatrixKernel(AbstractKernel):
    r"""Matrix model under sign-like steps without weight decay: track :math:`V = W^\top U^\top`.

    Compiled (the optimisers with a ``native_mode``), a run takes a span of whole steps per call
    (:func:`native.projected_steps`); otherwise :meth:`step` does one step of every run.
    """

    w_product = "WU"
    spans = True

    def __init__(self, cfg: TrainConfig, inputs: RunInputs, targets: torch.Tensor) -> None:
        super().__init__(cfg, inputs, targets)
        assert inputs.W_product is not None
        self.E, self.U = inputs.E, inputs.U
        self.U_t = inputs.U.transpose(1, 2).contiguous()  # (R, d, M)
        self.gram_outputs = gram(self.U)  # (R, M, M)
        self.V = inputs.W_product  # (R, d, M)
        self.lr_factor = run_lr_factor(cfg, inputs, "W")  # (R,) in a zero-padded group
        stateless = self.optimizer.stateless and self.optimizer.native_mode is not None
        self.compiled = stateless and native.supports(self.V)
        if self.compiled:  # U's rows padded to whole vectors (zeros: no effect)
            self.U_padded = native.padded(inputs.U)

    @classmethod
    def supports(cls, cfg: TrainConfig) -> bool:
        plain_matrix = cfg.model == "matrix" and not cfg.layer_norm and not cfg.label_noise
        sign_like = cfg.optimizer.sign_like
        return plain_matrix and sign_like and not cfg.optimizer.weight_decay

    @classmethod
    def state_elements(cls, cfg: TrainConfig) -> int:
        return 4 * cfg.dim * cfg.n_outputs + 2 * cfg.n_inputs * cfg.dim

    @classmethod
    def step_work(cls, cfg: TrainConfig) -> int:
        return cfg.dim**2 * cfg.n_outputs

    def memory_tensors(self) -> dict[str, torch.Tensor]:
        return {"WU": self.V}

    def logits(self) -> torch.Tensor:
        return per_run_products(self.E, self.V)  # a run's logits never depend on its companions

    def advance(
        self, t0: int, tokens: torch.Tensor | None, weights: torch.Tensor, lr: torch.Tensor
    ) -> None:
        if not self.compiled:
            super().advance(t0, tokens, weights, lr)
            return
        native.projected_steps(
            self.V, self.E, self.U_padded, weights, self.targets, lr * self.lr_factor,
            optimizer=self.optimizer,
        )  # fmt: skip

    def step(
        self, t: Step, tokens: torch.Tensor | None, weights: torch.Tensor, lr: torch.Tensor
    ) -> None:
        """One step of every run with torch ops (normalised SGD, or no compiled kernel)."""
        rate = (lr * self.lr_factor)[:, None, None]
        scaled = weighted_softmax_error(self.logits(), self.targets, weights)
        # (R, d, M); the W-gradient is (P U)ᵀ. Every product one run at a time (aligned copies),
        # so a run's steps never depend on its companions.
        P = per_run_products(self.E.transpose(1, 2), scaled)
        if not self.optimizer.stateless:  # normalised SGD: ‖P U‖_F² = ⟨Pᵀ P, U Uᵀ⟩
            norm_sq = (per_run_products(P.transpose(1, 2), P) * self.gram_outputs).sum((1, 2))
            norm = norm_sq.clamp_min(0).sqrt().clamp_min(NORM_FLOOR)
            self.V.sub_(rate / norm[:, None, None] * per_run_products(P, self.gram_outputs))
            return
        self.V.sub_(rate * self.shaped_projection(P))

    def shaped_projection(self, P: torch.Tensor) -> torch.Tensor:
        r""":func:`native.sign_project` with torch ops:
        :math:`\operatorname{direction}(P U) U^\top`, (R, d, M): one run's d×d gradient at a time
        (its products on aligned copies, as :func:`per_run_products`), or every run's at once on the
        batched path."""
        if uses_batched_path(P.device):
            return torch.bmm(self.optimizer.direction(torch.bmm(P, self.U)), self.U_t)
        change = torch.empty_like(P)
        for r in range(P.shape[0]):
            grad = P[r].clone() @ self.U[r].clone()  # Gᵀ, (d, d)
            change[r] = self.optimizer.direction(grad) @ self.U_t[r].clone()
        return change

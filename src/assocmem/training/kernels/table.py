r"""Kernels of the matrix model under linear optimisers (SGD, momentum, weight decay, Nesterov):
every change of W is linear in the gradients, so they move a linear image of W instead.

- ``TableSGDKernel`` (no layer norm): the logits :math:`L = E W^\top U^\top` (N×M) are the whole
  state; a step changes them by :math:`-\mathrm{lr} \cdot (E E^\top) D (U U^\top)` with ``D`` the
  count-weighted softmax error (N×M), nonzero on the k distinct tokens of the batch. O(N k M) per
  step whatever d; plain SGD runs a span of steps per compiled call (``table_steps``).
- ``LayerNormSGDKernel`` (layer norm): E, U fixed, so the state is :math:`H = E W^\top` (N×d), moved
  by :math:`-\mathrm{lr} (E E_b^\top) \partial h_b`. O(N B d) per step, no d×d matrix.
"""

import torch

from assocmem.training import native
from assocmem.training.config import TrainConfig
from assocmem.training.kernels.base import (
    DTYPE,
    AbstractKernel,
    RunInputs,
    gram,
    per_run_products,
    take_rows,
    weighted_softmax_error,
)
from assocmem.training.models import LAYER_NORM_EPS, layer_norm
from assocmem.training.optimizers.base import Step


class TableSGDKernel(AbstractKernel):
    r"""Matrix model under a linear optimiser: all linear in W, so track :math:`E W^\top U^\top`.

    Plain SGD with hard labels runs compiled, a span of steps of a run per call
    (:func:`native.table_steps`); otherwise :meth:`step` does one step of every run. Soft
    targets (a label law: noisy labels) are supported.
    """

    w_product = "WU"
    spans = True

    def __init__(self, cfg: TrainConfig, inputs: RunInputs, targets: torch.Tensor) -> None:
        super().__init__(cfg, inputs, targets)
        assert inputs.W_product is not None
        self.gram_inputs = gram(inputs.E)  # (R, N, N)  E Eᵀ
        self.gram_outputs = gram(inputs.U)  # (R, M, M)  U Uᵀ
        self.table = per_run_products(inputs.E, inputs.W_product)  # (R, N, M)  E Wᵀ Uᵀ
        plain = self.optimizer.stateless  # the step is −lr · g
        # Spans of compiled steps; noisy labels give soft targets (a label law): torch ops.
        self.compiled = plain and not cfg.label_noise and native.available(self.table)

    @classmethod
    def supports(cls, cfg: TrainConfig) -> bool:
        return cfg.model == "matrix" and not cfg.layer_norm and cfg.optimizer.linear

    @classmethod
    def state_elements(cls, cfg: TrainConfig) -> int:
        return 4 * cfg.dim * cfg.n_outputs + 2 * cfg.n_inputs * cfg.dim

    @classmethod
    def step_work(cls, cfg: TrainConfig) -> int:
        return cfg.n_inputs**2 * cfg.n_outputs

    def memory_tensors(self) -> dict[str, torch.Tensor]:
        return {"EWU": self.table}

    def logits(self) -> torch.Tensor:
        return self.table

    def advance(
        self, t0: int, tokens: torch.Tensor | None, weights: torch.Tensor, lr: torch.Tensor
    ) -> None:
        if not self.compiled:
            super().advance(t0, tokens, weights, lr)
            return
        native.table_steps(
            self.table, self.gram_inputs, self.gram_outputs, weights, self.targets, lr
        )

    def step(
        self, t: Step, tokens: torch.Tensor | None, weights: torch.Tensor, lr: torch.Tensor
    ) -> None:
        scaled = weighted_softmax_error(self.table, self.targets, weights)
        grad = torch.bmm(self.gram_inputs, torch.bmm(scaled, self.gram_outputs))
        grad = self.linear_direction("table", self.table, grad)
        self.table.sub_(lr[:, None, None] * grad)


class LayerNormSGDKernel(AbstractKernel):
    r"""Matrix model with layer norm under a linear optimiser: E and U are fixed and every
    change of W reaches the logits through :math:`H = E W^\top` (N×d), so track H.

    A step back-propagates to the hidden states ``h_x`` of the batch rows (all N tokens weighted
    by :math:`c(x)/B` once B ≥ N) and moves H by
    :math:`-\mathrm{lr} \cdot E \nabla W^\top = -\mathrm{lr} \cdot (E E_b^\top) \partial h_b`: O(N B
    d) per step (O(N² d) for large batches) instead of O(B d²) and the d×d matrix never exists.
    """

    w_product = "EW"

    def __init__(self, cfg: TrainConfig, inputs: RunInputs, targets: torch.Tensor) -> None:
        super().__init__(cfg, inputs, targets)
        assert inputs.W_product is not None
        self.H, self.U = inputs.W_product, inputs.U  # (R, N, d), (R, M, d)
        self.gram_inputs = gram(inputs.E)  # (R, N, N)
        runs, n = inputs.E.shape[0], cfg.n_inputs
        self.all_rows = torch.arange(n, device=inputs.E.device).expand(runs, n)

    @classmethod
    def supports(cls, cfg: TrainConfig) -> bool:
        matrix_ln = cfg.model == "matrix" and cfg.layer_norm
        return matrix_ln and cfg.optimizer.linear and not cfg.label_noise

    @classmethod
    def state_elements(cls, cfg: TrainConfig) -> int:
        return 4 * cfg.dim * cfg.n_outputs + 2 * cfg.n_inputs * cfg.dim

    def memory_tensors(self) -> dict[str, torch.Tensor]:
        return {"EW": self.H}

    def logits(self) -> torch.Tensor:
        return torch.bmm(layer_norm(self.H), self.U.transpose(1, 2))

    def step(
        self, t: Step, tokens: torch.Tensor | None, weights: torch.Tensor, lr: torch.Tensor
    ) -> None:
        # Few samples: the batch rows, 1/B each; otherwise every token, weighted by its count.
        if tokens is not None and tokens.shape[1] < self.cfg.n_inputs:
            rows = tokens  # (R, b)
            h, gram_rows = take_rows(self.H, rows), take_rows(self.gram_inputs, rows)  # (R, b, ·)
            row_weights = torch.full_like(rows, 1.0 / rows.shape[1], dtype=DTYPE)
        else:
            rows, h, gram_rows, row_weights = self.all_rows, self.H, self.gram_inputs, weights
        scale = (h.square().sum(2, keepdim=True) + LAYER_NORM_EPS).sqrt_()
        z = h / scale
        logits = torch.bmm(z, self.U.transpose(1, 2))  # (R, b, M)
        delta = weighted_softmax_error(logits, self.targets[rows], row_weights)
        grad_z = torch.bmm(delta, self.U)  # (R, b, d)
        grad_h = grad_z.sub_(z.mul_((z * grad_z).sum(2, keepdim=True))).div_(scale)
        grad = torch.bmm(gram_rows.transpose(1, 2), grad_h)  # (R, N, d): E ∇Wᵀ
        grad = self.linear_direction("H", self.H, grad)
        self.H.addcmul_(grad, lr[:, None, None], value=-1)

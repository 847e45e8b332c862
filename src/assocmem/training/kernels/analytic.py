"""Any model and optimiser by hand-written gradients batched over runs."""

import torch

from assocmem.training.config import TrainConfig
from assocmem.training.kernels.base import DTYPE, scatter_rows, take_rows, weighted_softmax_error
from assocmem.training.kernels.parameters import ParameterKernel
from assocmem.training.models import LAYER_NORM_EPS
from assocmem.training.optimizers.base import Step


class AnalyticKernel(ParameterKernel):
    r"""Any model and optimiser: the gradients of the autograd kernel, written out, batched
    over runs (no autograd graph), then the optimiser's batched step.

    With the rows b of the step (the batch, or all N tokens weighted by :math:`c(x)/B` once
    B ≥ N) and :math:`\Delta = w (\operatorname{softmax} - \operatorname{onehot})`:
    :math:`\nabla U = \Delta^\top z`, :math:`\partial z = \Delta U`, :math:`\partial h` through the
    layer norm, :math:`\nabla W = \partial h^\top e`, :math:`\partial e = \partial h W` (or
    :math:`\partial h \odot \mathbb{1}\{e > 0\}` for ReLU), scattered into :math:`\nabla E`. Tested
    against autograd and ``torch.optim``.
    """

    @classmethod
    def supports(cls, cfg: TrainConfig) -> bool:
        return cfg.model != "qupdate" and not cfg.label_noise

    def step(
        self, t: Step, tokens: torch.Tensor | None, weights: torch.Tensor, lr: torch.Tensor
    ) -> None:
        E = self.state["E"]
        by_rows = tokens is not None and tokens.shape[1] < self.cfg.n_inputs
        if by_rows and tokens is not None:
            rows, e = tokens, take_rows(E, tokens)  # (R, b), (R, b, d)
            row_weights = torch.full_like(rows, 1.0 / rows.shape[1], dtype=DTYPE)
        else:
            rows, e, row_weights = self.all_rows, E, weights
        grads = self.gradients(rows, e, row_weights)
        if "E" in grads:
            grad_e = grads.pop("E")  # rows of ∇E, (R, b, d)
            if by_rows and self.optimizer.stateless:
                self.update_rows(rows, grad_e, lr * self.lr_factors["E"])
            else:
                grads["E"] = scatter_rows(grad_e, rows, E.shape[1]) if by_rows else grad_e
        for name, grad in grads.items():
            slot = self.slots.setdefault(name, {})
            self.optimizer.step(slot, self.state[name], grad, lr * self.lr_factors[name], t)

    def gradients(
        self, rows: torch.Tensor, e: torch.Tensor, row_weights: torch.Tensor
    ) -> dict[str, torch.Tensor]:
        """The learned parameters' gradients from the rows (R, b) and their embeddings e
        (R, b, d), weighted (R, b); ``"E"`` holds the rows' gradients (R, b, d)."""
        U, W = self.state["U"], self.state.get("W")
        h = torch.relu(e) if W is None else torch.bmm(e, W.transpose(1, 2))  # (R, b, d)
        if self.cfg.layer_norm:
            scale = (h.square().sum(2, keepdim=True) + LAYER_NORM_EPS).sqrt_()
            z = h / scale
        else:
            z = h
        delta = weighted_softmax_error(
            torch.bmm(z, U.transpose(1, 2)), self.targets[rows], row_weights
        )
        grad_h = torch.bmm(delta, U)  # ∂z, (R, b, d)
        if self.cfg.layer_norm:
            grad_h.sub_(z * (z * grad_h).sum(2, keepdim=True)).div_(scale)
        grads: dict[str, torch.Tensor] = {}
        if "U" in self.model.learned:
            grads["U"] = torch.bmm(delta.transpose(1, 2), z)  # (R, M, d)
        if "W" in self.model.learned:
            assert W is not None
            grads["W"] = torch.bmm(grad_h.transpose(1, 2), e)  # (R, d, d)
        if "E" in self.model.learned:
            grads["E"] = grad_h * (e > 0) if W is None else torch.bmm(grad_h, W)  # (R, b, d)
        return grads

    def update_rows(self, rows: torch.Tensor, grad_rows: torch.Tensor, lr: torch.Tensor) -> None:
        """The stateless step of E on the batch rows only: O(B d) instead of O(N d) a step.

        Repeated tokens first sum their gradients (in a zeroed-after-use buffer); every copy of
        a row then computes the same new row, so writing all copies is deterministic.
        """
        E = self.state["E"]
        runs, n, d = E.shape
        flat = (rows + torch.arange(runs, device=rows.device)[:, None] * n).flatten()
        if not hasattr(self, "row_buffer"):
            self.row_buffer = torch.zeros(runs * n, d, dtype=E.dtype, device=E.device)
        self.row_buffer.index_add_(0, flat, grad_rows.reshape(-1, d))
        grad = self.row_buffer.index_select(0, flat).view(runs, -1, d)
        self.row_buffer.index_fill_(0, flat, 0.0)
        direction = self.optimizer.direction(grad)
        new_rows = take_rows(E, rows).addcmul_(direction, lr[:, None, None], value=-1)
        E.view(runs * n, d).index_copy_(0, flat, new_rows.view(-1, d))

"""Any model and optimiser by autograd (``fast=False``): the tests' second opinion, and the
kernel of soft targets under non-linear optimisers."""

import torch
import torch.nn.functional as F

from assocmem.training.config import TrainConfig
from assocmem.training.kernels.parameters import ParameterKernel
from assocmem.training.optimizers.base import Step


class AutogradKernel(ParameterKernel):
    """Any model and optimiser: autograd through the batched model, batched optimiser step."""

    @classmethod
    def supports(cls, cfg: TrainConfig) -> bool:
        return cfg.model != "qupdate" and not cfg.label_noise

    def logits(self) -> torch.Tensor:
        with torch.no_grad():
            return super().logits()

    def loss(self, tokens: torch.Tensor | None, weights: torch.Tensor) -> torch.Tensor:
        """Sum over runs of each run's mean batch cross-entropy (or population loss)."""
        # Few samples: evaluate the batch rows; otherwise every token once, weighted by counts.
        by_rows = tokens is not None and tokens.shape[1] < self.cfg.n_inputs
        rows = tokens if by_rows and tokens is not None else self.all_rows
        logits = self.model.logits(self.state, rows, normalize=self.cfg.layer_norm)
        ce = F.cross_entropy(
            logits.flatten(0, 1), self.targets[rows].flatten(), reduction="none"
        ).view(rows.shape)
        return ce.mean(1).sum() if by_rows else (ce * weights).sum()

    def step(
        self, t: Step, tokens: torch.Tensor | None, weights: torch.Tensor, lr: torch.Tensor
    ) -> None:
        names = self.model.learned
        params = [self.state[name].requires_grad_(True) for name in names]
        grads = torch.autograd.grad(self.loss(tokens, weights), params)
        with torch.no_grad():
            for name, grad in zip(names, grads, strict=True):
                param = self.state[name].requires_grad_(False)
                slot = self.slots.setdefault(name, {})
                self.optimizer.step(slot, param, grad, lr * self.lr_factors[name], t)


class LabelLawAutogradKernel(AutogradKernel):
    r""":class:`AutogradKernel` whose ``targets`` is a label law L (N, M) or (R, N, M) (noisy
    labels): the loss is :math:`\sum_x w(x) \sum_y L(y|x)(-\log \operatorname{softmax}_y)` over
    every token."""

    @classmethod
    def supports(cls, cfg: TrainConfig) -> bool:
        return cfg.model != "qupdate" and bool(cfg.label_noise)

    def loss(self, tokens: torch.Tensor | None, weights: torch.Tensor) -> torch.Tensor:
        logits = self.model.logits(self.state, self.all_rows, normalize=self.cfg.layer_norm)
        ce = -(torch.log_softmax(logits, dim=2) * self.targets).sum(2)  # (R, N)
        return (ce * weights).sum()

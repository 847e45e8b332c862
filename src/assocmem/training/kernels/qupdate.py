"""The Eq. 16 approximation of one-pass SGD (Cabannes et al. 2024)."""

import torch

from assocmem.training.config import TrainConfig
from assocmem.training.kernels.base import (
    DTYPE,
    AbstractKernel,
    RunInputs,
    gram,
    per_run_products,
)
from assocmem.training.optimizers.base import Step


class QUpdateKernel(AbstractKernel):
    r"""Eq. 16: each occurrence of x adds :math:`\gamma / (1 + e^{q(x)}/(M-1))` to q(x),
    :math:`\gamma = \mathrm{lr}/B`, read out as the memory
    :math:`W_q = \sum_x q(x) u_{f^*(x)} e_x^\top`."""

    def __init__(self, cfg: TrainConfig, inputs: RunInputs, targets: torch.Tensor) -> None:
        super().__init__(cfg, inputs, targets)
        self.gram_inputs = gram(inputs.E)  # (R, N, N)
        self.gram_outputs = gram(inputs.U)  # (R, M, M)
        self.q = torch.zeros(inputs.E.shape[0], cfg.n_inputs, dtype=DTYPE, device=inputs.E.device)

    @classmethod
    def supports(cls, cfg: TrainConfig) -> bool:
        return cfg.model == "qupdate"

    def memory_tensors(self) -> dict[str, torch.Tensor]:
        return {"q": self.q}

    def logits(self) -> torch.Tensor:
        stored = self.q[:, :, None] * self.onehot  # (R, N, M): q(x) at column f*(x)
        # one run at a time: a run's logits never depend on its companions
        return per_run_products(self.gram_inputs, per_run_products(stored, self.gram_outputs))

    def step(
        self, t: Step, tokens: torch.Tensor | None, weights: torch.Tensor, lr: torch.Tensor
    ) -> None:
        # weights = c(x)/B, so c(x)·γ = weights · lr.
        gain = 1.0 / (1.0 + torch.exp(self.q) / (self.cfg.n_outputs - 1))
        self.q.add_(weights * lr[:, None] * gain)

"""The base of the kernels that hold the model's parameters themselves (E, U and W)."""

import torch

from assocmem.training.config import TrainConfig
from assocmem.training.kernels.base import AbstractKernel, RunInputs, run_lr_factor
from assocmem.training.models import MODEL_REGISTRY


class ParameterKernel(AbstractKernel):
    """State: the parameters ``E`` (R, N, d), ``U`` (R, M, d) and, for the W models, ``W``
    (R, d, d), copied from the inputs; the model learns those of ``model.learned``, each with
    its learning-rate factor (per run, (R,), in a zero-padded group)."""

    def __init__(self, cfg: TrainConfig, inputs: RunInputs, targets: torch.Tensor) -> None:
        super().__init__(cfg, inputs, targets)
        self.model = MODEL_REGISTRY[cfg.model]
        self.state = {"E": inputs.E.clone(), "U": inputs.U.clone()}
        if inputs.W is not None:  # drawn for the W models only
            self.state["W"] = inputs.W.clone()
        self.lr_factors = {name: run_lr_factor(cfg, inputs, name) for name in self.model.learned}
        runs, n = inputs.E.shape[0], cfg.n_inputs
        self.all_rows = torch.arange(n, device=inputs.E.device).expand(runs, n)

    @classmethod
    def state_elements(cls, cfg: TrainConfig) -> int:
        d, n = cfg.dim, cfg.n_inputs
        return 8 * d * d + 4 * max(n, min(cfg.batch_size, n)) * d  # W, its gradient and state

    def memory_tensors(self) -> dict[str, torch.Tensor]:
        return dict(self.state)  # E, U and W (the W models)

    def logits(self) -> torch.Tensor:
        return self.model.logits(self.state, self.all_rows, normalize=self.cfg.layer_norm)

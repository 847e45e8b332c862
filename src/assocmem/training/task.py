"""What a training run learns: the input law p, the targets f* and the label law L."""

from dataclasses import dataclass

import torch

from assocmem.laws.tokens import label_law, mod_targets
from assocmem.ops.population import PopulationError
from assocmem.training.config import TrainConfig
from assocmem.training.kernels import DTYPE


@dataclass(frozen=True)
class Task:
    """What a group's runs learn: the input law p (N,), the targets f* (N,) and the label law
    L(y|x) (N, M) (one-hot without label noise); ``population`` sums p over wrong tokens (one
    for all of a group's evaluations)."""

    probs: torch.Tensor
    targets: torch.Tensor
    law: torch.Tensor
    population: PopulationError

    @staticmethod
    def of(cfg: TrainConfig) -> "Task":
        targets = mod_targets(cfg.n_inputs, cfg.n_outputs).to(cfg.device)
        probs = cfg.probabilities()
        return Task(
            probs=probs.to(cfg.device, DTYPE),
            population=PopulationError(probs.to(DTYPE)),
            targets=targets,
            law=label_law(targets, cfg.n_outputs, cfg.label_noise).to(DTYPE),
        )

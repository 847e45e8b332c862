"""A straightforward reference: one ``nn.Module`` and one ``torch.optim`` optimiser per run,
one run at a time, as the paper's script does. Tests compare the batched engine with it and the
benchmark times it. It draws the same embeddings, samples and initialisation as the engine.
"""

import torch
import torch.nn.functional as F
from torch import nn

from assocmem.laws.tokens import label_law, mod_targets
from assocmem.training.config import TrainConfig
from assocmem.training.engine import draw_run
from assocmem.training.kernels import DTYPE
from assocmem.training.models import layer_norm
from assocmem.training.optimizers import lr_factor


class ReferenceMemory(nn.Module):
    r"""Logits :math:`u_y^\top h(x)` with :math:`h = W e_x` (matrix, learned) or ``ReLU(e_x)``
    (relu)."""

    E: torch.Tensor
    U: torch.Tensor
    W: torch.Tensor

    def __init__(self, cfg: TrainConfig, draws: dict[str, torch.Tensor | None]) -> None:
        super().__init__()
        self.kind, self.normalize = cfg.model, cfg.layer_norm
        learn_embeddings = cfg.model in ("learned", "relu")
        for name in ("E", "U"):
            value = draws[name]
            assert value is not None
            if learn_embeddings:
                self.register_parameter(name, nn.Parameter(value.clone()))
            else:
                self.register_buffer(name, value.clone())
        if draws["W"] is not None and cfg.model != "relu":
            self.W = nn.Parameter(draws["W"].clone())

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        embedded = self.E[tokens]
        hidden = torch.relu(embedded) if self.kind == "relu" else embedded @ self.W.T
        if self.normalize:
            hidden = layer_norm(hidden)
        return hidden @ self.U.T


def make_optimizer(cfg: TrainConfig, model: ReferenceMemory) -> torch.optim.Optimizer:
    """The ``torch.optim`` counterpart of the config's optimiser, one group per parameter
    (each with its learning-rate factor); optimisers without one raise NotImplementedError."""
    groups = [
        {"params": [param], "lr": cfg.lr * lr_factor(cfg, name)}
        for name, param in model.named_parameters()
    ]
    return cfg.optimizer.torch_optimizer(groups)


def reference_train(cfg: TrainConfig) -> torch.Tensor:
    """Train one run; returns its final logits for every token, (N, M)."""
    draws = draw_run(cfg)
    model = ReferenceMemory(cfg, draws)
    optimizer = make_optimizer(cfg, model)
    milestones = list(cfg.decay_steps) if cfg.schedule == "step" else []
    scheduler = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones, cfg.decay_factor)
    targets = mod_targets(cfg.n_inputs, cfg.n_outputs).to(cfg.device)
    probs = cfg.probabilities().to(cfg.device, DTYPE)
    law = label_law(targets, cfg.n_outputs, cfg.label_noise).to(DTYPE)  # (N, M)
    everything = torch.arange(cfg.n_inputs, device=cfg.device)
    tokens, labels = draws["tokens"], draws.get("labels")
    for t in range(cfg.steps):
        optimizer.zero_grad()
        if tokens is None:  # population loss, expected over the label law
            losses = F.cross_entropy(model(everything), law, reduction="none")
            loss = (losses * probs).sum()
        else:
            window = slice(t * cfg.batch_size, (t + 1) * cfg.batch_size)
            observed = targets[tokens[window]] if labels is None else labels[window]
            loss = F.cross_entropy(model(tokens[window]), observed)
        torch.autograd.backward(loss)
        optimizer.step()
        scheduler.step()
    with torch.no_grad():
        logits: torch.Tensor = model(everything)
    return logits

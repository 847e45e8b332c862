"""The studies' full-batch and minibatch Adams are the optimiser registry's (issue 33, criterion 1):
the capacity frontier's ``memorize`` and the trained hierarchy step through ``OPTIMIZERS["adam"]``
with betas (0.9, 0.999) (that no other file writes Adam's update: tests/test_written_once.py).

The reference below spells the registry's association out (the bias-corrected
:math:`\\sqrt{v} / \\sqrt{1 - \\beta_2^t}` and the step as a product); torch.optim's association
(:math:`\\sqrt{v / (1 - \\beta_2^t)}` and ``addcdiv``), which the two trainers used before, rounds
differently, and the tests check that it does on these very runs, so they tell the two apart.
"""

import math

import torch

from assocmem.ops.cross_entropy import softmax_error
from assocmem.studies.hierarchy.train import (
    BottleneckConfig,
    bottleneck_gradients,
    direct_gradient,
    draw_trial,
    fit_trials,
)
from assocmem.training.memorize import AdamSettings, memorize

BETAS, EPS = (0.9, 0.999), 1e-8


def _adam(association: str):
    """A list-of-tensors Adam(0.9, 0.999) with per-tensor moments, in ``association``:
    "registry" (the entry's) or "torch.optim" (the trainers' former one)."""
    moments: dict[int, tuple[torch.Tensor, torch.Tensor]] = {}
    beta1, beta2 = BETAS

    def step(index: int, param: torch.Tensor, grad: torch.Tensor, lr: float, t: int) -> None:
        m, v = moments.setdefault(index, (torch.zeros_like(param), torch.zeros_like(param)))
        m.lerp_(grad, 1 - beta1)
        v.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        if association == "registry":
            rate = torch.full((1,), lr, dtype=param.dtype) / (1 - beta1**t)
            denom = (v.sqrt() / math.sqrt(1 - beta2**t)).add_(EPS)
            param.sub_(rate.reshape(-1, *[1] * (param.dim() - 1)) * (m / denom))
        else:
            denom = (v / (1 - beta2**t)).sqrt_().add_(EPS)
            param.addcdiv_(m, denom, value=-lr / (1 - beta1**t))

    return step


def _memorize_reference(E, U, targets, lr, steps, association):
    W = E.new_zeros(E.shape[0], E.shape[2], E.shape[2])
    step = _adam(association)
    for t in range(1, steps + 1):
        delta = softmax_error(E @ (U @ W).mT, targets) / E.shape[1]
        step(0, W, U.mT @ (delta.mT @ E), lr, t)
    return W


def test_memorize_steps_by_the_registrys_adam():
    gen = torch.Generator().manual_seed(3)
    E, U = torch.randn(1, 40, 8, generator=gen), torch.randn(1, 40, 8, generator=gen)
    targets, lr, steps = torch.arange(40), 0.3, 60
    result = memorize(E, U, targets, tau=2.0, settings=AdamSettings(lr, max_steps=steps, window=0))
    assert result.steps == steps and result.memory is not None
    expected = _memorize_reference(E, U, targets, lr, steps, "registry")
    assert torch.equal(result.memory, expected)
    assert not torch.equal(expected, _memorize_reference(E, U, targets, lr, steps, "torch.optim"))


def _hierarchy_reference(cfg, association):
    trials = draw_trial(cfg, 0)
    targets = trials.f1 % cfg.n_outputs
    model, matrix = trials.model, trials.matrix
    step = _adam(association)
    for t in range(1, cfg.n_steps + 1):
        x = trials.ids[t - 1]
        labels = targets[x]
        _, grads = bottleneck_gradients(model, trials.inputs[x], trials.outputs, labels)
        for index, (param, grad) in enumerate(zip(model.tensors(), grads, strict=True)):
            step(index, param, grad, cfg.lr, t)
        grad = direct_gradient(matrix, trials.direct_inputs[x], trials.direct_outputs, labels)
        step(-1, matrix, grad, cfg.lr, t)
    return [*model.tensors(), matrix]


def test_the_trained_hierarchy_steps_by_the_registrys_adam():
    cfg = BottleneckConfig(
        n_inputs=30, n_concepts=6, n_outputs=3, dim=12, n_samples=200, batch_size=16, n_steps=40
    )
    trials = draw_trial(cfg, 0)
    with torch.no_grad():
        fit_trials(cfg, trials)
        expected = _hierarchy_reference(cfg, "registry")
        former = _hierarchy_reference(cfg, "torch.optim")
    trained = [*trials.model.tensors(), trials.matrix]
    assert all(torch.equal(a, b) for a, b in zip(trained, expected, strict=True))
    assert not all(torch.equal(a, b) for a, b in zip(former, expected, strict=True))

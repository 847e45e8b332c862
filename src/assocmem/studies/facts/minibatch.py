r"""Minibatch training of a memory of N facts with M = N answers, for N too large for full batch.

The memories, their gradients and the optimiser step are those of
:mod:`assocmem.studies.facts.memories` (linear :math:`u_y^\top W e_x`, or the MLP key–value
memory; any optimiser of the registry, ``adam`` the paper's sign-like Adam); the problem is that
of the capacity searches (:func:`~assocmem.studies.facts.capacity.facts_problem`: Gaussian E and
U, f* a seeded random permutation, p uniform). What changes is the loss of a step: the mean
cross-entropy over B facts drawn i.i.d. from the uniform law (a ``batches`` stream), so a step
costs :math:`O(B\cdot M\cdot d + M\cdot d^2)` instead of the full batch's :math:`O(N\cdot M\cdot d)`
and holds B×M scores, never N×M.

Every ``eval_every`` steps the top-1 accuracy over all N facts is measured in blocks of inputs
(:func:`assocmem.ops.top1.wrong_in_blocks`: strict argmax, ties are errors); training stops once
the mean over the trials reaches τ, or at the step budget. The bits stored at the end are the
Fano count of :func:`~assocmem.studies.facts.capacity.bits_per_parameter`.
"""

from collections.abc import Callable
from dataclasses import dataclass

import torch

from assocmem import rng
from assocmem.config.checks import int_at_least
from assocmem.config.errors import ConfigError, unknown_name
from assocmem.ops.top1 import wrong_in_blocks
from assocmem.runtime import check_device
from assocmem.studies.facts.capacity import bits_per_parameter, facts_problem
from assocmem.studies.facts.memories import MEMORIES, MODELS, Params, TrainSettings
from assocmem.training.optimizers import OPTIMIZERS
from assocmem.training.stop import AnyOf, Mean, Reading, Steps, TargetAccuracy
from assocmem.training.trainer import Minibatches, train

EVAL_BLOCK = 1024  # inputs scored at a time when measuring accuracy: O(block·M) memory


@dataclass(frozen=True)
class MinibatchResult:
    """What one minibatch training measured (accuracy uniform over the N facts).

    Attributes
    ----------
    accuracy : float
        Mean over the trials of the final top-1 accuracy.
    steps : int
        Optimiser steps taken.
    stopped : str
        ``"reached"`` (mean accuracy ≥ τ at an evaluation) or ``"budget"``.
    curve : tuple of (int, float)
        (steps, mean accuracy) at each evaluation, the last one the final state.
    bits : dict of str to float
        :func:`~assocmem.studies.facts.capacity.bits_per_parameter` at the final accuracy:
        ``bits``, ``trained_parameters``, ``bits_per_parameter``,
        ``bits_per_parameter_with_embeddings``.
    """

    accuracy: float
    steps: int
    stopped: str
    curve: tuple[tuple[int, float], ...]
    bits: dict[str, float]


def memory_accuracy(
    model: str, params: Params, E: torch.Tensor, U: torch.Tensor, targets: torch.Tensor
) -> torch.Tensor:
    r"""Top-1 accuracy over all N facts of each run, (R,) float64, scored in blocks.

    E: (R, N, d); U: (R, M, d); targets: (N,). A run's scores are features(x)·u_y with the
    memory's features (:math:`W e_x`, linear; :math:`W_{\mathrm{out}}\,\sigma(W_{\mathrm{in}}
    e_x)`, MLP): the same numbers as the scores of
    :func:`~assocmem.studies.facts.memories.logits_and_grads`, up to rounding.
    """
    memory = MEMORIES[model]
    runs = []
    for r in range(E.shape[0]):

        def features(start: int, stop: int, r: int = r) -> torch.Tensor:
            return memory.features(params, r, E[r, start:stop]).unsqueeze(0)  # (1, b, d)

        wrong = wrong_in_blocks(features, U[r].T, targets, block=EVAL_BLOCK)  # (1, N)
        runs.append(1.0 - wrong.to(torch.float64).mean())
    return torch.stack(runs)


def train_minibatch(
    E: torch.Tensor,
    U: torch.Tensor,
    targets: torch.Tensor,
    *,
    settings: TrainSettings,
    batch_size: int,
    eval_every: int,
    tau: float,
    init: torch.Generator,
    batches: torch.Generator,
    log: Callable[[str], None] | None = None,
) -> tuple[torch.Tensor, int, str, tuple[tuple[int, float], ...]]:
    """Train R memories (one per draw of E, U) on minibatches of B uniform facts.

    E: (R, N, d); U: (R, M, d); targets: (N,). Every run sees the same batch indices (drawn
    from ``batches``); its parameters start from ``init`` (:func:`init_params`). The one
    trainer steps them, evaluating every ``eval_every`` steps and at the budget. Returns each
    run's final accuracy (R,), the steps taken, why it stopped and the evaluation curve;
    ``log`` is called with one line per evaluation.
    """
    runs = E.shape[0]

    def on_evaluate(reading: Reading) -> None:
        if log is not None:
            log(f"step {reading.steps}: accuracy {float(reading.accuracy.mean()):.4f}")

    result = train(
        settings.memory(), Minibatches(targets, batch_size, batches, runs),
        fixed={"E": E, "U": U}, optimizer=settings.entry(),
        lr=torch.full((runs,), settings.lr, device=E.device), generator=init,
        stop=AnyOf(TargetAccuracy(tau, Mean()), Steps(settings.max_steps)), every=eval_every,
        evaluate=lambda state: memory_accuracy(settings.model, state, E, U, targets),
        on_evaluate=on_evaluate,
    )  # fmt: skip
    curve = tuple((reading.steps, float(reading.accuracy.mean())) for reading in result.curve)
    return result.accuracy, result.steps, result.stopped, curve


def minibatch_facts(
    n_facts: int,
    dim: int,
    *,
    model: str = "linear",
    optimizer: str = "adam",
    lr: float = 0.01,
    batch_size: int = 1024,
    max_steps: int = 2000,
    eval_every: int = 100,
    tau: float = 1.0,
    trials: int = 1,
    seed: int = 0,
    device: str = "cpu",
    log: Callable[[str], None] | None = None,
) -> MinibatchResult:
    """Train ``trials`` memories of N facts (M = N, uniform, f* a random permutation) on
    minibatches, and measure their top-1 accuracy and bits per parameter.

    Parameters
    ----------
    n_facts : int
        N = M.
    dim : int
        d.
    model : {"linear", "mlp"}
    optimizer : str
        A name of the optimiser registry (``"adam"``: sign-like, betas (0, 0); ``"sgd"``).
    lr : float
        Its learning rate (constant).
    batch_size : int
        B, facts per step, drawn i.i.d. uniform (with replacement).
    max_steps, eval_every : int
        Step budget; steps between two measures of the accuracy over all N facts.
    tau : float
        Stop at the first evaluation whose mean accuracy over the trials is ≥ τ (1: all facts).
    trials, seed : int
        Independent draws of E and U trained together; the seed of every stream.
    device : str, default "cpu"
        Where the memories train (``cuda`` or ``cuda:K`` on a GPU); the problem and the
        batches are drawn on the CPU, so every device trains on the same facts.
    log : callable, optional
        Called with one line per evaluation (``print`` to follow a long run).

    Returns
    -------
    MinibatchResult

    Raises
    ------
    ConfigError
        Naming the first field at fault.
    """
    _check(n_facts, dim, model, lr, batch_size, max_steps, eval_every, tau, trials)
    if optimizer not in OPTIMIZERS:
        raise unknown_name("optimizer", "value", optimizer, OPTIMIZERS)
    settings = TrainSettings(model=model, optimizer=optimizer, lr=lr, max_steps=max_steps)
    check_device(device)
    E, U, targets = facts_problem(n_facts, dim, trials, seed, device)
    acc, steps, stopped, curve = train_minibatch(
        E, U, targets, settings=settings, batch_size=batch_size, eval_every=eval_every, tau=tau,
        init=rng.generator(seed, "init", n_facts, dim),
        batches=rng.generator(seed, "batches", n_facts, dim), log=log,
    )  # fmt: skip
    mean = float(acc.mean())
    bits = bits_per_parameter(model, dim, n_facts, mean)
    return MinibatchResult(mean, steps, stopped, curve, bits)


def _check(
    n_facts: int, dim: int, model: str, lr: float, batch_size: int, max_steps: int,
    eval_every: int, tau: float, trials: int,
) -> None:  # fmt: skip
    int_at_least("n_facts", n_facts, 2)
    if model not in MODELS:
        raise ConfigError("model", f"must be one of {', '.join(MODELS)}, got {model!r}")
    int_at_least("dim", dim, MEMORIES[model].min_dim)
    if not lr > 0:
        raise ConfigError("lr", f"must be a number > 0, got {lr!r}")
    int_at_least("batch_size", batch_size, 1)
    int_at_least("max_steps", max_steps, 0)
    int_at_least("eval_every", eval_every, 1)
    if not 0 < tau <= 1:
        raise ConfigError("tau", f"must be in (0, 1], got {tau!r}")
    int_at_least("trials", trials, 1)

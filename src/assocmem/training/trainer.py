r"""The one trainer: R runs of a memory stepped together by an optimiser of the registry.

:func:`train` takes what differs between trainings as arguments, like nanoGPT's one loop:

- a **memory** (:mod:`assocmem.training.memories`): its learned tensors, scores and gradients;
- an **optimiser** of :data:`~assocmem.training.optimizers.OPTIMIZERS` and a learning rate per
  run (R,): runs differ in seed (their fixed tensors and init) and rate;
- a **data source**: :class:`FullBatch` (every input once a step), :class:`Minibatches` (B
  inputs drawn i.i.d. uniform from a ``batches`` generator, the same for every run) or
  :class:`Stream` (any function of the step);
- an **evaluation schedule**: every ``every`` steps (and whenever a stop rule asks), the
  accuracy over every input, from the step's own scores under full batch, else by ``evaluate``
  or the memory's scores of every input;
- a **stop rule** (:mod:`assocmem.training.stop`), per run or on a group statistic. A run that
  stops keeps its state (its learning rate is zero from then on) while the others train on.

Steps are counted from 0 (steps taken): the evaluation at k reads the state after k steps. The
loop runs under :func:`~assocmem.runtime.flush_denormals` (once memories are stored most softmax
entries underflow: subnormal arithmetic made CPU steps up to 5× slower) and
:func:`~assocmem.runtime.device_numerics` (CUDA: deterministic, TF32 off).
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import torch

from assocmem.ops.population import wrong_tokens
from assocmem.runtime import device_numerics, flush_denormals
from assocmem.training.memories.base import AbstractMemory, Batch, State, mean_cross_entropy
from assocmem.training.optimizers.base import AbstractOptimizer, Slot
from assocmem.training.stop import Reading, StopRule


def accuracy(scores: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Top-1 accuracy uniform over the rows (ties count as errors), (R,) float64, from scores
    (R, B, M) and targets broadcastable to (R, B)."""
    return 1.0 - wrong_tokens(scores, targets).to(torch.float64).mean(1)


class DataSource(Protocol):
    """Where a step's batch comes from.

    Attributes
    ----------
    targets : torch.Tensor
        f* of every input (N,): what an evaluation over every input reads.
    full_batch : bool
        Whether every batch is every input once (the step's scores are then the evaluation's).
    """

    @property
    def targets(self) -> torch.Tensor: ...

    @property
    def full_batch(self) -> bool: ...

    def batch(self, step: int) -> Batch:
        """The batch of step ``step + 1`` (``step`` taken)."""
        ...


@dataclass(frozen=True)
class FullBatch:
    """Every input once a step, its loss the mean over the N inputs (p uniform)."""

    targets: torch.Tensor  # (N,)
    full_batch: bool = True

    def batch(self, step: int) -> Batch:
        return Batch(self.targets)


@dataclass(frozen=True)
class Minibatches:
    """B inputs a step, drawn i.i.d. uniform (with replacement) from ``generator`` on the CPU,
    the same rows for every run, so every device trains on the same batches."""

    targets: torch.Tensor  # (N,)
    batch_size: int
    generator: torch.Generator
    runs: int
    full_batch: bool = False

    def batch(self, step: int) -> Batch:
        n = self.targets.shape[0]
        rows = torch.randint(n, (self.batch_size,), generator=self.generator)
        rows = rows.to(self.targets.device)
        return Batch(self.targets[rows], rows.expand(self.runs, -1))


@dataclass(frozen=True)
class Stream:
    """Any batches: ``draw(step)`` gives step ``step + 1``'s (token rows or sequences)."""

    targets: torch.Tensor  # (N,) f* of every input, for evaluations over every input
    draw: Callable[[int], Batch]
    full_batch: bool = False

    def batch(self, step: int) -> Batch:
        return self.draw(step)


@dataclass(frozen=True)
class TrainResult:
    """What a training ended with.

    Attributes
    ----------
    state : dict of str to torch.Tensor
        The learned tensors (R, ...), each run's at its stop.
    accuracy : torch.Tensor
        (R,) float64, each run's at its stop.
    run_steps : torch.Tensor
        (R,) int64, the steps each run took.
    reasons : tuple of str
        Why each run stopped (its stop rule's ``reason``).
    curve : tuple of Reading
        Every evaluation (steps, accuracy (R,), loss where read).
    """

    state: State
    accuracy: torch.Tensor
    run_steps: torch.Tensor
    reasons: tuple[str, ...]
    curve: tuple[Reading, ...]

    @property
    def steps(self) -> int:
        """The steps of the longest run (every run's, when they stop together)."""
        return int(self.run_steps.max())

    @property
    def stopped(self) -> str:
        """Why the last runs to stop stopped (every run's reason, when they stop together)."""
        return self.reasons[int(self.run_steps.argmax())]


def train(
    memory: AbstractMemory,
    data: DataSource,
    *,
    fixed: State,
    optimizer: AbstractOptimizer,
    lr: torch.Tensor,
    stop: StopRule,
    generator: torch.Generator | None = None,
    every: int = 1,
    evaluate: Callable[[State], torch.Tensor] | None = None,
    on_evaluate: Callable[[Reading], None] | None = None,
    flush: bool = True,
    init: State | None = None,
) -> TrainResult:
    """Train R runs of ``memory`` until ``stop`` stops every run.

    Parameters
    ----------
    memory : AbstractMemory
        What is trained; :meth:`~AbstractMemory.init` draws its learned tensors from
        ``generator`` (default: a generator seeded 0, for memories that draw nothing).
    data : DataSource
        :class:`FullBatch`, :class:`Minibatches` or :class:`Stream`.
    fixed : dict of str to torch.Tensor
        The tensors the memory reads but does not learn, (R, ...) (``E``, ``U``).
    optimizer : AbstractOptimizer
        An entry of the optimiser registry; its state is kept per learned tensor.
    lr : torch.Tensor
        (R,) a learning rate per run, on the device of ``fixed``.
    stop : StopRule
        When each run stops (:mod:`assocmem.training.stop`).
    every : int, default 1
        Steps between two evaluations; 0: only where a stop rule asks (:meth:`StopRule.due`).
    evaluate : callable, optional
        The accuracy (R,) float64 of a state over every input; default: from the step's scores
        under full batch, else the memory's scores of every input.
    on_evaluate : callable, optional
        Called with each evaluation's :class:`~assocmem.training.stop.Reading`.
    init : dict of str to torch.Tensor, optional
        The learned tensors at step 0 (default: ``memory.init(fixed, generator)``), e.g. each
        run's drawn from its own generator, so a run never depends on its batch companions.
    flush : bool, default True
        Flush subnormal floats to zero while training (False: keep torch's default, for the
        loops that ran without it and keep their bits).
    """
    device = lr.device
    with flush_denormals(flush), device_numerics(device):
        if init is None:
            init = memory.init(fixed, generator or torch.Generator().manual_seed(0))
        state = {**fixed, **init}
        loop = _Loop(memory, data, state, optimizer, lr, stop, evaluate)
        return loop.run(every, on_evaluate)


class _Loop:
    """The state of one :func:`train` call: the runs still training, and what stopped ones
    ended with."""

    def __init__(
        self,
        memory: AbstractMemory,
        data: DataSource,
        state: State,
        optimizer: AbstractOptimizer,
        lr: torch.Tensor,
        stop: StopRule,
        evaluate: Callable[[State], torch.Tensor] | None,
    ) -> None:
        self.memory, self.data, self.state = memory, data, state
        self.optimizer, self.lr, self.stop, self.evaluate = optimizer, lr, stop, evaluate
        runs = lr.shape[0]
        self.active = torch.ones(runs, dtype=torch.bool)
        self.final_accuracy = torch.zeros(runs, dtype=torch.float64)
        self.final_steps = torch.zeros(runs, dtype=torch.int64)
        self.reasons = [""] * runs
        self.curve: list[Reading] = []
        self.kept: State = {}  # the learned tensors of stopped runs, at their stop

    def run(self, every: int, on_evaluate: Callable[[Reading], None] | None) -> TrainResult:
        slots: dict[str, Slot] = {name: {} for name in self.memory.learned}
        lr, step = self.lr, 0
        self.stop.start()
        while True:
            grads = None
            scheduled = bool(every) and step % every == 0
            if scheduled or self.stop.due(step):
                reading, grads = self.read(step, scheduled)
                self.curve.append(reading)
                if on_evaluate is not None:
                    on_evaluate(reading)
                stopped = self.stop.stops(reading)
                if stopped is not None:
                    if self.record(reading, stopped):
                        return self.result()
                    lr = self.lr * self.active.to(self.lr)  # the stopped runs' rate is 0
            if grads is None:
                _, grads = self.memory.gradients(self.state, self.data.batch(step))
            step += 1
            for name in self.memory.learned:
                self.optimizer.step(slots[name], self.state[name], grads[name], lr, step)

    def read(self, step: int, scheduled: bool) -> tuple[Reading, State | None]:
        """The evaluation after ``step`` steps, and the step's gradients where it formed them
        (full batch: the step's scores are the evaluation's). Outside the schedule, for a stop
        rule of the step count alone, nothing is measured."""
        if not (scheduled or self.stop.needs_accuracy or self.stop.needs_loss):
            nothing = torch.full(self.active.shape, float("nan"), dtype=torch.float64)
            return Reading(step, nothing), None
        if self.evaluate is None and self.data.full_batch:
            batch = self.data.batch(step)
            scores, grads = self.memory.gradients(self.state, batch)
            loss = mean_cross_entropy(scores, batch.targets) if self.stop.needs_loss else None
            return Reading(step, accuracy(scores, batch.targets), loss), grads
        with torch.no_grad():
            return self.read_every_input(step), None

    def read_every_input(self, step: int) -> Reading:
        """Accuracy (by ``evaluate``, or the memory's scores) and, where asked, loss over every
        input."""
        targets = self.data.targets
        if self.evaluate is not None and not self.stop.needs_loss:
            return Reading(step, self.evaluate(self.state))
        scores = self.memory.scores(self.state, None)  # (R, N, M)
        acc = accuracy(scores, targets) if self.evaluate is None else self.evaluate(self.state)
        loss = mean_cross_entropy(scores, targets) if self.stop.needs_loss else None
        return Reading(step, acc, loss)

    def record(self, reading: Reading, stopped: torch.Tensor) -> bool:
        """Record the runs ``stopped`` (R,) bool the stop rule stops now; whether none trains
        on."""
        new = stopped & self.active
        if bool(new.any()):
            self.final_accuracy[new] = reading.accuracy.cpu()[new]
            self.final_steps[new] = reading.steps
            for r in new.nonzero().flatten().tolist():
                self.reasons[r] = self.stop.reason_of(r)
            self.keep(new)
            self.active &= ~new
        return not bool(self.active.any())

    def keep(self, runs: torch.Tensor) -> None:
        """Copy the learned tensors of ``runs`` (R,) bool at their stop: with a zero rate their
        state may still drift (weight decay, momentum)."""
        if not self.kept and bool(runs.eq(self.active).all()):  # every run stops now: no copy
            self.kept = {name: self.state[name] for name in self.memory.learned}
            return
        where = runs.to(self.lr.device)
        for name in self.memory.learned:
            value = self.state[name]
            mask = where.view(-1, *([1] * (value.dim() - 1)))
            held = self.kept.get(name)
            self.kept[name] = value.clone() if held is None else torch.where(mask, value, held)

    def result(self) -> TrainResult:
        return TrainResult(
            state=self.kept,
            accuracy=self.final_accuracy,
            run_steps=self.final_steps,
            reasons=tuple(self.reasons),
            curve=tuple(self.curve),
        )

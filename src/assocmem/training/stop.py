r"""Stop rules of the trainer (:func:`assocmem.training.trainer.train`), each read on a statistic
of the runs' accuracy (or loss) at an evaluation.

A **statistic** maps the runs' values (R,) to G group values and says which runs each group
holds: :class:`PerRun` (G = R: each run stops on its own, the others train on), :class:`Mean`
(one group: the mean over the runs), :class:`BestGroupMean` (one group: the best mean over k
consecutive equal groups, e.g. the best learning rate's mean over trials). A **rule** returns,
at steps taken k, the runs it stops (R,) bool; :class:`AnyOf` combines rules, the first to stop
a run naming why (``reason``).

Rules: :class:`Steps` (fixed steps, the step budget), :class:`TargetAccuracy`, :class:`GiveUp`
(the capacity searches' hopeless rule: the last window's gain, extrapolated linearly to the
budget, cannot reach τ), :class:`Converged` (the loss's relative change over a window below a
tolerance) and :class:`TimeBudget` (wall-clock seconds). A rule holds its state across a
training: :meth:`StopRule.start` resets it.
"""

import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field

import torch


class Statistic(ABC):
    """Group values (G,) float64 of run values (R,), and the runs of each group."""

    @abstractmethod
    def __call__(self, values: torch.Tensor) -> torch.Tensor:
        """(G,) float64 from (R,)."""

    @abstractmethod
    def members(self, group_stops: torch.Tensor, runs: int) -> torch.Tensor:
        """The runs (R,) bool of the groups that stop, ``group_stops`` (G,) bool."""


class PerRun(Statistic):
    """Each run is its own group."""

    def __call__(self, values: torch.Tensor) -> torch.Tensor:
        return values.to(torch.float64)

    def members(self, group_stops: torch.Tensor, runs: int) -> torch.Tensor:
        return group_stops


class Mean(Statistic):
    """One group: the mean over every run."""

    def __call__(self, values: torch.Tensor) -> torch.Tensor:
        return values.to(torch.float64).mean()[None]

    def members(self, group_stops: torch.Tensor, runs: int) -> torch.Tensor:
        return group_stops.expand(runs)


@dataclass(frozen=True)
class BestGroupMean(Statistic):
    """One group: the best mean over ``groups`` consecutive equal groups of runs (one per
    learning rate, say, each holding the trials)."""

    groups: int

    def __call__(self, values: torch.Tensor) -> torch.Tensor:
        return values.to(torch.float64).view(self.groups, -1).mean(1).max()[None]

    def members(self, group_stops: torch.Tensor, runs: int) -> torch.Tensor:
        return group_stops.expand(runs)


@dataclass
class Reading:
    """What an evaluation measured at ``steps`` taken: accuracy (R,) float64 (NaN where nothing
    asked for it: a stop rule of the step count alone, outside the schedule) and, where a rule
    asks for it (:attr:`StopRule.needs_loss`), each run's mean loss (R,)."""

    steps: int
    accuracy: torch.Tensor
    loss: torch.Tensor | None = None


class StopRule(ABC):
    """Which runs stop at an evaluation, and why (``reason``)."""

    reason: str = "stopped"
    needs_accuracy: bool = True  # False: the rule reads the step count alone
    needs_loss: bool = False

    def start(self) -> None:  # noqa: B027 (a hook: stateless rules have nothing to forget)
        """Forget the state of a previous training."""

    def due(self, steps: int) -> bool:
        """Whether the rule needs an evaluation at ``steps`` taken whatever the schedule."""
        return False

    @abstractmethod
    def stops(self, reading: Reading) -> torch.Tensor | None:
        """The runs (R,) bool this rule stops now; None where it stops none (no tensor formed:
        a rule read every step costs few ops)."""

    def reason_of(self, run: int) -> str:
        """Why run ``run`` stopped at the last :meth:`stops`."""
        return self.reason


@dataclass
class Steps(StopRule):
    """Stop every run once ``steps`` steps are taken (fixed steps; the step budget)."""

    steps: int
    reason: str = "budget"
    needs_accuracy: bool = False

    def due(self, steps: int) -> bool:
        return steps >= self.steps

    def stops(self, reading: Reading) -> torch.Tensor | None:
        return (
            torch.ones(len(reading.accuracy), dtype=torch.bool) if self.due(reading.steps) else None
        )


@dataclass
class TargetAccuracy(StopRule):
    """Stop a group once its accuracy statistic is ≥ τ."""

    tau: float
    statistic: Statistic = field(default_factory=Mean)
    reason: str = "reached"

    def stops(self, reading: Reading) -> torch.Tensor | None:
        reached = (self.statistic(reading.accuracy) >= self.tau).cpu()
        return self.statistic.members(reached, len(reading.accuracy)) if reached.any() else None


@dataclass
class GiveUp(StopRule):
    """The capacity searches' hopeless rule: every ``window`` steps (0: never), a group's gain
    in accuracy since the last check, extrapolated linearly to ``max_steps``, cannot reach τ.

    Accuracy curves of memorisation are concave after their first rise, so the extrapolation
    overestimates the final accuracy and the rule cuts only runs that would fail anyway (up to
    noise).
    """

    tau: float
    window: int
    max_steps: int
    statistic: Statistic = field(default_factory=Mean)
    reason: str = "hopeless"
    checkpoint: tuple[int, torch.Tensor | float] = (0, 0.0)  # (steps, statistic) at the last check

    def start(self) -> None:
        self.checkpoint = (0, 0.0)

    def stops(self, reading: Reading) -> torch.Tensor | None:
        k, runs = reading.steps, len(reading.accuracy)
        if not (self.window and k % self.window == 0 and k > 0):
            return None
        value = self.statistic(reading.accuracy).cpu()
        gain_rate = (value - self.checkpoint[1]) / (k - self.checkpoint[0])
        hopeless = value + gain_rate * (self.max_steps - k) < self.tau
        self.checkpoint = (k, value)
        return self.statistic.members(hopeless, runs)


@dataclass
class Converged(StopRule):
    """Stop a group once its loss statistic changed by less than ``tolerance`` (relative) over
    the last ``window`` steps: :math:`|L_k - L_{k'}| \\le \\mathrm{tol} \\cdot |L_{k'}|`, k' the
    latest evaluation at most k − window."""

    tolerance: float
    window: int
    statistic: Statistic = field(default_factory=Mean)
    reason: str = "converged"
    needs_loss: bool = True
    history: list[tuple[int, torch.Tensor]] = field(default_factory=list)

    def start(self) -> None:
        self.history = []

    def stops(self, reading: Reading) -> torch.Tensor | None:
        assert reading.loss is not None
        value = self.statistic(reading.loss).cpu()
        past = [v for k, v in self.history if k <= reading.steps - self.window]
        self.history.append((reading.steps, value))
        if not past:
            return None
        flat = (value - past[-1]).abs() <= self.tolerance * past[-1].abs()
        return self.statistic.members(flat, len(reading.accuracy))


@dataclass
class TimeBudget(StopRule):
    """Stop every run once ``seconds`` of wall-clock time have passed since the start."""

    seconds: float
    reason: str = "budget"
    needs_accuracy: bool = False
    started: float = 0.0

    def start(self) -> None:
        self.started = time.perf_counter()

    def stops(self, reading: Reading) -> torch.Tensor | None:
        late = time.perf_counter() - self.started >= self.seconds
        return torch.ones(len(reading.accuracy), dtype=torch.bool) if late else None


class AnyOf(StopRule):
    """The rules in order: a run stops at the first that stops it, which names why."""

    def __init__(self, *rules: StopRule) -> None:
        self.rules = rules
        self.needs_accuracy = any(rule.needs_accuracy for rule in rules)
        self.needs_loss = any(rule.needs_loss for rule in rules)
        self.reasons: list[str | None] = []

    def start(self) -> None:
        for rule in self.rules:
            rule.start()

    def due(self, steps: int) -> bool:
        return any(rule.due(steps) for rule in self.rules)

    def stops(self, reading: Reading) -> torch.Tensor | None:
        stopped: torch.Tensor | None = None
        self.reasons = [None] * len(reading.accuracy)
        for rule in self.rules:
            new = rule.stops(reading)
            if new is None:
                continue
            new = new if stopped is None else new & ~stopped
            for r in new.nonzero().flatten().tolist():
                self.reasons[r] = rule.reason
            stopped = new if stopped is None else stopped | new
        return stopped

    def reason_of(self, run: int) -> str:
        """Why run ``run`` stopped at the last :meth:`stops`."""
        return self.reasons[run] or "stopped"

"""Factual-recall capacity runs: one run is one capacity search of one memory at one d.

A spec::

    kind = "facts_capacity"
    [base]
    tau = 0.99
    trials = 2                    # draws averaged per accuracy
    [axes]
    seed = [0, 1, 2]              # independent searches
    dim = [16, 32]
    [zip]
    memory = ["closed_form", "linear", "mlp"]
    optimizer = ["none", "adam", "sgd"]

The science is :mod:`assocmem.studies.facts.capacity`; this kind builds a config from plain
TOML values, runs the search and reads the record back as a row (N*, the accuracy there, the
bits stored per parameter).

A search takes hours at d = 256 on a CPU, so the kind is journaled
(:mod:`assocmem.sweep.journal`): each evaluation (N, mean accuracy, best lr) is kept in the
run's journal as soon as it is made, and a search interrupted and run again re-uses them
instead of training again; its record is bit for bit that of an uninterrupted search.
"""

import math
from collections.abc import Iterator, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

from assocmem.config.checks import int_at_least
from assocmem.config.errors import ConfigError, unknown_name
from assocmem.sweep.kinds.base import Outcome, RunKind, as_float, base_row, config_columns

if TYPE_CHECKING:
    from assocmem.studies.facts.capacity import Evaluation

MEMORIES = ("closed_form", "linear", "mlp")  # as capacity.MEMORIES (a test checks)
OPTIMIZERS = ("sgd", "adam")  # trained memories (registry names); "none" for the closed form
# Learning rates tried together by default, per (memory, optimiser): where the trained memories
# reached τ fastest near N* at d = 16…64 (the MLP diverges under SGD at lr ≥ 30 for d ≤ 24).
DEFAULT_LRS = {
    ("linear", "sgd"): (100.0, 1000.0),
    ("linear", "adam"): (0.02, 0.1),
    ("mlp", "sgd"): (3.0, 10.0, 30.0),
    ("mlp", "adam"): (0.02, 0.1),
}


@dataclass(frozen=True)
class FactsCapacityConfig:
    """One capacity search: memory kind, optimiser, d, draws per accuracy, τ, seed."""

    memory: str = "closed_form"  # closed_form | linear | mlp
    optimizer: str = "adam"  # trained: sgd | adam (sign-like); the closed form's is "none"
    dim: int = 32
    trials: int = 2
    tau: float = 0.99
    seed: int = 0
    lrs: tuple[float, ...] = ()  # trained: learning rates tried together (default per optimiser)
    max_steps: int = 600  # trained: the step budget of one training run
    rel_tol: float = 0.03  # the relative precision of N*
    device: str = "cpu"


_DEFAULTS = {f.name: f.default for f in fields(FactsCapacityConfig)}


def _lrs(values: Any, memory: str, optimizer: str) -> tuple[float, ...]:
    if optimizer == "none":
        return ()
    if values in ((), None, []):
        return DEFAULT_LRS[(memory, optimizer)]
    ok = isinstance(values, list | tuple) and values
    if not ok or any(isinstance(v, bool) or not isinstance(v, int | float) for v in values):
        raise ConfigError("lrs", f"must be a non-empty list of numbers > 0, got {values!r}")
    if any(not (math.isfinite(v) and v > 0) for v in values):
        raise ConfigError("lrs", f"must be a non-empty list of numbers > 0, got {values!r}")
    return tuple(float(v) for v in values)


def build_facts_capacity(values: Mapping[str, Any]) -> FactsCapacityConfig:
    """A config from plain TOML values; :class:`ConfigError` names the first field at fault."""
    unknown = sorted(set(values) - set(_DEFAULTS))
    if unknown:
        raise unknown_name(unknown[0], "key", unknown[0], _DEFAULTS)
    merged = {**_DEFAULTS, **values}
    memory, optimizer = merged["memory"], merged["optimizer"]
    if memory not in MEMORIES:
        raise unknown_name("memory", "value", memory, MEMORIES)
    if memory == "closed_form":  # no optimiser: none enters a closed-form run's identity
        optimizer = "none"
    elif optimizer not in OPTIMIZERS:
        raise unknown_name("optimizer", "value", optimizer, OPTIMIZERS)
    tau = merged["tau"]
    if isinstance(tau, bool) or not isinstance(tau, int | float) or not 0 < tau < 1:
        raise ConfigError("tau", f"must be a number in (0, 1), got {tau!r}")
    rel_tol = merged["rel_tol"]
    if isinstance(rel_tol, bool) or not isinstance(rel_tol, int | float) or not 0 < rel_tol < 1:
        raise ConfigError("rel_tol", f"must be a number in (0, 1), got {rel_tol!r}")
    from assocmem.runtime import check_device  # torch: only once a spec is built

    check_device(merged["device"])
    return FactsCapacityConfig(
        memory=memory,
        optimizer=optimizer,
        dim=int_at_least("dim", merged["dim"], 2),
        trials=int_at_least("trials", merged["trials"], 1),
        tau=float(tau),
        seed=int_at_least("seed", merged["seed"], 0),
        lrs=_lrs(merged["lrs"], memory, optimizer),
        max_steps=int_at_least("max_steps", merged["max_steps"], 1) if optimizer != "none" else 600,
        rel_tol=float(rel_tol),
        device=merged["device"],
    )


def search(
    cfg: FactsCapacityConfig, journal: MutableMapping[str, Any] | None = None
) -> dict[str, Any]:
    """The search's metrics: N*, the accuracy there, the lr that reached it, the bits stored;
    its evaluations kept in (and re-used from) ``journal`` when given."""
    from assocmem.studies.facts.capacity import bits_per_parameter, search_capacity
    from assocmem.studies.facts.memories import TrainSettings

    model = "linear" if cfg.memory == "closed_form" else cfg.memory
    optimizer = "adam" if cfg.optimizer == "none" else cfg.optimizer
    settings = TrainSettings(model=model, optimizer=optimizer, max_steps=cfg.max_steps)
    point = search_capacity(
        cfg.memory,
        cfg.dim,
        trials=cfg.trials,
        seed=cfg.seed,
        tau=cfg.tau,
        settings=settings,
        lrs=cfg.lrs,
        rel_tol=cfg.rel_tol,
        device=cfg.device,
        memo=None if journal is None else EvaluationMemo(journal),
    )
    bits = bits_per_parameter(cfg.memory, cfg.dim, point.n_star, point.accuracy)
    evaluations = [[e.n_facts, e.accuracy] for e in point.evaluations]
    return {
        "n_star": point.n_star,
        "accuracy": point.accuracy,
        "lr": point.lr,
        "evaluations": evaluations,
        **bits,
    }


METRICS = (
    "n_star",
    "accuracy",
    "lr",
    "bits",
    "trained_parameters",
    "bits_per_parameter",
    "bits_per_parameter_with_embeddings",
)


class FactsCapacityKind(RunKind):
    """One capacity search per point; each its own batch."""

    name = "facts_capacity"
    journaled = True  # a search is hours long: its evaluations survive a kill

    def build(self, values: Mapping[str, Any]) -> FactsCapacityConfig:
        return build_facts_capacity(values)

    def execute(
        self,
        configs: Sequence[Any],
        trials: Sequence[int | None],
        journals: Sequence[MutableMapping[str, Any]] | None = None,
    ) -> list[Outcome]:
        """One search per config, each with its run's journal (none: nothing kept)."""
        kept = journals if journals is not None else [None] * len(configs)
        return [(search(cfg, journal), "ok") for cfg, journal in zip(configs, kept, strict=True)]

    def rows(self, row: Mapping[str, Any]) -> list[dict[str, Any]]:
        """One row: the config fields and :data:`METRICS` (NaN for a failed run), the bits
        derived from the record's N*, accuracy and d by
        :func:`~assocmem.studies.facts.capacity.bits_per_parameter` whatever the record holds
        (runs stored before the bits were corrected read with the corrected formula)."""
        from assocmem.studies.facts.capacity import bits_per_parameter

        common = {**base_row(row), **config_columns(row, ("lrs",))}
        metrics = row["metrics"] or {}
        values = {k: as_float(metrics.get(k)) for k in METRICS}
        if math.isfinite(values["n_star"]):
            config = row["config"]
            values |= bits_per_parameter(
                config["memory"], int(config["dim"]), values["n_star"], values["accuracy"]
            )
        return [{**common, **values}]

    def work(self, config: Any) -> float:
        """About 6 evaluations near N* (the theory's guess), each N²d per trial (closed form)
        or a few hundred steps of 3N²d per learning rate (trained)."""
        from assocmem.analysis.frontier import frontier_guess

        n = frontier_guess(config.dim, None)
        step = n * n * config.dim * config.trials
        trained = 1 if config.memory == "closed_form" else 900 * len(config.lrs)
        return float(6.0 * step * trained)


class EvaluationMemo(MutableMapping[int, "Evaluation"]):
    """A run's journal as the memo of a search
    (:func:`~assocmem.studies.facts.capacity.search_capacity`):
    N → :class:`~assocmem.studies.facts.capacity.Evaluation`, stored under ``"evaluation/N"``
    as ``[accuracy, lr]`` (JSON floats round-trip exactly; a non-finite accuracy, stored as
    null, comes back NaN)."""

    PREFIX = "evaluation/"

    def __init__(self, journal: MutableMapping[str, Any]) -> None:
        self.journal = journal

    def __getitem__(self, n: int) -> "Evaluation":
        from assocmem.studies.facts.capacity import Evaluation

        accuracy, lr = self.journal[f"{self.PREFIX}{n}"]
        return Evaluation(n, math.nan if accuracy is None else float(accuracy), lr)

    def __setitem__(self, n: int, evaluation: "Evaluation") -> None:
        self.journal[f"{self.PREFIX}{n}"] = [evaluation.accuracy, evaluation.lr]

    def __delitem__(self, n: int) -> None:
        del self.journal[f"{self.PREFIX}{n}"]

    def __iter__(self) -> Iterator[int]:
        prefix = self.PREFIX
        return (int(key[len(prefix) :]) for key in self.journal if key.startswith(prefix))

    def __len__(self) -> int:
        return sum(1 for _ in self)

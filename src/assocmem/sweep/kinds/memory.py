"""Runs of any registered memory (:data:`assocmem.training.memories.MEMORIES`) trained by the
one trainer: N inputs with Gaussian embeddings, f*(x) = x mod M, full batch, until every input
is stored (accuracy ≥ τ) or the step budget. A batch is one trainer call over runs that differ
only in seed and lr; each run's embeddings and initial tensors come from its own seed's streams,
so its numbers do not depend on its batch companions (up to float rounding)."""

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from assocmem.config.checks import int_at_least, positive_number
from assocmem.config.errors import ConfigError, unknown_name
from assocmem.runtime import check_device
from assocmem.sweep.identity import config_values
from assocmem.sweep.kinds.base import (
    Outcome,
    RunKind,
    as_float,
    base_row,
    config_columns,
    config_fields,
)

if TYPE_CHECKING:
    import torch

METRICS = ("accuracy", "steps")


@dataclass(frozen=True)
class MemoryRun:
    """One trained memory: its registry name, the problem (N, M, d), the optimiser (a registry
    name) and its rate, the step budget and the target accuracy τ, the seed and the device."""

    memory: str = "matrix"
    n_inputs: int = 32
    n_outputs: int = 8
    dim: int = 16
    optimizer: str = "adam"
    lr: float = 0.05
    max_steps: int = 200
    tau: float = 1.0
    seed: int = 0
    device: str = "cpu"

    def __post_init__(self) -> None:
        from assocmem.training.memories import MEMORIES
        from assocmem.training.optimizers import OPTIMIZERS

        if self.memory not in MEMORIES:
            raise unknown_name("memory", "value", self.memory, MEMORIES)
        if self.optimizer not in OPTIMIZERS:
            raise unknown_name("optimizer", "value", self.optimizer, OPTIMIZERS)
        for name in ("n_inputs", "n_outputs", "dim", "max_steps"):
            int_at_least(name, getattr(self, name), 1)
        int_at_least("seed", self.seed, 0)
        positive_number("lr", self.lr)
        if not 0 < self.tau <= 1:
            raise ConfigError("tau", f"must be in (0, 1], got {self.tau!r}")
        check_device(self.device)


class MemoryKind(RunKind):
    """One run per point (its seed is a field of the point)."""

    name = "memory"
    default_runs_per_batch = 64

    def build(self, values: Mapping[str, Any]) -> MemoryRun:
        return MemoryRun(**config_fields(MemoryRun, values))

    def group_key(self, config: Any) -> Hashable:
        """Every field but seed and lr: the runs of one trainer call."""
        values = config_values(config)
        return tuple(v for k, v in values.items() if k not in ("seed", "lr"))

    def execute(self, configs: Sequence[Any], trials: Sequence[int | None]) -> list[Outcome]:
        """One trainer call (torch imported here: planning a sweep loads no torch)."""
        import torch

        from assocmem import rng
        from assocmem.training.memories import MEMORIES
        from assocmem.training.optimizers import OPTIMIZERS
        from assocmem.training.stop import AnyOf, PerRun, Steps, TargetAccuracy
        from assocmem.training.trainer import FullBatch, train

        first: MemoryRun = configs[0]
        memory = MEMORIES[first.memory]()
        draws = [_draw(config) for config in configs]
        fixed = {name: torch.cat([d[name] for d in draws]) for name in ("E", "U")}
        init = {
            name: torch.cat(
                [
                    memory.init(d, rng.generator(c.seed, "memory/init"))[name]
                    for c, d in zip(configs, draws, strict=True)
                ]
            )
            for name in memory.learned
        }
        device = first.device
        fixed = {k: v.to(device) for k, v in fixed.items()}
        init = {k: v.to(device) for k, v in init.items()}
        targets = torch.arange(first.n_inputs, device=device) % first.n_outputs
        lr = torch.tensor([c.lr for c in configs], dtype=torch.float32, device=device)
        rule = AnyOf(TargetAccuracy(first.tau, PerRun()), Steps(first.max_steps))
        result = train(memory, FullBatch(targets), fixed=fixed, init=init,
                       optimizer=OPTIMIZERS[first.optimizer](), lr=lr, stop=rule)  # fmt: skip
        finite = torch.stack([v.isfinite().flatten(1).all(1) for v in result.state.values()])
        out: list[Outcome] = []
        for r in range(len(configs)):
            metrics = {"accuracy": float(result.accuracy[r]), "steps": int(result.run_steps[r])}
            out.append((metrics, "ok" if bool(finite[:, r].all()) else "diverged"))
        return out

    def rows(self, row: Mapping[str, Any]) -> list[dict[str, Any]]:
        """One row: the config fields, then the accuracy and the steps taken."""
        metrics = row["metrics"] or {}
        values = {name: as_float(metrics.get(name)) for name in METRICS}
        return [{**base_row(row), **config_columns(row), **values}]

    def work(self, config: Any) -> float:
        return float(config.max_steps * 6 * config.n_inputs * config.n_outputs * config.dim)


def _draw(config: MemoryRun) -> dict[str, "torch.Tensor"]:
    """One run's Gaussian embeddings E (1, N, d) and U (1, M, d), entries N(0, 1/d)."""
    import torch

    from assocmem import rng

    gen = rng.generator(config.seed, "memory/embeddings", config.n_inputs, config.dim)
    scale = config.dim**-0.5
    E = torch.randn(1, config.n_inputs, config.dim, generator=gen) * scale
    U = torch.randn(1, config.n_outputs, config.dim, generator=gen) * scale
    return {"E": E, "U": U}

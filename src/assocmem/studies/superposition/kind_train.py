"""Parallel memories trained jointly (docs: beyond/superposition.md): the
``superposition_train`` run kind. A run is H heads trained on summed logits
(:mod:`assocmem.studies.superposition.train`); runs that differ only in seed and lr share a batch.
"""

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any, ClassVar

from assocmem.config.checks import int_at_least, positive_number
from assocmem.config.errors import ConfigError
from assocmem.config.memory import DEFAULT_MEMORY_GB, check_budget, check_memory_gb
from assocmem.config.problem import problem_field
from assocmem.studies.superposition.kind import BUDGETS, common_fields, merged_values, one_of
from assocmem.sweep.kinds.base import Outcome, RunKind, as_float, base_row, config_columns


@dataclass(frozen=True)
class HeadsTrainConfig:
    """One trained run: H heads of d_h (from the budget and d), trained jointly."""

    n_inputs: int = problem_field("n_inputs")
    n_outputs: int = problem_field("n_outputs")
    alpha: float = problem_field("alpha")
    heads: int = 1  # H
    budget: str = "width"
    dim: int = 256  # d of the single memory compared with
    n_samples: int = 102400  # T
    batch_size: int = 256  # B
    optimizer: str = "adam"  # sgd | adam (sign-like: Adam(β = (0, 0)), lr / d_h)
    lr: float = 1.0
    seed: int = 0
    device: str = "cpu"
    memory_gb: float = DEFAULT_MEMORY_GB


BATCH_BYTES = 512 * 2**20  # the state of the runs trained together (as the training engine's)


def run_bytes(cfg: HeadsTrainConfig) -> int:
    """About the bytes one trained run holds (float32): E, U, W and its gradient, the batch's
    embedding rows and the final scores of every head."""
    from assocmem.studies.superposition.theory import budget_head_dim

    d_h = budget_head_dim(cfg.dim, cfg.heads, cfg.budget, cfg.n_inputs, cfg.n_outputs)
    rows = cfg.n_inputs + cfg.n_outputs
    floats = cfg.heads * (rows * d_h + 3 * d_h * d_h + cfg.batch_size * d_h + cfg.n_inputs * 8)
    return 4 * floats


def build_heads_train(values: Mapping[str, Any]) -> HeadsTrainConfig:
    """A trained-heads run from plain TOML values.

    Raises
    ------
    ConfigError
        Naming the first field at fault.
    """
    from assocmem.studies.superposition.train import HEAD_OPTIMIZERS

    merged = merged_values(HeadsTrainConfig, values)
    cfg = HeadsTrainConfig(
        **common_fields(merged),
        heads=int_at_least("heads", merged["heads"], 1),
        budget=one_of("budget", merged["budget"], BUDGETS),
        dim=int_at_least("dim", merged["dim"], 1),
        n_samples=int_at_least("n_samples", merged["n_samples"], 1),
        batch_size=int_at_least("batch_size", merged["batch_size"], 1),
        optimizer=one_of("optimizer", merged["optimizer"], HEAD_OPTIMIZERS),
        lr=positive_number("lr", merged["lr"]),
        memory_gb=check_memory_gb(merged["memory_gb"]),
    )
    if cfg.batch_size > cfg.n_samples:
        raise ConfigError("batch_size", f"must be ≤ n_samples = {cfg.n_samples}")
    check_budget(run_bytes(cfg), cfg.memory_gb, "one trained run of this point", "lower dim")
    return cfg


class HeadsTrainKind(RunKind):
    """One trained run per point (its seed a field of the point); a batch is the runs that
    differ only in seed and lr, trained as one tensor program."""

    name = "superposition_train"
    operational: ClassVar[tuple[str, ...]] = ("device", "memory_gb")
    default_runs_per_batch = 64

    def build(self, values: Mapping[str, Any]) -> HeadsTrainConfig:
        return build_heads_train(values)

    def device(self, config: Any) -> str:
        return "cpu"  # trained on the CPU whatever the sweep's device (see _common)

    def group_key(self, config: Any) -> Hashable:
        return tuple(
            getattr(config, f.name) for f in fields(config) if f.name not in ("seed", "lr")
        )

    def batch_limit(self, config: Any, runs_per_batch: int | None) -> int:
        """At most ``runs_per_batch`` (default 64), and what fits :data:`BATCH_BYTES`."""
        fits = max(1, BATCH_BYTES // run_bytes(config))
        return min(runs_per_batch or self.default_runs_per_batch, fits)

    def execute(self, configs: Sequence[Any], trials: Sequence[int | None]) -> list[Outcome]:
        """One ``train_heads`` call; metrics: the errors and the participation ratio of the
        per-head margins (and of its two closed-form references) averaged per rank bin."""
        from assocmem.studies.superposition.theory import budget_head_dim
        from assocmem.studies.superposition.train import (
            HeadsTraining,
            binned,
            rank_bins,
            train_heads,
        )

        cfg = configs[0]
        setting = HeadsTraining(
            n_inputs=cfg.n_inputs,
            n_outputs=cfg.n_outputs,
            alpha=cfg.alpha,
            heads=cfg.heads,
            head_dim=budget_head_dim(cfg.dim, cfg.heads, cfg.budget, cfg.n_inputs, cfg.n_outputs),
            n_samples=cfg.n_samples,
            batch_size=cfg.batch_size,
            optimizer=cfg.optimizer,
        )
        results = train_heads(setting, [c.seed for c in configs], [c.lr for c in configs])
        bins = rank_bins(cfg.n_inputs)
        out: list[Outcome] = []
        for result in results:
            metrics = {
                "head_dim": setting.head_dim,
                "error": result.error,
                "head_error": result.head_error,
                "bins": [list(b) for b in bins],
                "participation": binned(result.participation, bins),
                "superposed": binned(result.superposed, bins),
                "routed": binned(result.routed, bins),
            }
            out.append((metrics, "ok" if result.finite else "diverged"))
        return out

    def rows(self, row: Mapping[str, Any]) -> list[dict[str, Any]]:
        """One row per run: the config, ``head_dim``, ``error``, ``head_error``, ``tail_error``,
        and per rank bin (tuples) ``bin_low``, ``participation``, ``superposed``, ``routed``."""
        metrics = row["metrics"] or {}
        error, head = as_float(metrics.get("error")), as_float(metrics.get("head_error"))
        per_bin = {
            "bin_low": tuple(low for low, _ in metrics.get("bins", [])),
            **{k: tuple(as_float(v) for v in metrics.get(k, [])) for k in
               ("participation", "superposed", "routed")},
        }  # fmt: skip
        scores = {"error": error, "head_error": head, "tail_error": error - head}
        return [{**base_row(row), **config_columns(row), "head_dim": metrics.get("head_dim"),
                 **scores, **per_bin}]  # fmt: skip

    def work(self, config: Any) -> float:
        r"""About :math:`T/B` steps of :math:`4\cdot H\cdot d_h\cdot M\cdot (d_h + B)`
        multiply-adds."""
        from assocmem.studies.superposition.theory import budget_head_dim

        d_h = budget_head_dim(
            config.dim, config.heads, config.budget, config.n_inputs, config.n_outputs
        )
        steps = config.n_samples // config.batch_size
        return float(steps * 4 * config.heads * d_h * config.n_outputs * (d_h + config.batch_size))

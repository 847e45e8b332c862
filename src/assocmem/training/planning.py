"""Planning a set of training runs: which run together (one group per batch key, cut to a
memory budget), and rough sizes and costs. Reads configs only: nothing is compiled or drawn."""

from collections.abc import Sequence
from typing import Any

from assocmem.training.config import TrainConfig
from assocmem.training.kernels import select_kernel

MEMORY_BUDGET = 2**29  # bytes of per-run state a chunk of runs may hold (512 MiB)


def state_bytes(cfg: TrainConfig) -> int:
    """Rough bytes one run of this config holds while training (for chunking): the
    embeddings and tables every kernel holds, the selected kernel's own state and the
    samples (int64 tokens, and labels under label noise)."""
    d, n, m = cfg.dim, cfg.n_inputs, cfg.n_outputs
    per_run = n * n + n * d + m * d + 4 * n * m + select_kernel(cfg).state_elements(cfg)
    if not cfg.full_batch:
        per_run += 2 * cfg.n_samples * (2 if cfg.label_noise else 1)
    return 4 * per_run


def group_runs(
    configs: Sequence[TrainConfig], *, budget: int = MEMORY_BUDGET, max_runs: int | None = None
) -> list[list[int]]:
    """Indices of ``configs`` grouped by :meth:`TrainConfig.batch_key` (groups in order of
    first appearance, runs in their order), each group cut into chunks that fit ``budget``
    bytes and hold at most ``max_runs`` runs. A chunk is one tensor program."""
    groups: dict[tuple[Any, ...], list[int]] = {}
    for index, cfg in enumerate(configs):
        groups.setdefault(cfg.batch_key(), []).append(index)
    chunks = []
    for indices in groups.values():
        size = runs_per_chunk(configs[indices[0]], budget=budget, max_runs=max_runs)
        chunks += [indices[i : i + size] for i in range(0, len(indices), size)]
    return chunks


def runs_per_chunk(
    cfg: TrainConfig, *, budget: int = MEMORY_BUDGET, max_runs: int | None = None
) -> int:
    """How many runs of this config's group one tensor program holds: what fits ``budget``
    bytes, and at most ``max_runs``."""
    size = max(1, budget // state_bytes(cfg))
    return size if max_runs is None else min(size, max_runs)


def work_estimate(cfg: TrainConfig) -> float:
    """A rough count of multiply-adds of one run (for estimates only)."""
    n, d = cfg.n_inputs, cfg.dim
    return float(cfg.steps * select_kernel(cfg).step_work(cfg) + n * d * d)

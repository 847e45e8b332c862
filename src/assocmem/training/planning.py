"""Planning a set of training runs: which run together (one group per batch key, cut to a
memory budget; on the batched path, runs of different d zero-padded into one program where that
is exact: :mod:`~assocmem.training.padding`), and rough sizes and costs. Reads configs only:
nothing is compiled or drawn."""

import functools
from collections.abc import Hashable, Sequence

import torch

from assocmem.config.errors import ConfigError
from assocmem.training.config import TrainConfig
from assocmem.training.kernels import select_kernel
from assocmem.training.padding import padding_key

PAD_WASTE = 2.0  # a zero-padded program holds at most this many times its runs' own state and work
MEMORY_BUDGET = 2**29  # bytes of per-run state a chunk of runs may hold on the CPU (512 MiB)
# On CUDA, by the card's total memory (GiB, at least → bytes a program may hold): a fixed table,
# so that the same spec on the same kind of card groups its runs the same way (an 80 GB H100
# holds 79.1 GiB, an H200 139.8 GiB). A quarter of the card: the allocator's cache and the
# evaluation's float64 tables fit beside it.
CUDA_BUDGETS = ((120, 2**35), (70, 2**34), (30, 2**33), (14, 2**32), (0, 2**30))


def memory_budget(device: str) -> int:
    """Bytes of per-run state one tensor program holds on ``device``: :data:`MEMORY_BUDGET` on
    the CPU, the :data:`CUDA_BUDGETS` row of the card's total memory on CUDA."""
    dev = torch.device(device)
    if dev.type != "cuda":
        return MEMORY_BUDGET
    return _cuda_budget(torch.cuda.current_device() if dev.index is None else dev.index)


@functools.cache
def _cuda_budget(index: int) -> int:
    """:func:`memory_budget` of CUDA card ``index`` (asked once: planning asks per batch)."""
    total_gib = torch.cuda.get_device_properties(index).total_memory / 2**30
    return next(budget for floor, budget in CUDA_BUDGETS if total_gib >= floor)


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
    configs: Sequence[TrainConfig],
    *,
    budget: int | None = None,
    max_runs: int | None = None,
    pad: bool = True,
) -> list[list[int]]:
    """Indices of ``configs`` grouped by :meth:`TrainConfig.batch_key` (groups in order of
    first appearance, runs in their order), each group cut into chunks that fit ``budget``
    bytes (default :func:`memory_budget` of the device) and hold at most ``max_runs`` runs. A
    chunk is one tensor program.

    On the batched path (CUDA's) and with ``pad``, runs that differ only in d (and seed, lr)
    form one group where zero-padding is exact (:func:`~assocmem.training.padding.padding_key`),
    cut by :func:`padded_chunks`: largest d first, each chunk padded to its largest d."""
    groups: dict[Hashable, list[int]] = {}
    for index, cfg in enumerate(configs):
        key = padding_key(cfg) if pad else None
        groups.setdefault(("batch", cfg.batch_key()) if key is None else key, []).append(index)
    chunks = []
    for indices in groups.values():
        if len({configs[i].dim for i in indices}) > 1:
            chunks += padded_chunks(configs, indices, budget=budget, max_runs=max_runs)
            continue
        size = runs_per_chunk(configs[indices[0]], budget=budget, max_runs=max_runs)
        chunks += [indices[i : i + size] for i in range(0, len(indices), size)]
    return chunks


def padded_chunks(
    configs: Sequence[TrainConfig],
    indices: Sequence[int],
    *,
    budget: int | None = None,
    max_runs: int | None = None,
) -> list[list[int]]:
    """Runs of different d cut into zero-padded programs: runs in order of decreasing d (ties in
    their order), each chunk padded to its first run's d, sized by that d's state (so a chunk
    fits ``budget`` and a run too large for its card is refused, as unpadded), and closed before
    its padded state or work would exceed :data:`PAD_WASTE` times its runs' own."""
    order = sorted(indices, key=lambda i: -configs[i].dim)
    chunks = []
    while order:
        top = configs[order[0]]
        size = runs_per_chunk(top, budget=budget, max_runs=max_runs)
        padded_bytes, padded_work = state_bytes(top), work_estimate(top)  # a run, padded
        own_bytes, own_work = 0, 0.0  # the chunk's runs' own
        chunk: list[int] = []
        for index in order[:size]:
            own_bytes += state_bytes(configs[index])
            own_work += work_estimate(configs[index])
            runs = len(chunk) + 1
            if (
                runs * padded_bytes > PAD_WASTE * own_bytes
                or runs * padded_work > PAD_WASTE * own_work
            ):
                break  # a smaller d only wastes more
            chunk.append(index)
        chunks.append(chunk)
        order = order[len(chunk) :]
    return chunks


def runs_per_chunk(
    cfg: TrainConfig, *, budget: int | None = None, max_runs: int | None = None
) -> int:
    """How many runs of this config's group one tensor program holds: what fits ``budget``
    bytes (default :func:`memory_budget` of its device), and at most ``max_runs``. A CUDA run
    whose state alone exceeds its card's program is refused up front."""
    need, card = state_bytes(cfg), memory_budget(cfg.device)
    if torch.device(cfg.device).type == "cuda" and need > card:
        raise ConfigError(
            "dim", f"one run needs about {need / 2**30:.1f} GiB, over this card's "
            f"{card / 2**30:.0f} GiB program",
        )  # fmt: skip
    size = max(1, (card if budget is None else budget) // need)
    return size if max_runs is None else min(size, max_runs)


def work_estimate(cfg: TrainConfig) -> float:
    """A rough count of multiply-adds of one run (for estimates only)."""
    n, d = cfg.n_inputs, cfg.dim
    return float(cfg.steps * select_kernel(cfg).step_work(cfg) + n * d * d)

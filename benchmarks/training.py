"""Benchmark: the batched training engine against one nn.Module + torch.optim per run.

The slice of the paper grid from issue 4: matrix model, SGD and Adam(β = 0), lr ∈ {0.1, 1, 10,
100}, 10 seeds, d ∈ {10, 100, 1000}, T = 10240, B ∈ {16, 1024} (480 runs). For each (optimiser,
d, B) cell the engine trains its 40 runs and the reference, right after, trains
``--reference-per-cell`` of them one at a time (its cost does not depend on lr or seed),
extrapolated to the 40 runs unless ``--reference-per-cell 40``.

The whole 40,320-run grid is timed by ``benchmarks/sweep_grid.py`` (a calibration of every
batch shape, checked against a real run of the grid).

Times are CPU seconds of this process (``time.process_time``), so other jobs on a shared
machine slow both sides less than wall-clock time would; run with ``--threads 1`` for the cost
on one core. ``--threads 2 --clock wall`` measures what the two cores of a machine give each
side instead (the engine splits a group's runs over threads; the reference is one run at a
time with torch's threads), on an otherwise idle machine.

    .venv/bin/python benchmarks/training.py [--threads 1] [--clock cpu|wall]
"""

import argparse
import time

import torch

from assocmem.training import TrainConfig, native_library, train
from assocmem.training.reference import reference_train

CLOCKS = {"cpu": time.process_time, "wall": time.perf_counter}
clock = time.process_time  # set by --clock
LRS = (0.1, 1.0, 10.0, 100.0)
SEEDS = range(10)


def slice_configs(dims: tuple[int, ...], batches: tuple[int, ...]) -> list[TrainConfig]:
    return [
        TrainConfig(dim=d, batch_size=b, n_samples=10240, optimizer=opt, lr=lr, seed=seed)
        for opt in ("sgd", "adam")
        for d in dims
        for b in batches
        for lr in LRS
        for seed in SEEDS
    ]


def time_slice(configs: list[TrainConfig], per_cell: int) -> tuple[float, float, int]:
    """(engine seconds, extrapolated reference seconds, timed reference runs), cell by cell.

    Each cell (same optimiser, d, B: 40 runs) is timed with the engine and then with the
    reference right after, so both see the same machine load.
    """
    cells: dict[tuple[object, ...], list[TrainConfig]] = {}
    for cfg in configs:
        cells.setdefault(cfg.batch_key(), []).append(cfg)
    engine_total, reference_total, timed = 0.0, 0.0, 0
    for runs in cells.values():
        start = clock()
        train(runs)
        engine = clock() - start
        # Spread the timed reference runs over the cell's learning rates and seeds.
        chosen = runs[:: max(1, len(runs) // per_cell)][:per_cell]
        start = clock()
        for cfg in chosen:
            reference_train(cfg)
        reference = (clock() - start) * len(runs) / len(chosen)
        engine_total += engine
        reference_total += reference
        timed += len(chosen)
        print(
            f"  {runs[0].optimizer.name:5s} d={runs[0].dim:5d} B={runs[0].batch_size:5d}: "
            f"engine {engine:7.2f} s, reference {reference:8.2f} s for {len(runs)} runs "
            f"({reference / engine:6.1f}x)",
            flush=True,
        )
    return engine_total, reference_total, timed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: default)")
    parser.add_argument("--reference-per-cell", type=int, default=1)
    parser.add_argument("--dims", type=int, nargs="+", default=[10, 100, 1000])
    parser.add_argument("--batches", type=int, nargs="+", default=[16, 1024])
    parser.add_argument("--clock", choices=sorted(CLOCKS), default="cpu")
    args = parser.parse_args()
    global clock
    clock = CLOCKS[args.clock]
    if args.threads:
        torch.set_num_threads(args.threads)
    compiled = native_library.load() is not None  # compiles the kernels once, outside the timings
    print(
        f"torch {torch.__version__}, {torch.get_num_threads()} threads, compiled: {compiled}, "
        f"{args.clock} clock"
    )
    configs = slice_configs(tuple(args.dims), tuple(args.batches))
    train(configs[:2])  # warm-up: first-call costs belong to neither side
    reference_train(configs[0].with_(n_samples=16 * configs[0].batch_size))
    engine_time, ref_time, timed = time_slice(configs, args.reference_per_cell)
    n = len(configs)
    print(f"engine:    {n} runs in {engine_time:.1f} s = {n / engine_time:.2f} runs/s")
    print(
        f"reference: {n} runs in {ref_time:.1f} s (extrapolated from {timed} timed runs) "
        f"= {n / ref_time:.3f} runs/s"
    )
    print(f"speed-up:  {ref_time / engine_time:.1f}x")


if __name__ == "__main__":
    main()

"""How long the authors' training grid (40,320 runs) takes with the sweep's local executor.

1. Calibrate: for every batch shape of the plan (model, layer norm, optimiser, d, B; its 40 runs
   = 10 seeds × 4 lr), time :func:`execute_batch` on the same runs cut to ``s₁`` and ``s₂`` steps;
   per-step time = Δt / (s₂ − s₁), setup = t(s₁) − s₁ · per-step. Every batch of the plan is
   then predicted as setup + (T / B) · per-step (a step costs the same whatever T is).
2. Validate: the plan's batches that ``--validate-db`` holds (from a real
   ``assocmem sweep run paper_training_grid --shard K/N``) are compared with their prediction.

    .venv/bin/python benchmarks/sweep_grid.py [--validate-db grid-shard.db] [--json out.json]
"""

import argparse
import ast
import json
import os
import random
import re
import sqlite3
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import torch

from assocmem.sweep.execute import execute_batch
from assocmem.sweep.plan import Batch, Run, make_plan
from assocmem.sweep.spec import load_spec
from assocmem.sweep.store import Store
from assocmem.training.config import TrainConfig


def shape_key(cfg: TrainConfig) -> tuple[Any, ...]:
    return (cfg.model, cfg.layer_norm, cfg.optimizer, cfg.dim, cfg.batch_size)


def cut(batch: Batch, steps: int) -> Batch:
    runs = []
    for run in batch.runs:
        assert isinstance(run.config, TrainConfig)
        short = run.config.with_(n_samples=steps * run.config.batch_size)
        runs.append(Run.make("train", short))
    return Batch(index=batch.index, kind="train", runs=tuple(runs))


def timed(batch: Batch) -> float:
    start = time.perf_counter()
    execute_batch(batch, "calibration")
    return time.perf_counter() - start


Shape = tuple[Any, ...]
Timing = tuple[float, float, int]  # setup seconds, seconds per step, runs of the timed batch


def calibrate(batches: list[Batch], s1: int, s2: int) -> dict[Shape, Timing]:
    """Time the first batch of each shape at s1 and s2 steps."""
    model: dict[Shape, Timing] = {}
    for batch in batches:
        cfg = batch.runs[0].config
        assert isinstance(cfg, TrainConfig)
        key = shape_key(cfg)
        if key in model:
            continue
        t1, t2 = timed(cut(batch, s1)), timed(cut(batch, s2))
        per_step = max((t2 - t1) / (s2 - s1), 0.0)
        model[key] = (max(t1 - s1 * per_step, 0.0), per_step, len(batch.runs))
        print(f"  {key}: setup {model[key][0]:.3f} s, {1e3 * per_step:.2f} ms/step", flush=True)
    return model


def predict(batch: Batch, model: dict[Shape, Timing]) -> float:
    cfg = batch.runs[0].config
    assert isinstance(cfg, TrainConfig)
    setup, per_step, runs = model[shape_key(cfg)]
    return (setup + cfg.steps * per_step) * len(batch.runs) / runs  # split batches: pro rata


def validate(db: str, plan_batches: list[Batch], model: dict[Shape, Timing]) -> dict[str, Any]:
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT hash, provenance FROM runs").fetchall()
    walls = {key: json.loads(prov)["wall_seconds"] for key, prov in rows}
    measured = predicted = 0.0
    n_batches = n_runs = 0
    for batch in plan_batches:
        if all(run.key in walls for run in batch.runs):
            measured += sum(walls[run.key] for run in batch.runs)
            predicted += predict(batch, model)
            n_batches += 1
            n_runs += len(batch.runs)
    return {"batches": n_batches, "runs": n_runs, "measured_s": measured, "predicted_s": predicted}


def from_log(path: str, batches: list[Batch]) -> dict[Shape, Timing]:
    """A calibration from the lines this script printed (to re-use a long calibration); the
    timed batch of a shape is its first batch in the plan, as in :func:`calibrate`."""
    runs: dict[Shape, int] = {}
    for batch in batches:
        assert isinstance(batch.runs[0].config, TrainConfig)
        runs.setdefault(shape_key(batch.runs[0].config), len(batch.runs))
    model: dict[Shape, Timing] = {}
    for line in Path(path).read_text().splitlines():
        match = re.match(r"\s+(\(.*\)): setup ([\d.]+) s, ([\d.]+) ms/step", line)
        if match:
            key = ast.literal_eval(match[1])
            model[key] = (float(match[2]), float(match[3]) / 1e3, runs[key])
    return model


def run_fraction(
    batches: list[Batch], model: dict[Shape, Timing], count: int, limit: float, db: str
) -> dict[str, Any]:
    """Run ``count`` random batches predicted under ``limit`` seconds with the local executor's
    path (compute, then one transaction each); compare their wall time with the prediction."""
    cheap = [b for b in batches if predict(b, model) <= limit]
    chosen = sorted(random.Random(0).sample(cheap, min(count, len(cheap))), key=lambda b: b.index)
    measured = predicted = 0.0
    with Store(db) as store:
        for batch in chosen:
            start = time.perf_counter()
            store.write(execute_batch(batch, "paper_training_grid"))
            wall = time.perf_counter() - start
            guess = predict(batch, model)
            measured, predicted = measured + wall, predicted + guess
            cfg = batch.runs[0].config
            assert isinstance(cfg, TrainConfig)
            print(f"  batch {batch.index} {shape_key(cfg)} T={cfg.n_samples}: "
                  f"{wall:.2f} s (predicted {guess:.2f} s)", flush=True)  # fmt: skip
    runs = sum(len(b.runs) for b in chosen)
    return {"batches": len(chosen), "runs": runs, "measured_s": round(measured, 1),
            "predicted_s": round(predicted, 1), "eligible_batches": len(cheap)}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, nargs=2, default=(2, 6), metavar=("S1", "S2"))
    parser.add_argument("--from-log", help="re-use the calibration printed in this log")
    parser.add_argument("--validate-db", help="a database of a real shard of the grid")
    parser.add_argument("--run-fraction", type=int, default=0, help="run this many batches")
    parser.add_argument("--max-batch-seconds", type=float, default=60.0)
    parser.add_argument("--fraction-db", default="grid-fraction.db")
    parser.add_argument("--json", help="write the estimate to this file")
    parser.add_argument(
        "--threads",
        type=int,
        help="torch threads of this process (1: the cost on one core, as each of the "
        "--executor dask --workers 2 processes runs)",
    )
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    plan = make_plan(load_spec("paper_training_grid"))
    print(f"{len(plan.runs)} runs, {len(plan.batches)} batches; torch threads "
          f"{torch.get_num_threads()}, load {os.getloadavg()[0]:.1f}", flush=True)  # fmt: skip
    start = time.perf_counter()
    model = (
        from_log(args.from_log, plan.batches)
        if args.from_log
        else calibrate(plan.batches, *args.steps)
    )
    calibration = time.perf_counter() - start
    known = [b for b in plan.batches if shape_key(b.runs[0].config) in model]
    per_batch = [predict(b, model) for b in known]
    by_model: dict[str, float] = defaultdict(float)
    for batch, seconds in zip(known, per_batch, strict=True):
        assert isinstance(batch.runs[0].config, TrainConfig)
        by_model[batch.runs[0].config.model] += seconds
    report: dict[str, Any] = {
        "runs": len(plan.runs),
        "batches": len(plan.batches),
        "shapes_calibrated": len(model),
        "batches_predicted": len(known),
        "calibration_s": round(calibration, 1),
        "predicted_total_s": round(sum(per_batch), 1),
        "predicted_total_h": round(sum(per_batch) / 3600, 2),
        "by_model_h": {k: round(v / 3600, 2) for k, v in by_model.items()},
        "load_average": os.getloadavg(),
        "torch_threads": torch.get_num_threads(),
    }
    if args.validate_db:
        report["validation"] = validate(args.validate_db, known, model)
    if args.run_fraction:
        report["fraction"] = run_fraction(
            known, model, args.run_fraction, args.max_batch_seconds, args.fraction_db
        )
    print(json.dumps(report, indent=2))
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(report, handle, indent=2)


if __name__ == "__main__":
    main()

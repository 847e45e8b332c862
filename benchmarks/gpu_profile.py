"""Where the GPU's time goes: cProfile of the three GPU figures of benchmarks/gpu.sh, each run once
on DEVICE, with the top functions by own time and by cumulative time, and the seconds by sweep
of `reproduce --full` (from the records).

    python benchmarks/gpu_profile.py [DEVICE] [--only full|grid|cf] [--top K]

On the CPU, `--batched` forces CUDA's batched path (runtime.batched_path) so the profile shows the
work a GPU would launch. Prints only; writes nothing outside a temporary folder.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import pstats
import signal
import sqlite3
import tempfile
import time
from collections.abc import Callable
from contextlib import nullcontext, redirect_stdout
from pathlib import Path

from assocmem.cli import main
from assocmem.runtime import batched_path
from assocmem.sweep.spec import resolve_spec_path


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def profiled(name: str, call: Callable[[], object], top: int, limit: int = 0) -> None:
    """Run ``call`` under cProfile (interrupted after ``limit`` seconds where > 0: the sweeps
    resume); print its wall time and its top functions."""
    profile = cProfile.Profile()
    signal.signal(signal.SIGALRM, _interrupt)
    signal.alarm(limit)
    start = time.perf_counter()
    try:
        with redirect_stdout(io.StringIO()):
            profile.runcall(call)
    except KeyboardInterrupt:
        name += f" (interrupted after {limit} s)"
    signal.alarm(0)
    seconds = time.perf_counter() - start
    print(f"\n=== {name}: {seconds:.1f} s ===", flush=True)
    for key in ("tottime", "cumulative"):
        out = io.StringIO()
        stats = pstats.Stats(profile, stream=out).strip_dirs().sort_stats(key)
        stats.print_stats(top)
        lines = out.getvalue().splitlines()
        head = next(i for i, line in enumerate(lines) if "ncalls" in line)
        print(f"--- by {key}")
        print("\n".join(line[:150] for line in lines[head : head + top + 1]), flush=True)


def by_sweep(db: Path) -> None:
    """Seconds by sweep, from the records' provenance."""
    rows = sqlite3.connect(db).execute("SELECT sweep, provenance FROM runs").fetchall()
    totals: dict[str, list[float]] = {}
    for sweep, prov in rows:
        entry = totals.setdefault(sweep, [0.0, 0])
        entry[0] += float(json.loads(prov).get("wall_seconds") or 0)
        entry[1] += 1
    for sweep, (secs, n) in sorted(totals.items(), key=lambda kv: -kv[1][0])[:14]:
        print(f"  {sweep:32s} {secs:8.2f} s  {n:6d} records")


def main_() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("device", nargs="?", default="cuda")
    parser.add_argument("--only", choices=("full", "grid", "cf", "wholegrid"), nargs="*")
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--batched", action="store_true")
    parser.add_argument("--limit", type=int, default=0, help="seconds for the whole grid")
    args = parser.parse_args()
    only = set(args.only or ("full", "grid", "cf"))
    work = Path(tempfile.mkdtemp())
    context = batched_path() if args.batched else nullcontext()
    import matplotlib.pyplot  # noqa: F401 - the font cache, outside the timings

    with context:
        if "full" in only:
            out = work / "full"
            argv = ["reproduce", "--full", "--device", args.device, "--out", str(out), "--quiet"]
            profiled("reproduce --full", lambda: main(argv), args.top)
            by_sweep(out / "runs.db")
        if "cf" in only:
            argv = ["closed-form", "-N", "1000000", "--schemes", "population", "threshold:P=d/8"]
            argv += ["--dims", "64", "256", "1024", "4096", "16384", "--n-samples", "inf"]
            argv += ["--sampler", "in_law", "--trials", "3", "--memory-gb", "8", "--quiet"]
            argv += ["--device", args.device, "--format", "json"]
            profiled("closed form N=1e6 in law, 3 trials", lambda: main(argv), args.top)
        spec = Path(resolve_spec_path("paper_training_grid")).read_text()
        toml = work / "grid.toml"
        toml.write_text(
            spec.replace("\nalpha = 2.0\n", f'\nalpha = 2.0\ndevice = "{args.device}"\n')
        )
        if "grid" in only:
            argv = ["sweep", "run", str(toml), "--db", str(work / "grid.db"), "--shard", "7/48"]
            profiled("grid shard 7/48", lambda: main([*argv, "--quiet"]), args.top)
        if "wholegrid" in only:
            db = work / "whole.db"
            argv = ["sweep", "run", str(toml), "--db", str(db), "--quiet"]
            profiled("the whole grid", lambda: main(argv), args.top, args.limit)
            done = sqlite3.connect(db).execute("SELECT COUNT(*) FROM runs").fetchone()[0]
            print(f"  {done} of 40320 runs stored")


if __name__ == "__main__":
    main_()

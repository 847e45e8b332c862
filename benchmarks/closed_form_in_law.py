"""The exact-in-law sampler against explicit embeddings, measured in the same run.

Per case: seconds per trial of each sampler and their ratio, beside the cost model's numbers
drawn and flops per trial (:mod:`assocmem.closed_form.cost`) and their ratios. Cases:

- fig1: the Figure 1 grid (empirical threshold P = d/12, T ∈ 10…10⁴), 100 trials in 5
  alternating rounds: in_law/explicit;
- fig4: the Figure 4 grid (q = 1, p, 1{x ≤ d/8}), the same: auto (what it resolves to)/explicit;
- n1e5: N = 10⁵, d ∈ log:64:4096:7, q = 1 and q = p, infinite data: in_law/explicit;
- n1e6: N = 10⁶, d ∈ {64, …, 16,384}, q = p with q = 1{x ≤ d/8}, and q = 1 with q = p: an
  in-law trial against the time torch takes to draw the cost model's count of normal numbers,
  in a fresh process, in 3 rounds of trials each followed by the draw (the ratio is the median
  of the rounds'), and the peak resident memory of the trials (explicit would need 65 GB of
  embeddings: not run).

    python benchmarks/closed_form_in_law.py            # every case (several minutes)
    python benchmarks/closed_form_in_law.py --quick    # fewer trials
    python benchmarks/closed_form_in_law.py --cases n1e6 --device cuda
"""

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time
from typing import Any

import torch

from assocmem.closed_form import cost, run_closed_form
from assocmem.closed_form.config import ClosedFormConfig
from assocmem.closed_form.values import expand_log_ranges
from assocmem.experiments.claims import FIG1_DIMS, FIG1_SAMPLES, FIG4_DIMS

CASES: dict[str, dict[str, Any]] = {
    "fig1": dict(
        n_inputs=1000, schemes=("empirical_threshold:P=d/12",), dims=FIG1_DIMS,
        n_samples=FIG1_SAMPLES,
    ),
    "fig4": dict(
        n_inputs=1000, schemes=("uniform", "population", "threshold:P=d/8"), dims=FIG4_DIMS,
    ),
    "n1e5": dict(
        n_inputs=10**5, schemes=("uniform", "population"),
        dims=tuple(expand_log_ranges("dims", ["log:64:4096:7"])),
    ),
    "n1e6_threshold": dict(
        n_inputs=10**6, schemes=("population", "threshold:P=d/8"),
        dims=(64, 256, 1024, 4096, 16384), memory_gb=2,
    ),
    "n1e6_uniform": dict(
        n_inputs=10**6, schemes=("uniform", "population"), dims=(64, 256, 1024, 4096, 16384),
        memory_gb=2,
    ),
}  # fmt: skip
TRIALS = {"fig1": (100, 20), "fig4": (100, 20), "n1e5": (3, 1), "n1e6": (8, 2)}  # full, quick


def sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def seconds_per_trial(cfg: ClosedFormConfig) -> float:
    sync(cfg.device)
    start = time.perf_counter()
    run_closed_form(cfg)
    sync(cfg.device)
    return (time.perf_counter() - start) / cfg.trials


def draw_seconds(numbers: float, device: str, dtype: torch.dtype, n_rows: int) -> float:
    """Seconds torch takes to draw ``numbers`` standard normals (blocks of ``n_rows``)."""
    gen = torch.Generator(device=device).manual_seed(0)
    block = torch.empty(32, n_rows, device=device, dtype=dtype)
    rows = int(numbers // n_rows)
    sync(device)
    start = time.perf_counter()
    for first in range(0, rows, 32):
        torch.randn(min(32, rows - first), n_rows, generator=gen, out=block[: rows - first])
    sync(device)
    return time.perf_counter() - start


def model_line(cfg: ClosedFormConfig, a: str = "explicit", b: str = "in_law") -> str:
    both = cost.costs(cfg)
    x, y = both[a], both[b]
    return (
        f"model: numbers {x.numbers:.3g} / {y.numbers:.3g} = {x.numbers / y.numbers:.2f}x, "
        f"flops {x.flops:.3g} / {y.flops:.3g} = {x.flops / y.flops:.2f}x, "
        f"units {x.units / y.units:.2f}x ({a} / {b})"
    )


def compare(
    name: str, values: dict[str, Any], trials: int, device: str, other: str, rounds: int
) -> None:
    """Time explicit and ``other`` (in_law or auto) on one config, same process, same run: in
    ``rounds`` alternating rounds of ``trials / rounds`` trials each (the machine's speed drifts
    by ±15 % over minutes: alternating exposes both samplers to the same drift); the speedup
    is the median of the rounds' ratios, beside its range."""
    per_round = max(1, trials // rounds)
    cfgs = {
        s: ClosedFormConfig(**values, trials=per_round, device=device, sampler=s)
        for s in ("explicit", other)
    }
    for cfg in cfgs.values():  # warm up (first-call costs) before timing either
        run_closed_form(ClosedFormConfig(**{**cfg.to_dict(), "trials": 1}))
    times: dict[str, list[float]] = {s: [] for s in cfgs}
    for _ in range(rounds):
        for s, cfg in cfgs.items():
            times[s].append(seconds_per_trial(cfg))
    ratios = [a / b for a, b in zip(times["explicit"], times[other], strict=True)]
    resolved = cfgs[other].resolved_sampler
    explicit, mine = statistics.median(times["explicit"]), statistics.median(times[other])
    print(
        f"{name:16s} {rounds}x{per_round} trials  explicit {explicit:.4f} s/trial  "
        f"{other}->{resolved} {mine:.4f} s/trial  "
        f"speedup {statistics.median(ratios):.2f}x (rounds {min(ratios):.2f}–{max(ratios):.2f})"
    )
    print(f"{'':16s} {model_line(cfgs['explicit'], 'explicit', resolved)}")


def peak_rss() -> int:
    """This process's peak resident memory in bytes: VmHWM (reset at exec, unlike ru_maxrss,
    which a child started from a large parent inherits), else ru_maxrss."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # kB on Linux


def vocabulary_child(name: str, trials: int, device: str, rounds: int) -> dict[str, Any]:
    """In a fresh process: ``rounds`` rounds of ``trials`` in-law trials, each followed by the
    draw floor (so both see the machine's drift alike), and the peak RSS after the first round
    (the floor's own buffer is not part of a trial's memory)."""
    cfg = ClosedFormConfig(**CASES[name], trials=trials, device=device, sampler="in_law")
    run_closed_form(ClosedFormConfig(**{**cfg.to_dict(), "trials": 1, "dims": (64,)}))  # warm
    numbers = cost.costs(cfg)["in_law"].numbers
    out: dict[str, Any] = {"seconds": [], "floor": []}
    for _ in range(rounds):
        out["seconds"].append(seconds_per_trial(cfg))
        if "peak_bytes" not in out:
            out["peak_bytes"] = float(peak_rss())
            if device.startswith("cuda"):
                out["cuda_peak_bytes"] = float(torch.cuda.max_memory_allocated())
        out["floor"].append(draw_seconds(numbers, device, cfg.torch_dtype, cfg.n_inputs))
    return out


def vocabulary(name: str, trials: int, device: str, rounds: int) -> None:
    """An N = 10⁶ case: in-law trial time against the draw floor, and peak memory."""
    command = [sys.executable, __file__, "--child", name, "--trials", str(trials)]
    done = subprocess.run(
        [*command, "--rounds", str(rounds), "--device", device],
        capture_output=True,
        text=True,
        check=True,
    )
    child = json.loads(done.stdout.strip().splitlines()[-1])
    cfg = ClosedFormConfig(**CASES[name], device=device, sampler="in_law")
    numbers = cost.costs(cfg)["in_law"].numbers
    ratios = [a / b for a, b in zip(child["seconds"], child["floor"], strict=True)]
    extra = (
        f", cuda peak {child['cuda_peak_bytes'] / 2**30:.2f} GiB"
        if "cuda_peak_bytes" in child
        else ""
    )
    print(
        f"{name:16s} {rounds}x{trials} trials  in_law {statistics.median(child['seconds']):.2f} "
        f"s/trial  draw floor ({numbers:.3g} normals) {statistics.median(child['floor']):.2f} s  "
        f"ratio {statistics.median(ratios):.2f}x (rounds {min(ratios):.2f}–{max(ratios):.2f})  "
        f"peak RSS {child['peak_bytes'] / 2**30:.2f} GiB{extra}"
    )
    print(f"{'':16s} {model_line(cfg)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer trials")
    parser.add_argument("--cases", nargs="+", default=["fig1", "fig4", "n1e5", "n1e6"])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--trials", type=int, help="override the trials of every case")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--rounds", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(vocabulary_child(args.child, args.trials, args.device, args.rounds)))
        return
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, device {args.device}")
    for case in args.cases:
        trials = args.trials or TRIALS[case][1 if args.quick else 0]
        rounds = 5 if case in ("fig1", "fig4") else 1
        if case == "fig4":
            compare(case, CASES[case], trials, args.device, "auto", rounds)
        elif case in ("fig1", "n1e5"):
            compare(case, CASES[case], trials, args.device, "in_law", rounds)
        else:
            for name in ("n1e6_threshold", "n1e6_uniform"):
                vocabulary(name, trials, args.device, 1 if args.quick else 3)


if __name__ == "__main__":
    main()

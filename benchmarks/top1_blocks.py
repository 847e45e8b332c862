"""Closed-form top-1 in blocks at large N = M (issue #37, criterion 1), on any device.

First checks that the blocked path gives the whole path's flags at a small size on the device
(float64; and, on CUDA, the CPU's flags), then times whole trials of the large setting: every
trial draws E and U, forms W_dᵀ and scores every input against all M outputs in blocks. Prints
seconds a trial and the GFLOP/s of the floor ``2·N·M·Σd`` multiply-adds' flops.

    python benchmarks/top1_blocks.py                                   # CPU: N = M = 2·10⁴
    python benchmarks/top1_blocks.py --device cuda -N 100000 --dims 4096 --memory-gb 60
"""

import argparse
import time

import numpy as np
import torch

from assocmem.closed_form import retrieval, run_closed_form
from assocmem.closed_form.blocked import blocked_wrong
from assocmem.closed_form.config import ClosedFormConfig
from assocmem.closed_form.problem import Problem


def check(device: str) -> None:
    """The blocked flags against the whole path's (and the CPU's), at N = 301, M = 60."""
    fields = dict(n_inputs=301, n_outputs=60, alpha=1.2, target="random", dims=(8, 40, 96))
    fields |= dict(trials=2, dtype="float64", sampler="explicit")
    on = ClosedFormConfig(**fields, device=device)
    whole = retrieval(on)
    problem = Problem(on)
    for block in (7, 64, 1000):
        got = np.stack(
            [~blocked_wrong(problem, t, block).transpose(0, 1).cpu().numpy() for t in (0, 1)]
        )
        print(
            f"{device}: block {block}: flags differing from the whole path: {(got != whole).sum()}"
        )
    if device != "cpu":
        cpu = retrieval(ClosedFormConfig(**fields))
        print(f"{device} against cpu (whole path): flags differing: {(cpu != whole).sum()}")


def time_trials(args: argparse.Namespace) -> None:
    cfg = ClosedFormConfig(
        n_inputs=args.n,
        n_outputs=args.n,
        target="random",
        schemes=("population",),
        dims=tuple(args.dims),
        trials=args.trials,
        device=args.device,
        memory_gb=args.memory_gb,
    )
    marks = [time.perf_counter()]

    def tick(_: int) -> None:
        if args.device != "cpu":
            torch.cuda.synchronize()
        marks.append(time.perf_counter())

    result = run_closed_form(cfg, progress=tick)
    seconds = np.diff(marks)
    flops = 2.0 * args.n * args.n * sum(args.dims)
    print(f"N = M = {args.n}, dims {args.dims}, {args.device}, float32")
    for row, s in enumerate(seconds):
        print(f"trial {row}: {s:.2f} s, {flops / s / 1e9:.0f} GFLOP/s of the floor's {flops:.3g}")
    print("errors (trial × d):", np.round(result.errors[:, 0, :], 5).tolist())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("-N", "--n", type=int, default=20_000)
    parser.add_argument("--dims", type=int, nargs="+", default=[256, 1024])
    parser.add_argument("--trials", type=int, default=2)
    parser.add_argument("--memory-gb", type=float, default=2.0)
    parser.add_argument("--skip-check", action="store_true")
    args = parser.parse_args()
    if args.device != "cpu":
        print(torch.cuda.get_device_name(), torch.__version__)
    if not args.skip_check:
        check(args.device)
    time_trials(args)


if __name__ == "__main__":
    main()

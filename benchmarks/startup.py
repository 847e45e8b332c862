"""Start-up time of the package and the command line, against ``import numpy`` (issue 17).

Target: ``python -c "import assocmem"``, ``assocmem --help`` and every ``assocmem CMD --help``
each take at most 4× the time of ``python -c "import numpy"``. Each is a fresh interpreter,
timed ``--repeats`` times (interleaved, so a load spike hits all alike); the medians are printed
with their ratio to numpy's median, measured in the same run. The commands are read from the
parser, so a new command is measured with no edit here.

    python benchmarks/startup.py               # 7 runs each
    python benchmarks/startup.py --repeats 11
"""

import argparse
import os
import platform
import statistics
import subprocess
import sys
import time
from datetime import date

from assocmem.cli import build_parser

TARGET = 4.0


def commands() -> dict[str, list[str]]:
    """What to time: label -> interpreter arguments."""
    cli = "from assocmem.cli import main; import sys; sys.exit(main(sys.argv[1:]))"
    out = {
        "import numpy (reference)": ["-c", "import numpy"],
        "import assocmem": ["-c", "import assocmem"],
        "assocmem --help": ["-c", cli, "--help"],
    }
    parser = build_parser()
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for name, sub in subparsers.choices.items():
        out[f"assocmem {name} --help"] = ["-c", cli, name, "--help"]
        nested = [a for a in sub._actions if isinstance(a, argparse._SubParsersAction)]
        for child in nested[0].choices if nested else ():
            out[f"assocmem {name} {child} --help"] = ["-c", cli, name, child, "--help"]
    return out


def time_once(args: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, *args], check=True, capture_output=True, env=os.environ)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7, help="runs of each (median; ≥ 5)")
    args = parser.parse_args()
    todo = commands()
    times: dict[str, list[float]] = {label: [] for label in todo}
    for _ in range(max(args.repeats, 5)):
        for label, argv in todo.items():
            times[label].append(time_once(argv))
    medians = {label: statistics.median(t) for label, t in times.items()}
    reference = medians["import numpy (reference)"]
    print(f"{platform.node()} ({platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} cores), {date.today()}, python {platform.python_version()}, "
          f"median of {max(args.repeats, 5)} runs; target ≤ {TARGET:g}× numpy")  # fmt: skip
    print(f"{'command':40s} {'median s':>9s} {'× numpy':>8s}")
    worst = 0.0
    for label, median in medians.items():
        ratio = median / reference
        worst = max(worst, ratio) if "reference" not in label else worst
        flag = "" if ratio <= TARGET else "  over target"
        print(f"{label:40s} {median:9.3f} {ratio:8.2f}{flag}")
    print(f"worst ratio: {worst:.2f} (target ≤ {TARGET:g})")
    return 0 if worst <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())

"""A sweep process for the reliability tests: runs a spec into a database and SIGKILLs itself
at a chosen point (``python sweep_driver.py SPEC DB [POINT K]``).

POINT: ``after_compute`` (batch computed, nothing written), ``before_commit`` (rows inserted
inside the open transaction, not committed), ``after_commit`` (K-th batch committed).
"""

import os
import signal
import sys

from assocmem.sweep.execute import Hooks, run_sweep


def killer(k: int):
    seen = {"n": 0}

    def hook(batch: object) -> None:
        seen["n"] += 1
        if seen["n"] == k:
            os.kill(os.getpid(), signal.SIGKILL)

    return hook


def main(argv: list[str]) -> None:
    spec, db = argv[0], argv[1]
    hooks = Hooks()
    if len(argv) > 2:
        setattr(hooks, argv[2], killer(int(argv[3])))
    run_sweep(spec, db, hooks=hooks)


if __name__ == "__main__":
    main(sys.argv[1:])

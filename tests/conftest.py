import os
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).parent))  # lets tests import the naive reference

# Under pytest-xdist (`-n K`, the slow tier) each worker would run torch's default intra-op pool,
# one thread per core: K × cores threads on the cores. On the 2-core CI VM two `assocmem facts
# --scale tiny` at once took 136 s, against 32 s with one thread each. A worker (and the
# processes it starts) gets its share of the cores; records do not depend on the thread count.
_WORKERS = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "0"))
if _WORKERS > 1:
    _SHARE = max(1, (os.cpu_count() or 1) // _WORKERS)
    torch.set_num_threads(_SHARE)
    os.environ["OMP_NUM_THREADS"] = os.environ["MKL_NUM_THREADS"] = str(_SHARE)

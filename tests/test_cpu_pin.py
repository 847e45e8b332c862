"""The CPU pin (assocmem/cpu_pin.py, docs/reproducibility.md): the same bits on every x86-64 host
of one vendor with AVX2, whatever its instruction set beyond AVX2 and its thread count.

Another host is simulated on this one: ``MKL_ENABLE_INSTRUCTIONS=AVX2`` makes MKL see a CPU
without AVX-512, and the thread count changes (1, 2, 3). Each setting is a fresh Python (the
libraries read their settings once per process) training a small set: runs of the compiled
kernel (whose cross-entropy and p_correct torch evaluates) and runs that step through torch
ops (full-batch Adam at d = 2, Figure 8's finding §4.6b, and ``ASSOCMEM_NATIVE=0``). The test
that the pin matters shows the same set differ without it, so these tests can fail.

The tests are keyed by vendor: MKL runs its AVX2 branch on an Intel CPU and its AUTO branch on
any other (AMD), and the set's bits are held against those recorded on a host of this vendor
(``tests/data/host-bits/VENDOR.json``; run this file as a script to print a host's record).
"""

import json
import os
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from assocmem import cpu_pin
from assocmem.training import native_library

SRC = Path(__file__).resolve().parent.parent / "src"
RECORDS = Path(__file__).resolve().parent / "data" / "host-bits"
VENDORS = {"GenuineIntel": "intel", "AuthenticAMD": "amd"}  # a record's file name, by vendor
PINNED = {"mkl_cbwr": cpu_pin.pins()["MKL_CBWR"], "aten": "AVX2"}  # this vendor's pin

pytestmark = pytest.mark.skipif(
    not cpu_pin.is_x86_64() or cpu_pin.host_capability() not in ("AVX2", "AVX512"),
    reason="the pin holds x86-64 CPUs with AVX2 (Linux: /proc/cpuinfo)",
)

SCRIPT = """
import json, os, sys
import assocmem  # first, as every entry does: the pin before torch loads
import torch
from assocmem import cpu_pin
from assocmem.training import TrainConfig, train

torch.set_num_threads(int(sys.argv[1]))
runs = [TrainConfig(n_inputs=100, dim=d, n_samples=2048, batch_size=64, model="matrix", seed=s)
        for d in (8, 64) for s in (0, 1)]
runs += [TrainConfig.from_flat({
    "optimizer": "adam", "betas": [0.9, 0.999], "lr_scaling": "none", "lr": 0.1,
    "model": "learned", "full_batch": True, "n_steps": 300, "n_inputs": 100, "n_outputs": 5,
    "dim": 2, "n_samples": 1024, "seed": s}) for s in (0, 1)]
metrics = {}
for native in ("", "0"):
    os.environ["ASSOCMEM_NATIVE"] = native
    for i, r in enumerate(train(runs)):
        metrics[f"{native or 'default'} {i}"] = [
            r.kernel, float(r.error).hex(), float(r.cross_entropy).hex(), float(r.p_correct).hex()
        ]
print(json.dumps({"in_effect": cpu_pin.in_effect(), "metrics": metrics}))
"""


@cache
def trained(threads: int = 2, **env: str) -> dict[str, Any]:
    """The small training set's metrics (float hex) and the pin in effect, in a fresh Python
    with ``threads`` torch threads and ``env`` over this environment (less the pin's
    variables, so that the pin, not the caller, sets them)."""
    base = {k: v for k, v in os.environ.items() if k not in {*cpu_pin.pins(), cpu_pin.SWITCH}}
    base.pop("ASSOCMEM_NATIVE", None)
    base.pop("MKL_ENABLE_INSTRUCTIONS", None)
    base.update(PYTHONPATH=str(SRC), OMP_NUM_THREADS=str(threads), **env)
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(threads)],
        env=base, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_pinned_runs_give_the_same_bits_on_a_simulated_avx2_host_and_any_thread_count():
    here = trained()
    assert here["in_effect"] == PINNED
    kernels = {kernel for kernel, *_ in here["metrics"].values()}
    assert any("compiled" in k for k in kernels) and any("torch ops" in k for k in kernels)
    for threads in (1, 3):
        other = trained(threads, MKL_ENABLE_INSTRUCTIONS="AVX2")
        assert other["in_effect"] == here["in_effect"]
        assert other["metrics"] == here["metrics"], f"{threads} threads, MKL sees AVX2 only"


@pytest.mark.skipif(
    cpu_pin.host_capability() != "AVX512", reason="an AVX2 CPU runs the pinned code anyway"
)
@pytest.mark.skipif(
    cpu_pin.cpu_vendor() != "GenuineIntel",
    reason="MKL runs its AUTO code on an AMD CPU with or without AVX-512 (an AMD EPYC with "
    "AVX-512 gave the same bits unpinned): the recorded bits are this vendor's check",
)
def test_without_the_pin_the_simulated_host_gives_other_bits():
    """What the pin fixes on an Intel CPU, so that the test above can fail: unpinned, MKL's
    AVX-512 path and ATen's AVX-512 kernels round otherwise than an AVX2 host's."""
    off = trained(ASSOCMEM_PIN_CPU="0")
    assert off["in_effect"] == {"mkl_cbwr": "OFF", "aten": "AVX512"}
    for env in ({"ATEN_CPU_CAPABILITY": "avx2"}, {"MKL_ENABLE_INSTRUCTIONS": "AVX2"}):
        other = trained(ASSOCMEM_PIN_CPU="0", **env)
        differ = [k for k in off["metrics"] if off["metrics"][k] != other["metrics"][k]]
        assert differ, f"unpinned, {env} gave the same bits"
        assert any(k.startswith("0 ") for k in differ), "the torch-ops runs should differ too"


def test_the_compiled_kernel_is_the_cpus_best_under_the_pin():
    """ATen is pinned at AVX2; the compiled kernel still runs the CPU's best variant (its
    variants give the same bits, so the pin costs it no speed)."""
    best = {"AVX512": "avx512", "AVX2": "avx2"}[str(cpu_pin.host_capability())]
    if native_library.library_path(best) is None:
        pytest.skip(f"the {best} library was not built")
    kernels = {kernel for kernel, *_ in trained()["metrics"].values()}
    assert f"TableSGDKernel (compiled {best})" in kernels, kernels


def test_a_users_own_setting_wins_and_is_recorded():
    """COMPATIBLE: the one branch besides AUTO that MKL runs on every vendor's CPU."""
    mine = trained(MKL_CBWR="COMPATIBLE")
    assert mine["in_effect"] == {"mkl_cbwr": "COMPATIBLE", "aten": "AVX2"}


def test_a_pin_that_comes_too_late_says_so():
    """torch already ran (and chose its code) before assocmem was imported: one line on
    stderr names the settings to make, rather than a silent claim."""
    env = {k: v for k, v in os.environ.items() if k not in cpu_pin.pins()}
    late = "import torch; torch.ones(4).exp(); import assocmem"
    done = subprocess.run(
        [sys.executable, "-c", late], env={**env, "PYTHONPATH": str(SRC)},
        capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    if cpu_pin.host_capability() == "AVX512":
        assert f"MKL_CBWR={PINNED['mkl_cbwr']} ATEN_CPU_CAPABILITY=avx2" in done.stderr
    early = "import torch; import assocmem; torch.ones(4).exp()"
    done = subprocess.run(
        [sys.executable, "-c", early], env={**env, "PYTHONPATH": str(SRC)},
        capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    assert done.stderr == ""  # torch imported first but not yet run: the pin holds


def test_cpu_flags_and_vendor_are_read_from_cpuinfo(tmp_path):
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text(
        "processor\t: 0\nvendor_id\t: AuthenticAMD\nflags\t\t: fpu sse2 avx avx2 fma\n"
    )
    assert cpu_pin.cpu_flags(cpuinfo) == {"fpu", "sse2", "avx", "avx2", "fma"}
    assert cpu_pin.cpu_vendor(cpuinfo) == "AuthenticAMD"
    assert cpu_pin.cpu_flags(tmp_path / "absent") is None
    assert cpu_pin.cpu_vendor(tmp_path / "absent") is None


def record(metrics: dict[str, Any]) -> dict[str, list[str]]:
    """The numbers of a set's metrics (error, cross-entropy, p_correct), without the kernel's
    name: the compiled kernel's variants (avx2, avx512) give the same bits."""
    return {run: values[1:] for run, values in metrics.items()}


def test_the_pinned_bits_are_those_recorded_on_a_host_of_this_vendor():
    """This host's pinned bits against a record made on another host of its vendor (another
    machine, another session): the contract's row for this vendor, measured, not simulated."""
    vendor = VENDORS.get(str(cpu_pin.cpu_vendor()))
    path = RECORDS / f"{vendor}.json"
    if vendor is None or not path.exists():
        pytest.skip(f"no record for {cpu_pin.cpu_vendor()} (python tests/test_cpu_pin.py > {path})")
    recorded = json.loads(path.read_text())
    if recorded["torch"].split("+")[0] != torch_version():  # another torch: other code, other bits
        pytest.skip(f"{path.name} holds torch {recorded['torch']}'s bits, not {torch_version()}'s")
    here = trained()
    assert here["in_effect"] == recorded["in_effect"]
    assert record(here["metrics"]) == record(recorded["metrics"]), f"{path.name}: other bits"


def torch_version() -> str:
    from importlib.metadata import version

    return version("torch").split("+")[0]


if __name__ == "__main__":  # a host's record, for tests/data/host-bits/VENDOR.json
    measured = trained()
    print(json.dumps({
        "host": cpu_pin.cpuinfo_field("model name"),
        "vendor": cpu_pin.cpu_vendor(),
        "capability": cpu_pin.host_capability(),
        "torch": torch_version(),
        "what": "tests/test_cpu_pin.py's small training set (SCRIPT, 2 threads), pinned by "
        "import assocmem; float hex of error, cross_entropy, p_correct",
        **measured,
    }, indent=1))  # fmt: skip

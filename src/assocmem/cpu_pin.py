"""Pinning the CPU's numerics, so that a run gives the same bits on every x86-64 host of one
vendor with AVX2 (docs: reproducibility.md).

Two libraries under torch round by the CPU they run on, each choosing its code once, when first
used, from a setting of the environment:

- MKL (every float32 matrix product on the CPU, the QR and SVD of the closed-form in-law
  sampler): its conditional numerical reproducibility. On an Intel CPU ``MKL_CBWR=AVX2,STRICT``
  makes it take its AVX2 code path on every Intel CPU that has AVX2 (AVX-512 or not). On any
  other CPU (AMD) MKL honours only the ``AUTO`` and ``COMPATIBLE`` branches (Intel's oneMKL
  developer guide, "Specifying Code Branches") and runs ``AUTO`` whatever else is asked, so the
  pin asks for ``AUTO,STRICT`` there, which is what runs. ``STRICT`` makes its matrix products
  independent of the thread count on both.
- ATen (torch's own vectorised CPU code: sums, exp and log of the cross-entropy, Adam's
  steps): ``ATEN_CPU_CAPABILITY=avx2`` makes it run its AVX2 kernels, not its AVX-512 ones, on
  either vendor.

:func:`pin` sets both where the user has not (``os.environ.setdefault``: a user's own setting
wins, and the record names it) when ``import assocmem`` runs: the package's ``__init__``, which
every entry (the library, the ``assocmem`` command, ``python -m assocmem``) goes through before
it loads torch. ``ASSOCMEM_PIN_CPU=0`` turns the pin off (faster torch ops on an AVX-512 CPU;
the bits then follow the host). Only x86-64 CPUs with AVX2 are pinned (Linux reads
``/proc/cpuinfo``; another x86-64 system is assumed to have AVX2 and to be Intel's). The compiled
training kernels choose their variant by what the CPU really has (:func:`host_capability`), not
by ATen's pinned capability: they give the same bits in every variant.

This module imports no torch: ``import assocmem`` stays light.
"""

import ctypes
import functools
import os
import platform
import sys
from pathlib import Path

SWITCH = "ASSOCMEM_PIN_CPU"  # "0": no pin (the bits follow the host's instruction set)

# MKL's branch under the pin, by vendor: on a CPU not of Intel's, MKL runs AUTO whatever else
# MKL_CBWR asks (only AUTO and COMPATIBLE are available there), so the pin asks for what runs.
MKL_PIN = {"GenuineIntel": "AVX2,STRICT", "other": "AUTO,STRICT"}

# Instruction-set flags of /proc/cpuinfo that each capability needs (the compiled kernels'
# variants are built with -mavx2, and with -mavx512f -mavx512vl -mavx512bw -mavx512dq: setup.py).
NEEDS = {
    "AVX512": {"avx512f", "avx512vl", "avx512bw", "avx512dq"},
    "AVX2": {"avx2"},
}

# MKL's branch codes (mkl_service.h) → the names MKL_CBWR takes.
MKL_BRANCHES = {
    0: "OFF", 1: "OFF", 2: "AUTO", 3: "COMPATIBLE", 4: "SSE2", 6: "SSSE3", 7: "SSE4_1",
    8: "SSE4_2", 9: "AVX", 10: "AVX2", 11: "AVX512_MIC", 12: "AVX512", 13: "AVX512_MIC_E1",
    14: "AVX512_E1",
}  # fmt: skip
MKL_STRICT = 0x10000


def cpuinfo_field(name: str, cpuinfo: Path = Path("/proc/cpuinfo")) -> str | None:
    """The value of the first line ``name : value`` of ``cpuinfo`` (Linux: ``/proc/cpuinfo``),
    or None where it cannot be read (another system)."""
    try:
        text = cpuinfo.read_text()
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith(name):
            return line.partition(":")[2].strip()
    return None


def cpu_flags(cpuinfo: Path = Path("/proc/cpuinfo")) -> set[str] | None:
    """The instruction-set flags of this CPU, or None where they cannot be read."""
    flags = cpuinfo_field("flags", cpuinfo)
    return None if flags is None else set(flags.split())


@functools.cache  # read once: every CPU record's provenance names it
def cpu_vendor(cpuinfo: Path = Path("/proc/cpuinfo")) -> str | None:
    """The CPU's vendor as it names itself (``"GenuineIntel"``, ``"AuthenticAMD"``), or None
    where it cannot be read."""
    return cpuinfo_field("vendor_id", cpuinfo)


@functools.cache
def pins() -> dict[str, str]:
    """The settings of the pin on this host: environment variable → value (MKL's branch by
    vendor, :data:`MKL_PIN`; a host whose vendor cannot be read is taken as Intel's)."""
    vendor = cpu_vendor() or "GenuineIntel"
    mkl = MKL_PIN.get(vendor, MKL_PIN["other"])
    return {"MKL_CBWR": mkl, "ATEN_CPU_CAPABILITY": "avx2"}


def is_x86_64() -> bool:
    """Whether this is an x86-64 machine."""
    return platform.machine().lower() in ("x86_64", "amd64")


@functools.cache
def host_capability() -> str | None:
    """The best capability this CPU really has, whatever ATen was told (``"AVX512"``,
    ``"AVX2"`` or ``"DEFAULT"``), or None where it cannot be read (not Linux x86-64)."""
    flags = cpu_flags() if is_x86_64() else None
    if flags is None:
        return None
    return next((name for name, needs in NEEDS.items() if needs <= flags), "DEFAULT")


def pinnable() -> bool:
    """Whether this host takes the pin: an x86-64 CPU with AVX2 (assumed where the flags
    cannot be read), unless ``ASSOCMEM_PIN_CPU=0``."""
    if os.environ.get(SWITCH, "1") == "0" or not is_x86_64():
        return False
    return host_capability() in (None, "AVX2", "AVX512")


@functools.cache
def mkl_branch() -> str | None:
    """The code path MKL runs (``"AVX2,STRICT"``, ``"AUTO,STRICT"``, ``"OFF"`` where MKL
    chooses by CPU without reproducibility), read from MKL itself, or None where torch's MKL
    cannot be asked (no MKL, not Linux). Loads torch, and fixes MKL's setting (read once per
    process): call it after :func:`pin`."""
    import torch  # noqa: PLC0415 (this module loads no torch when assocmem is imported)

    try:
        lib = ctypes.CDLL(str(Path(torch.__file__).parent / "lib" / "libtorch_cpu.so"))
        get = lib.mkl_serv_cbwr_get
    except (OSError, AttributeError):
        return None
    get.restype, get.argtypes = ctypes.c_int, [ctypes.c_int]
    code = get(-1)  # MKL_CBWR_ALL: the branch and the STRICT bit
    name = MKL_BRANCHES.get(code & 0xFFFF, str(code & 0xFFFF))
    return name + (",STRICT" if code & MKL_STRICT else "")


def in_effect() -> dict[str, str | None]:
    """The numerics torch's CPU code runs with, for a run's provenance: MKL's code path
    (:func:`mkl_branch`; the environment's ``MKL_CBWR`` where MKL cannot be asked) and ATen's
    capability. Loads torch."""
    import torch  # noqa: PLC0415

    mkl = mkl_branch()
    if mkl is None:
        mkl = os.environ.get("MKL_CBWR")
    return {"mkl_cbwr": mkl, "aten": torch.backends.cpu.get_cpu_capability()}


def pin() -> None:
    """Set :func:`pins` where the user has not, on a host that takes the pin (:func:`pinnable`).

    Where torch was imported, and has chosen its code, before this ran, the pin may come too
    late: one line on stderr then names the settings to make before Python starts."""
    if not pinnable():
        return
    wanted = pins()
    ours = {name: value for name, value in wanted.items() if name not in os.environ}
    os.environ.update(ours)
    if ours and "torch" in sys.modules:
        actual = in_effect()
        late = {
            "MKL_CBWR": actual["mkl_cbwr"] not in (None, wanted["MKL_CBWR"]),
            "ATEN_CPU_CAPABILITY": actual["aten"] != wanted["ATEN_CPU_CAPABILITY"].upper(),
        }
        if any(late[name] for name in ours):
            settings = " ".join(f"{name}={value}" for name, value in wanted.items())
            print(
                f"assocmem: torch chose its CPU code before assocmem was imported (MKL "
                f"{actual['mkl_cbwr']}, ATen {actual['aten']}): the bits follow this host; "
                f"set {settings} before Python starts for the same bits on every AVX2 host of "
                f"this vendor",
                file=sys.stderr,
            )

"""Choosing and loading the compiled library of the training kernels, which
:mod:`assocmem.training.native` calls.

The source ``kernels.c`` is compiled once, when the package is built or installed (``setup.py``:
one library per instruction set — ``baseline``, ``avx2``, ``avx512`` on x86-64 — all built with
``-ffp-contract=off`` and no ``-march=native``), and the best library this CPU runs (by its real
instruction set, whatever ATen's pinned capability: :mod:`assocmem.cpu_pin`) is chosen at run
time (:func:`load`) and called with :mod:`ctypes`. Where no library can be used (built without
a C compiler, or ``ASSOCMEM_NATIVE=0``), :func:`load` returns None, one line on stderr
says why, and the engine uses torch ops instead. :func:`describe` names the kernel in use, for
provenance.
"""

import ctypes
import importlib.machinery
import os
import sys
from pathlib import Path
from typing import NamedTuple

import torch

from assocmem.cpu_pin import host_capability

FOLDER = Path(__file__).parent


SOURCE = FOLDER / "kernels.c"  # what the libraries are built from (setup.py)


# Built libraries (setup.py), best first → the CPU capabilities that run them.
VARIANTS = {
    "avx512": {"AVX512"},
    "avx2": {"AVX512", "AVX2"},
    "baseline": None,  # any CPU
}


SWITCH = "ASSOCMEM_NATIVE"  # "0": torch ops; a variant's name: that library; else the best


I64, I32, F32, POINTER = ctypes.c_int64, ctypes.c_int, ctypes.c_float, ctypes.c_void_p


# The C functions of kernels.c: (return type, (parameter name, type) in order), checked against
# the C source by tests/test_native_build.py.
SIGNATURES: dict[str, tuple[type | None, tuple[tuple[str, type], ...]]] = {
    "sign_project": (I32, (
        ("runs", I64), ("d", I64), ("ld", I64), ("m", I64), ("P", POINTER), ("U", POINTER),
        ("eps", F32), ("mode", I32), ("out", POINTER),
    )),
    "softmax_error": (None, (
        ("rows", I64), ("m", I64), ("n", I64), ("logits", POINTER), ("targets", POINTER),
        ("weights", POINTER), ("out", POINTER),
    )),
    "dense_scratch": (I64, (("d", I64), ("ld", I64), ("m", I64), ("k", I64))),
    "dense_steps": (I32, (
        ("runs", I64), ("steps", I64), ("d", I64), ("ld", I64), ("n", I64), ("m", I64),
        ("W", POINTER), ("E", POINTER), ("U", POINTER), ("counts", POINTER), ("rows", POINTER),
        ("weights", POINTER), ("targets", POINTER), ("layer_norm", I32), ("learn", I32),
        ("mode", I32), ("eps", F32), ("lr", POINTER), ("scratch", POINTER),
    )),
    "projected_scratch": (I64, (("d", I64), ("m", I64))),
    "projected_steps": (I32, (
        ("runs", I64), ("steps", I64), ("d", I64), ("ld", I64), ("n", I64), ("m", I64),
        ("E", POINTER), ("U", POINTER), ("V", POINTER), ("counts", POINTER), ("rows", POINTER),
        ("weights", POINTER), ("targets", POINTER), ("mode", I32), ("eps", F32),
        ("lr", POINTER), ("scratch", POINTER),
    )),
    "table_steps": (I32, (
        ("runs", I64), ("steps", I64), ("n", I64), ("m", I64), ("T", POINTER), ("Gin", POINTER),
        ("Gout", POINTER), ("counts", POINTER), ("rows", POINTER), ("weights", POINTER),
        ("targets", POINTER), ("lr", POINTER), ("scratch", POINTER),
    )),
}  # fmt: skip


class Choice(NamedTuple):
    """The library in use (None: torch ops), its variant, and why none is used (else "")."""

    lib: ctypes.CDLL | None
    variant: str
    reason: str


_choices: dict[str, Choice] = {}  # the value of SWITCH → its choice, made once per process


def library_path(variant: str) -> Path | None:
    """The built library of a variant next to this module, or None where it was not built."""
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        path = FOLDER / f"_kernels_{variant}{suffix}"
        if path.is_file():
            return path
    return None


def runnable() -> list[str]:
    """The variants this CPU can run, best first: by the instructions it really has
    (:func:`assocmem.cpu_pin.host_capability`), not by ATen's capability, which the pin holds
    at AVX2 (the variants give the same bits, so the best is only faster); by
    ``torch.backends.cpu``'s capability where the CPU's flags cannot be read."""
    capability = host_capability() or torch.backends.cpu.get_cpu_capability()
    return [name for name, needs in VARIANTS.items() if needs is None or capability in needs]


def open_library(variant: str) -> ctypes.CDLL:
    """Load a variant's library and declare its functions (:data:`SIGNATURES`).

    Raises
    ------
    OSError
        Where the variant was not built or cannot be loaded.
    """
    path = library_path(variant)
    if path is None:
        raise OSError(f"no library _kernels_{variant} built in {FOLDER}")
    lib = ctypes.CDLL(str(path))
    for name, (restype, parameters) in SIGNATURES.items():
        function = getattr(lib, name)
        function.restype = restype
        function.argtypes = [kind for _, kind in parameters]
    return lib


def choose(wanted: str) -> Choice:
    """The library that :data:`SWITCH` = ``wanted`` and this CPU select."""
    if wanted == "0":
        return Choice(None, "", f"{SWITCH}=0")
    candidates = runnable()
    if wanted in VARIANTS:
        if wanted not in candidates:
            return Choice(None, "", f"{SWITCH}={wanted} but this CPU lacks its instructions")
        candidates = [wanted]
    built = [variant for variant in candidates if library_path(variant) is not None]
    if not built:
        return Choice(None, "", f"no library built in {FOLDER} (no C compiler at install time?)")
    failures = []
    for variant in built:
        try:
            return Choice(open_library(variant), variant, "")
        except OSError as error:
            failures.append(str(error))
    return Choice(None, "", "; ".join(failures))


def chosen() -> Choice:
    """The choice for the current value of :data:`SWITCH`, made (and, where no library can be
    used, reported on stderr in one line) the first time this process sees that value."""
    wanted = os.environ.get(SWITCH, "")
    if wanted not in _choices:
        _choices[wanted] = choice = choose(wanted)
        if choice.lib is None:
            print(f"assocmem: training runs torch ops, not the compiled kernel: {choice.reason}",
                  file=sys.stderr)  # fmt: skip
    return _choices[wanted]


def load() -> ctypes.CDLL | None:
    """The compiled kernel chosen for this CPU (loaded once per process), or None where none
    can be used (then torch ops run, and stderr has said why in one line)."""
    return chosen().lib


def describe() -> str:
    """The training kernel in use, for provenance: "compiled avx512" (or avx2, baseline), or
    "torch ops: <why the compiled kernel is not used>"."""
    choice = chosen()
    return f"compiled {choice.variant}" if choice.lib is not None else f"torch ops: {choice.reason}"


def reason_unavailable() -> str | None:
    """Why the compiled kernel is not used (tests skip with it), or None where it is."""
    choice = chosen()
    return None if choice.lib is not None else choice.reason

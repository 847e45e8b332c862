"""Build the training engine's compiled kernels (``src/assocmem/training/kernels.c``).

One C source, built into one shared library per instruction set;
``training/native_library.py`` loads the best one this CPU runs (it chooses at run time, by CPU
feature) with :mod:`ctypes`. The libraries use no Python C-API. Every build has ``-ffp-contract=off`` (no fused multiply-add) and
no ``-march=native``, so the libraries give the same bits on every machine and on every
instruction set (``tests/test_native_build.py`` compares them).

The extensions are optional: without a C compiler (or with one that rejects GCC/clang vector
extensions, such as MSVC) installation still succeeds and the engine runs its torch ops,
saying so on stderr. Everything else about the package is in ``pyproject.toml``.
"""

import os
import platform

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

SOURCE = "src/assocmem/training/kernels.c"
COMMON_FLAGS = ["-O3", "-ffp-contract=off", "-fno-math-errno", "-g0", "-Wno-psabi"]
X86 = platform.machine().lower() in {"x86_64", "amd64"}
# Library name suffix -> flags of its instruction set (baseline: the platform's own, SSE2
# on x86-64). native_library.VARIANTS lists the same names with the CPU features each needs.
VARIANTS = {
    "baseline": [],
    **(
        {
            "avx2": ["-mavx2"],
            "avx512": ["-mavx512f", "-mavx512vl", "-mavx512bw", "-mavx512dq"],
        }
        if X86
        else {}
    ),
}


class BuildEachVariant(build_ext):
    """build_ext with a temporary folder per library: all of them compile the same source,
    whose object files would otherwise overwrite each other."""

    def build_extension(self, ext: Extension) -> None:
        shared = self.build_temp
        self.build_temp = os.path.join(shared, ext.name)
        try:
            super().build_extension(ext)
        finally:
            self.build_temp = shared


setup(
    ext_modules=[
        Extension(
            f"assocmem.training._kernels_{name}",
            sources=[SOURCE],
            extra_compile_args=COMMON_FLAGS + flags,
            optional=True,  # no compiler: installed without it, torch ops run instead
            py_limited_api=True,  # no Python C-API at all: one wheel for every CPython 3
        )
        for name, flags in VARIANTS.items()
    ],
    cmdclass={"build_ext": BuildEachVariant},
    options={"bdist_wheel": {"py_limited_api": "cp311"}},  # the tag of those abi3 libraries
)

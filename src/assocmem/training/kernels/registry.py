"""Kernel selection: the kernels in order of preference; the first that supports a config wins.

Adding a kernel: one module with its :class:`AbstractKernel` subclass (its ``supports``), one
entry here at its place in the order. Selection reads the config only (it compiles nothing):
planning may call it freely.
"""

from assocmem.training.config import TrainConfig
from assocmem.training.kernels.analytic import AnalyticKernel
from assocmem.training.kernels.autograd import AutogradKernel, LabelLawAutogradKernel
from assocmem.training.kernels.base import AbstractKernel
from assocmem.training.kernels.dense import DenseKernel
from assocmem.training.kernels.projected import ProjectedMatrixKernel
from assocmem.training.kernels.qupdate import QUpdateKernel
from assocmem.training.kernels.table import LayerNormSGDKernel, TableSGDKernel

# The cheapest first: each computes its configs exactly (up to rounding).
FAST_KERNELS: tuple[type[AbstractKernel], ...] = (
    QUpdateKernel,
    TableSGDKernel,
    LayerNormSGDKernel,
    ProjectedMatrixKernel,
    DenseKernel,
    AnalyticKernel,
    LabelLawAutogradKernel,
)
# fast=False: autograd wherever it applies (the tests' second opinion).
AUTOGRAD_KERNELS: tuple[type[AbstractKernel], ...] = (
    QUpdateKernel,
    AutogradKernel,
    LabelLawAutogradKernel,
)


def select_kernel(cfg: TrainConfig, *, fast: bool = True) -> type[AbstractKernel]:
    """The first kernel of the preference order that supports ``cfg``."""
    for kernel in FAST_KERNELS if fast else AUTOGRAD_KERNELS:
        if kernel.supports(cfg):
            return kernel
    raise AssertionError(f"no kernel supports {cfg!r}")  # AutogradKernel supports every model

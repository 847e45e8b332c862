"""The training kernels: a group's state and its optimiser step, several ways.

One module per kernel (or pair); :func:`select_kernel` walks the preference order of
:mod:`~assocmem.training.kernels.registry` and returns the first kernel whose ``supports(cfg)``
holds.
"""

from assocmem.ops.cross_entropy import softmax_error
from assocmem.training.kernels.analytic import AnalyticKernel
from assocmem.training.kernels.autograd import AutogradKernel, LabelLawAutogradKernel
from assocmem.training.kernels.base import (
    DTYPE,
    AbstractKernel,
    RunInputs,
    weighted_softmax_error,
)
from assocmem.training.kernels.dense import DenseKernel
from assocmem.training.kernels.projected import ProjectedMatrixKernel
from assocmem.training.kernels.qupdate import QUpdateKernel
from assocmem.training.kernels.registry import AUTOGRAD_KERNELS, FAST_KERNELS, select_kernel
from assocmem.training.kernels.table import LayerNormSGDKernel, TableSGDKernel

__all__ = [
    "AUTOGRAD_KERNELS",
    "DTYPE",
    "FAST_KERNELS",
    "AbstractKernel",
    "AnalyticKernel",
    "AutogradKernel",
    "DenseKernel",
    "LabelLawAutogradKernel",
    "LayerNormSGDKernel",
    "ProjectedMatrixKernel",
    "QUpdateKernel",
    "RunInputs",
    "TableSGDKernel",
    "select_kernel",
    "softmax_error",
    "weighted_softmax_error",
]

r"""Runs of different d share one tensor program on the batched path, padded with zeros.

On the batched path (CUDA's, :func:`~assocmem.runtime.uses_batched_path`) runs whose configs
agree on everything but d, seed and lr may form one group: each run is embedded in the group's
largest dimension D by zero-padding. A run draws its embeddings E (N, d), U (M, d) and W₀ (d, d)
at its own d, with its own :math:`1/\sqrt{d}` scales, exactly as alone; the draws are then padded
with zero columns (and W₀ with zero rows and columns) to D. The padded coordinates stay exactly
zero, so a run computes what it computes alone, up to the order of float sums:

- forward: :math:`h = W e` is zero on the padding (W's padded rows are zero); the ReLU of a zero
  is zero; the "layer norm" :math:`h / \sqrt{\|h\|^2 + 10^{-6}}` divides by the norm, which the
  zeros leave unchanged (it subtracts no mean and divides by no width); the logits
  :math:`u_y^\top h` add products with a zero factor;
- gradient: :math:`\partial z = \Delta U`, :math:`\nabla U = \Delta^\top z`,
  :math:`\nabla W = \partial h^\top e`, :math:`\nabla E = \partial h W` (or
  :math:`\partial h \odot \mathbb{1}\{e > 0\}`) are zero on the padding, through the layer
  norm's Jacobian too (its terms carry a factor :math:`\partial z` or z);
- optimiser steps: SGD (momentum and weight decay act on zeros), sign-SGD (sign 0 = 0), Adam
  and sign-Adam (m = v = 0, a step :math:`0 / (0 + \mathrm{eps}) = 0`), normalised SGD (the
  zeros leave the norm unchanged);
- per-run constants use the run's own d: its draws' scales, and the paper's learning-rate
  factors (W by lr/d, learned embeddings by lr/√d under Adam) as a per-run tensor
  (:func:`~assocmem.training.kernels.base.run_lr_factor`);
- evaluation reads the (N, M) logits, in which d does not appear; a kept state
  (``return_state``) is read back at the run's own d (:meth:`TrainedState.of_runs`).

That holds for every model × optimiser × layer norm of the authors' grid and for the ``qupdate``
model (whose state after the Gram matrices is (N,)); each kernel says so by its
:attr:`~assocmem.training.kernels.base.AbstractKernel.pads_exactly`. Where padding is not used:

- on the CPU's default path: the compiled per-run kernels keep a run's bits independent of its
  companions, and a sum over D coordinates may round otherwise than over d;
- with ``keep_w``: the shadow W (:mod:`~assocmem.training.shadow`) takes the group's learning-rate
  factors;
- where a group would hold more than :data:`~assocmem.training.planning.PAD_WASTE` times its
  runs' own state or work (:func:`~assocmem.training.planning.group_runs`);
- where a computation would read the padded width: a layer norm that subtracts the mean over the
  d coordinates or divides by d, random draws whose shape is D, a learning rate scaled by the
  program's d. None of the kernels does; one that did would set ``pads_exactly = False``.

A run whose numbers overflow may see ``inf · 0 = NaN`` on its padding where alone it sees inf:
its status is "diverged" either way. On the CPU (the batched path forced) the runs at a group's
largest d keep the bits they have alone and the padded runs agree to float rounding
(``tests/test_padding.py``).

The sweep's training batches hold one d each (the train run kind's ``group_key``), so only a
``train()`` call over several d (``assocmem train --dims …``) shares programs across d. For the
authors' grid on CUDA, planned without running: 336 programs as the sweep batches it; 216 if each
batch held every d of a model × optimiser × layer norm × B family (840 runs); 384 if d left the
group key but batches stayed cut at 256 runs (T-families and d split across batches).
"""

from collections.abc import Hashable

import torch
import torch.nn.functional as F

from assocmem.runtime import uses_batched_path
from assocmem.training.config import TrainConfig
from assocmem.training.kernels import select_kernel

# The axes of d of a run's tensors (no run axis), by their names in RunInputs and TrainedState.
DIM_AXES: dict[str, tuple[int, ...]] = {
    "E": (1,),  # (N, d)
    "U": (1,),  # (M, d)
    "W": (0, 1),  # (d, d)
    "EW": (1,),  # (N, d)
    "WU": (0,),  # (d, M)
}


def padding_key(cfg: TrainConfig) -> Hashable | None:
    """Equal for runs that may share one zero-padded program (they differ only in d, seed and
    lr); None where padding is not used: off the batched path, or a kernel that does not pad
    exactly."""
    if not uses_batched_path(cfg.device) or not select_kernel(cfg).pads_exactly:
        return None
    return cfg.key_without("seed", "lr", "dim")


def pad(name: str, tensor: torch.Tensor, dim: int) -> torch.Tensor:
    """One run's tensor ``name`` (a key of :data:`DIM_AXES`) with zeros appended along its axes
    of d up to ``dim``; the tensor itself where it already has that size."""
    widths = [0, 0] * tensor.dim()
    for axis in DIM_AXES[name]:
        widths[2 * (tensor.dim() - 1 - axis) + 1] = dim - tensor.shape[axis]
    return F.pad(tensor, widths) if any(widths) else tensor


def unpad(name: str, tensor: torch.Tensor, dim: int) -> torch.Tensor:
    """One run's tensor ``name`` cut to its first ``dim`` coordinates along its axes of d (a
    view); tensors without such axes (``EWU``, ``q``) as they are."""
    for axis in DIM_AXES.get(name, ()):
        tensor = tensor.narrow(axis, 0, dim)
    return tensor

r"""The gradient of the cross-entropy in the logits, written once.

For logits ``s`` (…, M) and a target ``f*`` (or a label law :math:`L(\cdot |x)`), the mean-free
gradient of :math:`-\log \operatorname{softmax}(s)_{f^*}` is
:math:`\delta = \operatorname{softmax}(s) - \operatorname{onehot}(f^*)`
(:math:`\operatorname{softmax}(s) - L` for a law): every trainer's backward pass starts from it (the
training kernels, the memorisation of the capacity frontier, memories in parallel, the trained
hierarchy).
"""

import torch


def softmax_error(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    r"""The softmax error along the last axis, a new tensor:
    :math:`\delta = \operatorname{softmax}(\text{logits}) - \operatorname{onehot}(\text{targets})`.

    Parameters
    ----------
    logits : torch.Tensor, shape (..., M)
    targets : torch.Tensor
        int64 of shape broadcastable to ``logits.shape[:-1]`` (e.g. (N,) against (R, N, M)),
        or a floating label law broadcastable to ``logits`` (noisy labels):
        :math:`\delta = \operatorname{softmax} - L`.

    Returns
    -------
    torch.Tensor, shape (..., M)
        The target's entry is :math:`\operatorname{softmax} - 1` exactly as :math:`p + (-1)` (the
        same bits as :math:`p - 1`).
    """
    delta = torch.softmax(logits, dim=-1)
    if targets.is_floating_point():
        return delta.sub_(targets)
    index = targets.expand(logits.shape[:-1])[..., None]
    return delta.scatter_add_(-1, index, torch.full_like(delta[..., :1], -1.0))

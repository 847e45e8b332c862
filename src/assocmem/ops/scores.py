r"""The scores of a closed-form memory, :math:`u_y^\top W_q e_x`, without forming W (written once).

For :math:`W_q = \sum_x q(x) u_{f^*(x)} e_x^\top` (Eq. 16 of Cabannes et al. 2024; with label noise,
:math:`\sum_x q(x) \sum_y L(y|x) u_y e_x^\top`) the scores of every input are :math:`E (E^\top A) G`
with :math:`A = \operatorname{diag}(q) L` (N×M; L the one-hot matrix F of f* without noise) and
:math:`G = U U^\top` (M×M): O(N·d·M) work instead of the O(N·d²) of forming W (docs/architecture.md,
idea 1).

Every memory that scores this way calls :func:`memory_scores`; the association (which product
is taken first) is a parameter, because it changes the float rounding and each caller keeps the
one its records were made with. The closed-form samplers grow the same product block by block
over nested dimensions (``closed_form/samplers``) from the rows of :func:`stored_rows`.
"""

from collections.abc import Callable
from typing import Literal

import torch

Order = Literal["summary", "readout", "gram"]
Product = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]


def stored_rows(
    q: torch.Tensor, labels: torch.Tensor, out: torch.Tensor | None = None
) -> torch.Tensor:
    r""":math:`(\operatorname{diag}(q) L)^\top` for every column: q (..., K, N), label laws Lᵀ
    (K, M, N) → (..., K·M, N).

    Without label noise L is the one-hot matrix F of f*. ``out``: a contiguous (..., K·M, N)
    tensor to write them in.
    """
    shape = (*q.shape[:-1], *labels.shape[-2:])  # labels (K, M, N) match q's last K
    if out is None:  # row-major whatever the inputs' strides: flattening copies nothing
        dtype = torch.result_type(q, labels)
        out = q.new_empty((*shape[:-3], shape[-3] * shape[-2], shape[-1]), dtype=dtype)
    torch.mul(q.unsqueeze(-2), labels, out=out.view(shape))
    return out


def one_hot_weights(q: torch.Tensor, targets: torch.Tensor, n_outputs: int) -> torch.Tensor:
    r""":math:`A = \operatorname{diag}(q) F`: q(x) at column f*(x), (..., N, M), from q (..., N) and
    targets (N,).

    In q's dtype (F is exact in any float dtype)."""
    onehot = torch.nn.functional.one_hot(targets, n_outputs).to(q.dtype)  # (N, M)
    return q[..., None] * onehot


STORE_BLOCK = 2**12  # inputs per product of one_hot_memory: fixed (its rounding depends on it)


def one_hot_memory(
    keys: torch.Tensor,
    weights: torch.Tensor,
    outputs: torch.Tensor,
    targets: torch.Tensor,
    *,
    block: int = STORE_BLOCK,
) -> torch.Tensor:
    r"""The memory of each weighting, transposed: :math:`W^\top = \sum_x w(x) e_x u_{f^*(x)}^\top`
    (no label noise).

    :math:`E (E^\top \operatorname{diag}(w) F) G = E W^\top U^\top` with this d×d' matrix, so a
    memory's scores need neither the N×M weights nor the M×M Gram matrix (:mod:`assocmem.ops.top1`
    scores them in blocks). O(N·d·d') work; the sum over inputs runs over consecutive blocks of
    ``block`` inputs, a fixed size (never a memory budget's): the rounding depends on it.

    Parameters
    ----------
    keys : torch.Tensor, shape (d, N)
        The stored inputs' embeddings e_x, as columns.
    weights : torch.Tensor, shape (R, N)
        w(x) of each of R weightings (e.g. q(x), times any row scales of e_x and u_{f*(x)}).
    outputs : torch.Tensor, shape (d', M)
        The output embeddings u_y, as columns.
    targets : torch.Tensor, shape (N,), int64
        f*(x).

    Returns
    -------
    torch.Tensor, shape (R, d, d')
    """
    n = targets.shape[0]
    total = keys.new_zeros(weights.shape[0], keys.shape[0], outputs.shape[0])
    for start in range(0, n, block):
        stop = min(start + block, n)
        stored = outputs.index_select(1, targets[start:stop]).T  # (b, d'): u_{f*(x)}
        total += (keys[:, start:stop] * weights[:, None, start:stop]) @ stored
    return total


def memory_scores(
    inputs: torch.Tensor,
    weights: torch.Tensor,
    outputs: torch.Tensor,
    *,
    keys: torch.Tensor | None = None,
    order: Order = "summary",
    left: Literal["keys", "weights"] = "keys",
    product: Product = torch.matmul,
) -> torch.Tensor:
    r""":math:`u_y^\top W_k e_x` for every input x, weighting k and output y:
    :math:`E (K^\top A_k) G`.

    Parameters
    ----------
    inputs : torch.Tensor, shape (..., N, d)
        The embeddings E of the inputs scored (the queries).
    weights : torch.Tensor, shape (..., n, K, M)
        :math:`A_k = \operatorname{diag}(q_k) L` of each weighting k, on the rows of ``keys``.
    outputs : torch.Tensor, shape (..., M, d)
        The output embeddings U; :math:`G = U U^\top`.
    keys : torch.Tensor, shape (..., n, d), optional
        The embeddings of the stored rows (the rows of ``weights``); default ``inputs`` (n = N).
        Passing only the rows with :math:`q > 0` skips the others' zero terms.
    order : {"summary", "readout", "gram"}
        Which products come first (the float rounding differs, the value does not):
        ``"summary"``: :math:`(E (K^\top A)) G`, O(N·d·K·M + N·K·M²); ``"readout"``:
        :math:`E ((K^\top A) G)`, O(n·d·K·M + d·K·M² + N·d·K·M); ``"gram"``:
        :math:`(E K^\top)(A G)`, O(N·n·d + n·K·M² + N·n·K·M), for few tokens and many dimensions.
    left : {"keys", "weights"}
        The summary :math:`S = K^\top A` as that product (``"keys"``) or as :math:`(A^\top K)^\top`
        (``"weights"``): the same sums, rounded differently by BLAS at large d.
    product : callable
        How the weights' products are taken (default ``@``; the Gram matrices :math:`U U^\top` and
        :math:`E K^\top` always by ``@``): e.g. the training kernels' own, to reproduce their bits.

    Returns
    -------
    torch.Tensor, shape (..., N, K, M)
    """
    keys = inputs if keys is None else keys
    batch, n_stored, k, m = weights.shape[:-3], *weights.shape[-3:]
    n = inputs.shape[-2]
    gram = outputs @ outputs.transpose(-1, -2)  # G = U Uᵀ, (..., M, M)
    if order == "gram":
        readout = product(weights.reshape(*batch, n_stored * k, m), gram)  # A G
        scores = product(inputs @ keys.transpose(-1, -2), readout.view(*batch, n_stored, k * m))
        return scores.view(*batch, n, k, m)
    stored = weights.reshape(*batch, n_stored, k * m)
    if left == "keys":
        summary = product(keys.transpose(-1, -2), stored)  # S = Kᵀ A, (..., d, K·M)
    else:
        summary = product(stored.transpose(-1, -2), keys).transpose(-1, -2)
    if order == "readout":  # S G as one 2-D product where there are no batch axes
        dim = summary.shape[-2]
        summary = product(summary.view(*batch, dim, k, m), gram).flatten(-2)
        return product(inputs, summary).view(*batch, n, k, m)
    aggregated = product(inputs, summary)  # E S, (..., N, K·M)
    return product(aggregated.reshape(*batch, n * k, m), gram).view(*batch, n, k, m)


__all__ = ["STORE_BLOCK", "memory_scores", "one_hot_memory", "one_hot_weights", "stored_rows"]

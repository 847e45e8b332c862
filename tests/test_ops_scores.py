"""ops.memory_scores against the memory it stands for: W_q formed explicitly, every order."""

import pytest
import torch

from assocmem.ops.scores import memory_scores, one_hot_weights, stored_rows


def _explicit(inputs, weights, outputs):
    """u_yᵀ W_k e_x with ``W_k = Σ_x Σ_y A_k[x, y] u_y e_xᵀ`` formed: (N, K, M)."""
    memories = torch.einsum("nkm,md,ne->kde", weights, outputs, inputs)  # (K, d, d)
    return torch.einsum("kde,ne,md->nkm", memories, inputs, outputs)


@pytest.mark.parametrize("order", ["summary", "readout", "gram"])
@pytest.mark.parametrize("left", ["keys", "weights"])
def test_every_order_is_the_explicit_memory(order, left):
    gen = torch.Generator().manual_seed(0)
    n, m, d, k = 40, 6, 12, 3
    inputs = torch.randn(n, d, generator=gen, dtype=torch.float64)
    outputs = torch.randn(m, d, generator=gen, dtype=torch.float64)
    q = torch.rand(k, n, generator=gen, dtype=torch.float64)
    weights = one_hot_weights(q, torch.arange(n) % m, m).transpose(0, 1)  # (N, K, M)
    got = memory_scores(inputs, weights, outputs, order=order, left=left)
    torch.testing.assert_close(got, _explicit(inputs, weights, outputs), rtol=1e-10, atol=1e-10)


def test_stored_keys_and_batch_axes():
    """Only the stored rows as keys gives the same scores; a leading axis is a batch."""
    gen = torch.Generator().manual_seed(1)
    n, m, d = 30, 5, 8
    inputs = torch.randn(2, n, d, generator=gen, dtype=torch.float64)
    outputs = torch.randn(2, m, d, generator=gen, dtype=torch.float64)
    q = torch.rand(2, n, generator=gen, dtype=torch.float64)
    q[:, ::2] = 0
    weights = one_hot_weights(q, torch.arange(n) % m, m)[:, :, None]  # (2, N, 1, M)
    full = memory_scores(inputs, weights, outputs)
    stored = memory_scores(inputs, weights[:, 1::2], outputs, keys=inputs[:, 1::2])
    torch.testing.assert_close(stored, full, rtol=1e-12, atol=1e-12)
    for r in range(2):
        torch.testing.assert_close(full[r], _explicit(inputs[r], weights[r], outputs[r]))


def test_stored_rows_is_the_transposed_weighting():
    q = torch.rand(2, 7, dtype=torch.float64)
    labels = torch.nn.functional.one_hot(torch.arange(7) % 3, 3).T.to(torch.float64)  # (M, N)
    rows = stored_rows(q, labels[None].expand(2, -1, -1))  # (K·M, N)
    weights = one_hot_weights(q, torch.arange(7) % 3, 3)  # (K, N, M)
    assert torch.equal(rows, weights.transpose(1, 2).reshape(6, 7))

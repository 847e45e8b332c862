r"""Top-1 retrieval over many outputs, in blocks of inputs (written once).

With M outputs and N inputs, the N×M scores
:math:`\mathrm{features}(x) \cdot \mathrm{readout}[:, y]` are never held whole: a block of inputs at
a time is scored against every output and judged by the strict rule of
:func:`~assocmem.ops.population.wrong_tokens` (correct only when the target's score is the strict
unique maximum: ties and non-finite scores are errors). Memory: the readout (d×M) and O(block·M) for
the block's scores; work: O(N·d·M), the floor of any top-1 over M outputs.

Device-agnostic (CPU and CUDA tensors alike). A block's scores are one matrix product whose rows
do not depend on the other rows of the block, except that BLAS takes a one-row product through
its matrix–vector path, which rounds differently: :func:`row_blocks` never makes a one-row block
(where N ≥ 2), so the flags do not depend on the block size.
"""

from collections.abc import Callable

import torch

from assocmem.ops.population import wrong_tokens

Features = Callable[[int, int], torch.Tensor]  # (start, stop) -> (R, stop − start, d)


def row_blocks(n_rows: int, block: int) -> list[tuple[int, int]]:
    r"""``[start, stop)`` ranges of at most ``block`` rows covering ``range(n_rows)`` in order.

    Never a one-row range when :math:`n_{\mathrm{rows}} \ge 2`: a last range of one row starts a row
    earlier (it overlaps its predecessor by one row, whose flags are then computed twice,
    identically).
    """
    if block < 1:
        raise ValueError(f"row_blocks: block must be ≥ 1, got {block}")
    block = max(block, 2)
    ranges = [(start, min(start + block, n_rows)) for start in range(0, n_rows, block)]
    if n_rows >= 2 and ranges[-1][1] - ranges[-1][0] == 1:
        ranges[-1] = (n_rows - 2, n_rows)
    return ranges


def wrong_in_blocks(
    features: Features,
    readout: torch.Tensor,
    targets: torch.Tensor,
    *,
    block: int,
    column_scale: torch.Tensor | None = None,
) -> torch.Tensor:
    r"""Which inputs top-1 retrieval gets wrong, scoring ``block`` inputs at a time.

    The scores of inputs ``start:stop`` are ``features(start, stop) @ readout``, each column y
    then multiplied by ``column_scale[y]``; input x is wrong unless its target's score is the
    strict maximum of its row (:func:`~assocmem.ops.population.wrong_tokens`).

    Parameters
    ----------
    features : callable
        ``features(start, stop)``: the queries' features of inputs ``start:stop``, shape
        (R, stop − start, d), R runs (weightings, dims ...) scored against the same outputs.
    readout : torch.Tensor, shape (d, M)
        Column y maps features to the score of output y (e.g. the output embeddings :math:`U^\top`).
    targets : torch.Tensor, shape (N,), int64
        The correct output f*(x) of each input.
    block : int
        Inputs per block (at least 2 are taken); see :func:`bytes_per_row` for its memory.
    column_scale : torch.Tensor, shape (M,), optional
        A per-output factor on the scores (e.g. the output embeddings' norms).

    Returns
    -------
    torch.Tensor, shape (R, N), bool
    """
    n, m = targets.shape[0], readout.shape[1]
    out: torch.Tensor | None = None
    buffer: torch.Tensor | None = None  # the scores, reused: a fresh one costs its page faults
    for start, stop in row_blocks(n, block):
        queries = features(start, stop)  # (R, b, d)
        if buffer is None:
            size = queries.shape[0] * max(block, 2) * m
            buffer = readout.new_empty(size, dtype=torch.result_type(queries, readout))
        scores = buffer[: queries.shape[0] * (stop - start) * m].view(-1, stop - start, m)
        torch.matmul(queries, readout, out=scores)  # (R, b, M)
        if column_scale is not None:
            scores.mul_(column_scale)
        wrong = wrong_tokens(scores, targets[start:stop], overwrite=True)  # (R, b)
        if out is None:
            out = wrong.new_empty(wrong.shape[0], n)
        out[:, start:stop] = wrong
    assert out is not None, "wrong_in_blocks: no inputs"
    return out


def bytes_per_row(n_outputs: int, width: int, n_runs: int, itemsize: int) -> int:
    """Working memory of :func:`wrong_in_blocks` per input of a block: the scores (R·M values;
    :func:`~assocmem.ops.population.wrong_tokens` hides the targets in them, no copy), the
    features and the caller's temporaries making them (2·(R + 1)·d values), and the flags."""
    return itemsize * (n_runs * n_outputs + 2 * (n_runs + 1) * width) + 8 * n_runs


__all__ = ["Features", "bytes_per_row", "row_blocks", "wrong_in_blocks"]

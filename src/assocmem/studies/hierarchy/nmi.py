r"""Did the bottleneck find f₁? The normalised mutual information between the learned concepts ẑ
and f₁, weighted by p (invariant to relabelling the concepts; ≥ 0.9 counts as found), and the
null map f̃₁ that agrees with f₁ mod M, whose NMI is the reference ``nmi_null``
(:mod:`assocmem.studies.hierarchy.train`; see the docs: beyond/hierarchy.md)."""

import torch


def normalized_mutual_information(
    labels: torch.Tensor, reference: torch.Tensor, weights: torch.Tensor
) -> float:
    """NMI of two labellings of the tokens, each token weighted: :math:`2 I / (H(a) + H(b))`.

    labels, reference: (N,) int64 ≥ 0; weights: (N,) ≥ 0 (normalised here), e.g. p. Invariant
    to relabelling either side; 1 when both are constant. One run of :func:`nmi_of_runs`.
    """
    return float(nmi_of_runs(labels[None], reference[None], weights)[0])


def nmi_of_runs(
    labels: torch.Tensor, reference: torch.Tensor, weights: torch.Tensor
) -> torch.Tensor:
    """:func:`normalized_mutual_information` of R runs at once: labels, reference (R, N);
    weights (N,). Returns (R,) float64 (a fixed number of ops whatever R)."""
    runs = labels.shape[0]
    w = (weights.to(torch.float64) / weights.sum()).expand(runs, -1)
    size = (runs, int(labels.max()) + 1, int(reference.max()) + 1)
    joint = torch.zeros(size, dtype=torch.float64, device=labels.device)
    run = torch.arange(runs, device=labels.device)[:, None].expand_as(labels)
    joint.index_put_((run, labels, reference), w, accumulate=True)
    row, col = joint.sum(2), joint.sum(1)
    total = -(torch.xlogy(row, row).sum(1) + torch.xlogy(col, col).sum(1))  # H(a) + H(b)
    ratio = torch.where(joint > 0, joint / (row[:, :, None] * col[:, None, :]), 1.0)
    mutual = (joint * ratio.log()).sum((1, 2))
    return torch.where(total > 0, (2.0 * mutual / total).clamp(0.0, 1.0), 1.0)


def null_concept_map(targets: torch.Tensor, n_concepts: int, gen: torch.Generator) -> torch.Tensor:
    r"""A random map f̃₁ with :math:`\tilde{f}_1(x) \bmod M = y(x)`: the tokens of each output y
    dealt at random, in turn, to the concepts :math:`y, y + M, y + 2M, \dots` below K. targets (N,)
    in [0, M)."""
    n_outputs = int(targets.max()) + 1
    out = torch.empty_like(targets)
    for y in range(n_outputs):
        tokens = (targets == y).nonzero()[:, 0]
        concepts = torch.arange(y, n_concepts, n_outputs)
        order = tokens[torch.randperm(len(tokens), generator=gen)]
        out[order] = concepts[torch.arange(len(order)) % len(concepts)]
    return out

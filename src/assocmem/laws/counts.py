r"""Sample counts drawn directly as multinomial vectors: ``n_T(x)`` without the T samples.

The counts of T i.i.d. draws from p are ``Multinomial(T, p)``. Drawing that vector costs O(N)
whatever T is, where drawing and counting the samples costs O(T) time and memory (T = 10⁸ int64
tokens are 800 MB). Nested sample sizes :math:`T_1 < T_2 < \dots` are running sums of independent
increments, :math:`n_{T_2} = n_{T_1} + \operatorname{Multinomial}(T_2 - T_1, p)`, which is exactly
the joint law of the counts of the prefixes of one i.i.d. sequence (its disjoint blocks are
independent).

The multinomial is drawn as conditional binomials down a binary tree over the tokens: a node
holding c draws sends :math:`\operatorname{Binomial}(c, p_{\mathrm{left}} / p_{\mathrm{node}})` of
them to its left child and the rest to its right one. One ``torch.binomial`` call per level (about
log₂ N calls); its CPU kernel is serial in element order under the generator's lock, so the numbers
depend only on the generator's seed, never on the thread count. Labels under label noise are split
the same way, token by token, over the outputs in a fixed order (conditional binomials again).

Drawn on the CPU always (the counts are O(N); a CUDA binomial would give other numbers).
See the docs: beyond/vocabulary.md.
"""

from collections.abc import Callable, Sequence

import torch

from assocmem.config.checks import is_int
from assocmem.config.errors import ConfigError


class BinomialTree:
    """The binary tree of a law p for drawing ``Multinomial(n, p)`` count vectors.

    Parameters
    ----------
    probs : torch.Tensor of float, shape (N,)
        The law p (≥ 0, positive sum; renormalised here).

    Notes
    -----
    Level ``l`` has :math:`2^l` nodes (the leaves are p padded with zeros to a power of two);
    ``split[l]`` is each level-``l`` node's chance to send a draw left, 0 for an empty node.
    """

    def __init__(self, probs: torch.Tensor) -> None:
        p = probs.detach().to(device="cpu", dtype=torch.float64).flatten()
        if p.numel() < 1 or not torch.isfinite(p).all() or (p < 0).any() or p.sum() <= 0:
            raise ConfigError("probabilities", "must be finite, ≥ 0, with a positive sum")
        self.n_inputs = p.numel()
        width = 1 << max(0, (self.n_inputs - 1).bit_length())
        level = torch.zeros(width, dtype=torch.float64)
        level[: self.n_inputs] = p / p.sum()
        masses = [level]  # leaves first
        while masses[-1].numel() > 1:
            masses.append(masses[-1].view(-1, 2).sum(1))
        self.split: list[torch.Tensor] = []  # top level first: P(left | node)
        for parent, children in zip(masses[:0:-1], masses[-2::-1], strict=True):
            left = children[0::2]
            self.split.append(torch.where(parent > 0, left / parent, 0.0).clamp_(0.0, 1.0))

    def sample(self, n_draws: int, generator: torch.Generator) -> torch.Tensor:
        """One ``Multinomial(n_draws, p)`` count vector, shape (N,), float64 (exact integers)."""
        counts = torch.full((1,), float(n_draws), dtype=torch.float64)
        for split in self.split:
            left = torch.binomial(counts, split, generator=generator)
            counts = torch.stack([left, counts - left], dim=1).flatten()
        return counts[: self.n_inputs]


def check_total(n_draws: int) -> None:
    """A count total: an integer in [0, 2⁵³] (float64 counts stay exact)."""
    if not is_int(n_draws) or not 0 <= n_draws <= 2**53:
        raise ConfigError("n_samples", f"must be integers in [0, 2^53], got {n_draws!r}")


def multinomial_prefix_counts(
    probs: torch.Tensor, sizes: Sequence[int], generator: torch.Generator
) -> torch.Tensor:
    """Counts ``n_T(x)`` of the first T of one i.i.d. sequence from p, for each T in ``sizes``.

    The same law as :func:`assocmem.laws.tokens.prefix_counts` of
    :func:`~assocmem.laws.tokens.sample_tokens` (jointly over the sizes), in O(N) per size.

    Parameters
    ----------
    probs : torch.Tensor of float, shape (N,)
        The law p.
    sizes : sequence of int
        Non-decreasing sample sizes T ≥ 0.
    generator : torch.Generator
        A CPU generator; its increments are drawn in the order of ``sizes``.

    Returns
    -------
    torch.Tensor of float64, shape (len(sizes), N)
        Row r holds the counts of the first ``sizes[r]`` draws.
    """
    counts, _ = _running(BinomialTree(probs), sizes, generator, lambda delta: delta)
    return _stack(counts, (probs.numel(),))


def multinomial_prefix_label_counts(
    probs: torch.Tensor,
    label_law: torch.Tensor,
    sizes: Sequence[int],
    generator: torch.Generator,
    label_generator: torch.Generator,
) -> torch.Tensor:
    r"""Joint counts ``n_T(x, y)`` of the first T (token, label) pairs, for each T in ``sizes``.

    Tokens from p, and each token's label from ``label_law[x]`` independently (label noise):
    the increments of :math:`n(x, \cdot)` are
    :math:`\operatorname{Multinomial}(\Delta n(x), \mathrm{label\_law}[x])`, drawn as conditional
    binomials over the outputs :math:`0, 1, \dots, M-1` in that order.

    Parameters
    ----------
    probs : torch.Tensor of float, shape (N,)
        The law p.
    label_law : torch.Tensor of float, shape (N, M)
        ``L(y | x)``, rows summing to 1 (one-hot without label noise: no label draws then).
    sizes : sequence of int
        Non-decreasing sample sizes T ≥ 0.
    generator, label_generator : torch.Generator
        CPU generators of the token counts and of the labels.

    Returns
    -------
    torch.Tensor of float64, shape (len(sizes), M, N)
        Summed over y, the counts of :func:`multinomial_prefix_counts` (same generator).
    """
    law = label_law.detach().to(device="cpu", dtype=torch.float64)
    one_hot = bool(((law == 0) | (law == 1)).all())

    def split(delta: torch.Tensor) -> torch.Tensor:
        if one_hot:
            return law.T * delta  # (M, N): every draw of x has its one label
        return split_labels(delta, law, label_generator)

    _, joint = _running(BinomialTree(probs), sizes, generator, split)
    return _stack(joint, tuple(law.T.shape))


def split_labels(
    counts: torch.Tensor, label_law: torch.Tensor, generator: torch.Generator
) -> torch.Tensor:
    r"""Split each token's ``counts[x]`` draws over the outputs by ``label_law[x]``: (M, N).

    Conditional binomials over y = 0, 1, …, M−1:
    :math:`n_y \sim \operatorname{Binomial}(\mathrm{rest}, L_y / (1 - \sum_{y'<y} L_{y'}))`, the
    last output takes the rest.
    """
    n_outputs = label_law.shape[1]
    out = torch.empty(n_outputs, counts.numel(), dtype=torch.float64)
    rest, mass = counts.clone(), torch.ones_like(counts)
    for y in range(n_outputs - 1):
        share = torch.where(mass > 0, label_law[:, y] / mass, 0.0).clamp_(0.0, 1.0)
        out[y] = torch.binomial(rest, share, generator=generator)
        rest -= out[y]
        mass -= label_law[:, y]
    out[-1] = rest
    return out


def _running(
    tree: BinomialTree,
    sizes: Sequence[int],
    generator: torch.Generator,
    split: Callable[[torch.Tensor], torch.Tensor],
) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
    """Running token counts and running ``split`` of them, one per size; the increments are
    drawn in the order of ``sizes`` (each increment's tokens, then its split)."""
    for size in sizes:
        check_total(size)
    if list(sizes) != sorted(sizes):
        raise ConfigError("n_samples", f"sizes must be non-decreasing, got {list(sizes)}")
    counts: list[torch.Tensor] = []
    parts: list[torch.Tensor] = []
    previous = 0
    for size in sizes:
        delta = tree.sample(size - previous, generator)
        part = split(delta)
        counts.append(delta if not counts else counts[-1] + delta)
        parts.append(part if not parts else parts[-1] + part)
        previous = size
    return counts, parts


def _stack(rows: list[torch.Tensor], shape: tuple[int, ...]) -> torch.Tensor:
    return torch.stack(rows) if rows else torch.zeros(0, *shape, dtype=torch.float64)

"""Groups of similar tokens: a grouping g: [N] → [G] and the targets it shares, f* = h∘g.

Two groupings (docs: beyond/similar.md):

- ``random``: a seeded random balanced map (group sizes ⌊N/G⌋ or ⌈N/G⌉), independent of the
  frequencies: every group mixes frequent and rare tokens;
- ``banded``: contiguous bands of the frequency ranks (the ⌈N/G⌉ most frequent tokens form group
  0, and so on): the tokens of a group are about equally frequent.
"""

import torch

from assocmem.config.closed_form import GROUPINGS as GROUPINGS  # declared with the run
from assocmem.laws.tokens import random_targets


def token_groups(
    n_inputs: int,
    n_groups: int,
    grouping: str,
    probabilities: torch.Tensor,
    generator: torch.Generator,
) -> torch.Tensor:
    """The group g(x) ∈ [0, G) of every token, shape (N,), int64.

    Parameters
    ----------
    n_inputs : int
        N.
    n_groups : int
        G (1 ≤ G ≤ N).
    grouping : {"random", "banded"}
        A random balanced map, or bands of consecutive frequency ranks.
    probabilities : torch.Tensor, shape (N,)
        p: ranks for ``banded`` (ties: lower index first).
    generator : torch.Generator
        Randomness of ``random`` (not drawn from for ``banded``).

    Returns
    -------
    torch.Tensor, shape (N,)
        Every group holds ⌊N/G⌋ or ⌈N/G⌉ tokens.
    """
    if grouping == "random":
        return random_targets(n_inputs, n_groups, generator)
    if grouping != "banded":
        raise ValueError(f"token_groups: unknown grouping {grouping!r}")
    order = torch.sort(-probabilities.to(torch.float64), stable=True).indices
    groups = torch.empty(n_inputs, dtype=torch.int64)
    groups[order] = torch.arange(n_inputs) * n_groups // n_inputs
    return groups


def group_targets(groups: torch.Tensor, n_outputs: int) -> torch.Tensor:
    r"""Targets shared within each group, :math:`f^*(x) = h(g(x))` with :math:`h(k) = k \bmod M`,
    shape (N,)."""
    return groups % n_outputs

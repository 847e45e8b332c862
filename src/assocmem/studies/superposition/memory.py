r"""Associative memories in parallel: H heads, scores summed (docs: beyond/superposition.md).

Head h has its own input embeddings ``E_h`` (N×d_h, i.i.d. :math:`\mathcal{N}(0, 1/d_h)`), its own
output embeddings ``U_h`` (M×d_h, unit rows) and its own memory

.. math::

    W_h = \sum_x q_h(x)\, u^h_{f^*(x)} (e^h_x)^\top,

and the memory answers :math:`\operatorname{argmax}_y \sum_h (u^h_y)^\top W_h e^h_x`. How the
weights are spread over the heads is the *arrangement*:

- ``same``: every head stores the scheme q (:math:`q_h = q`): the heads superpose one memory;
- ``band``: token x is routed to one head by frequency band and only that head stores it
  (:math:`q_h = q \cdot \mathbb{1}\{\operatorname{route}(x) = h\}`): the stored tokens, ranked by q
  then by p, are cut into H contiguous bands of equal size (unstored tokens go round-robin: they are
  never retrieved);
- ``random``: the same with a random balanced routing (a uniform random permutation of the
  tokens dealt round-robin to the heads), drawn per trial and H;
- ``band-gated``, ``random-gated``: the same storage, but token x is *read* from its own head
  only (a gate, as a mixture of experts would route the query): the scores of the other heads
  are not added.

The scheme's d is the total width :math:`D = H\cdot d_h` (``threshold:P=d/8`` stores the D/8 most
frequent tokens), so every arrangement holds the same tokens as one memory of width D.

Like :mod:`assocmem.closed_form.kernel`, W is never formed: with
:math:`S_h = E_h^\top \operatorname{diag}(q_h) F` (d_h×M, F the one-hot targets) and
:math:`G_h = U_h U_h^\top` the scores of head h are ``(E_h S_h) G_h``, O(N·d_h·M) per weighting; the
population error is exact (:class:`~assocmem.ops.population.PopulationError`). Each head's
randomness is its own named stream of (seed, trial, head); coordinates are drawn at the largest d_h
a head needs and the first d_h are used at every smaller one (the law at each d_h is exact: Gaussian
rows scaled by :math:`1/\sqrt{d_h}`, output rows normalised at d_h), so a trial's numbers never
depend on which other layouts or trials are computed with it.
"""

import functools
from collections.abc import Sequence
from dataclasses import dataclass

import torch

from assocmem import rng
from assocmem.embeddings import standard_coordinates
from assocmem.ops.population import PopulationError, wrong_tokens
from assocmem.ops.scores import memory_scores, one_hot_weights
from assocmem.schemes import parse_scheme

ARRANGEMENTS = ("same", "band", "random", "band-gated", "random-gated")
ASSIGNMENTS = ("same", "band", "random")  # how the weights are spread: one column per head
GATED = {"band-gated": "band", "random-gated": "random"}  # read from the token's own head
STREAMS = ("superposition/inputs", "superposition/outputs", "superposition/route")


@dataclass(frozen=True)
class HeadsLayout:
    r"""H heads of dimension d_h.

    Attributes
    ----------
    heads : int
        H.
    head_dim : int
        d_h; the total width is :math:`H\cdot d_h` (:attr:`width`).
    """

    heads: int
    head_dim: int

    @property
    def width(self) -> int:
        return self.heads * self.head_dim


def scheme_weights(spec: str, probs: torch.Tensor, width: int) -> torch.Tensor:
    """q of a registered sample-free scheme at d = ``width`` (the total width), shape (N,)."""
    q: torch.Tensor = parse_scheme(spec).weights(probs[None], [width])[0, 0]
    return q


def band_route(q: torch.Tensor, probs: torch.Tensor, heads: int) -> torch.Tensor:
    """Frequency-band routing, (N,) int64: the stored tokens (q > 0), ranked by q then p (ties
    by index), cut into ``heads`` contiguous bands of equal size; unstored tokens round-robin."""
    by_p = torch.sort(probs, descending=True, stable=True).indices
    order = by_p[torch.sort(q[by_p], descending=True, stable=True).indices]
    rank = torch.empty_like(order)
    rank[order] = torch.arange(q.numel())
    stored = max(int((q > 0).sum()), 1)
    return torch.where(rank < stored, rank * heads // stored, rank % heads)


def random_route(n_inputs: int, heads: int, generator: torch.Generator) -> torch.Tensor:
    """A uniformly random balanced routing, (N,) int64: a random permutation dealt round-robin
    (each head gets ⌊N/H⌋ or ⌈N/H⌉ tokens)."""
    return torch.randperm(n_inputs, generator=generator) % heads


def trial_route(seed: int, trial: int, n_inputs: int, heads: int) -> torch.Tensor:
    """The random routing of one trial and H, from its own named stream."""
    return random_route(n_inputs, heads, rng.generator(seed, STREAMS[2], trial, heads))


def routes(
    q: torch.Tensor, probs: torch.Tensor, heads: int, seed: int, trial: int
) -> dict[str, torch.Tensor]:
    """The routing of each assignment, (N,) int64 (``same``: every token to head 0)."""
    n = q.numel()
    return {
        "same": torch.zeros(n, dtype=torch.int64),
        "band": band_route(q, probs, heads),
        "random": trial_route(seed, trial, n, heads),
    }


def head_weights(q: torch.Tensor, route: torch.Tensor, heads: int, assignment: str) -> torch.Tensor:
    """``q_h`` of every head, (H, N): q in every head (``same``), else q on the head's share."""
    if assignment == "same":
        return q.expand(heads, -1).clone()
    share = route[None, :] == torch.arange(heads)[:, None]
    return q[None, :] * share


def head_coordinates(
    seed: int, trial: int, head: int, n_rows: int, dim: int, stream: str, dtype: torch.dtype
) -> torch.Tensor:
    r"""Raw N(0, 1) coordinates of one head's embeddings, (dim, n_rows): the first d of them are
    the same for every :math:`\mathrm{dim} \ge d` (nested)."""
    gen = rng.generator(seed, stream, trial, head)
    return standard_coordinates(n_rows, dim, gen, dtype=dtype)


def head_embeddings(
    coords_in: torch.Tensor, coords_out: torch.Tensor, head_dim: int
) -> tuple[torch.Tensor, torch.Tensor]:
    r"""``E_h`` (N, d_h) with :math:`\mathcal{N}(0, 1/d_h)` entries and ``U_h`` (M, d_h) with unit
    rows, from a head's raw coordinates (d_max, N) and (d_max, M) cut at d_h."""
    inputs = (coords_in[:head_dim] * head_dim**-0.5).T.contiguous()
    outputs = coords_out[:head_dim].T
    return inputs, outputs / outputs.norm(dim=1, keepdim=True)


def head_scores(
    inputs: torch.Tensor, outputs: torch.Tensor, weights: torch.Tensor, targets: torch.Tensor
) -> torch.Tensor:
    r""":math:`\mathrm{scores}[x, k, y] = (u_y)^\top W_k e_x` for
    :math:`W_k = \sum_x \mathrm{weights}[k, x] u_{f^*(x)} e_x^\top`.

    inputs E (N, d), outputs U (M, d), weights (K, N), targets (N,); returns (N, K, M).
    """
    stored = one_hot_weights(weights.to(inputs.dtype), targets, outputs.shape[0])  # (K, N, M)
    return memory_scores(inputs, stored.transpose(0, 1), outputs)  # (E (Eᵀ A)) G


@dataclass(frozen=True)
class HeadsTrial:
    r"""One trial of :func:`superposition_errors`: what its layouts share.

    Attributes
    ----------
    probs : torch.Tensor, shape (N,)
        The law p (float64).
    targets : torch.Tensor of int64, shape (N,)
        f*(x).
    n_outputs : int
        M.
    schemes : tuple of str
        Sample-free scheme specs (``"population"``, ``"threshold:P=d/8"``); their d is the total
        width :math:`H\cdot d_h`.
    arrangements : tuple of str
        Among :data:`ARRANGEMENTS`.
    seed, trial : int
        The named streams of every head's embeddings (``superposition/inputs``,
        ``superposition/outputs``, keyed by trial and head) and of the random routing
        (``superposition/route``, keyed by trial and H).
    dtype : torch.dtype, default torch.float32
        The working precision.
    """

    probs: torch.Tensor  # (N,) float64
    targets: torch.Tensor  # (N,) int64
    n_outputs: int  # M
    schemes: tuple[str, ...]
    arrangements: tuple[str, ...]
    seed: int
    trial: int
    dtype: torch.dtype = torch.float32


def layout_logits(
    inputs: HeadsTrial, layout: HeadsLayout, coords: Sequence[tuple[torch.Tensor, torch.Tensor]]
) -> torch.Tensor:
    """The summed (or gated) scores of every (scheme, arrangement) of one layout, (S·A, N, M).

    coords: each head's raw (input, output) coordinates, at least ``head_dim`` of them.
    """
    heads, n = layout.heads, inputs.probs.numel()
    weights, masks = [], []  # per scheme: columns (same, band, random) of each head
    for spec in inputs.schemes:
        q = scheme_weights(spec, inputs.probs, layout.width)
        routed = routes(q, inputs.probs, heads, inputs.seed, inputs.trial)
        weights += [head_weights(q, routed[a], heads, a) for a in ASSIGNMENTS]
        masks += [routed[a][None, :] == torch.arange(heads)[:, None] for a in ASSIGNMENTS]
    per_head = torch.stack(weights, dim=1)  # (H, K, N), K = 3 S
    own = torch.stack(masks, dim=1)  # (H, K, N): token x is read from head h
    total = torch.zeros(n, per_head.shape[1], inputs.n_outputs, dtype=inputs.dtype)
    gated = torch.zeros_like(total)
    for h in range(heads):
        E, U = head_embeddings(*coords[h], layout.head_dim)
        scores = head_scores(E, U, per_head[h], inputs.targets)  # (N, K, M)
        total += scores
        gated += scores * own[h].T[:, :, None].to(scores.dtype)
    columns = []
    for s in range(len(inputs.schemes)):
        for arrangement in inputs.arrangements:
            source = gated if arrangement in GATED else total
            k = 3 * s + ASSIGNMENTS.index(GATED.get(arrangement, arrangement))
            columns.append(source[:, k])
    return torch.stack(columns)


def superposition_errors(
    inputs: HeadsTrial, layouts: Sequence[HeadsLayout]
) -> tuple[torch.Tensor, torch.Tensor]:
    """The exact population error (and its head part) of every layout × scheme × arrangement.

    Parameters
    ----------
    inputs : HeadsTrial
        The law p (N,), the targets f* (N,), M, the scheme specs (sample-free: ``population``,
        ``uniform``, ``threshold:P=…``), the arrangements (:data:`ARRANGEMENTS`), the seed and
        trial index (the named streams of every head's embeddings and of the random routing).
    layouts : sequence of HeadsLayout
        The (H, d_h) to evaluate; heads are drawn once, at the largest d_h each needs.

    Returns
    -------
    tuple of torch.Tensor
        The error and the head error (the ⌈N/10⌉ most probable tokens), float64, each of shape
        (len(layouts), len(schemes), len(arrangements)).

    Notes
    -----
    H memories of Cabannes et al. (2024) in parallel, scores summed; the docs:
    beyond/superposition.md.
    """
    n = inputs.probs.numel()
    n_heads = max((layout.heads for layout in layouts), default=0)
    coords = []
    for h in range(n_heads):
        top = max(layout.head_dim for layout in layouts if layout.heads > h)
        draw = functools.partial(head_coordinates, inputs.seed, inputs.trial, h)
        coords.append(
            (
                draw(n, top, STREAMS[0], inputs.dtype),
                draw(inputs.n_outputs, top, STREAMS[1], inputs.dtype),
            )
        )
    population = PopulationError(inputs.probs)
    shape = (len(layouts), len(inputs.schemes), len(inputs.arrangements))
    errors, head = torch.zeros(shape, dtype=torch.float64), torch.zeros(shape, dtype=torch.float64)
    for i, layout in enumerate(layouts):
        logits = layout_logits(inputs, layout, coords)  # (S·A, N, M)
        error, head_error = population(wrong_tokens(logits, inputs.targets))
        errors[i], head[i] = error.view(shape[1:]), head_error.view(shape[1:])
    return errors, head


def working_set_bytes(
    n_inputs: int,
    n_outputs: int,
    layouts: Sequence[HeadsLayout],
    n_columns: int,
    n_read: int | None = None,
) -> int:
    """About the bytes one trial holds (float32): every head's coordinates and a layout's
    tables of N × M scores: six per column (totals, gated, scores and their product, a head's
    stored and aggregated columns) and two per column read (``n_read``, default
    ``n_columns``: the stacked logits and the copy the argmax makes)."""
    n_heads = max((layout.heads for layout in layouts), default=0)
    coords = sum(
        max(layout.head_dim for layout in layouts if layout.heads > h) for h in range(n_heads)
    )
    widest = max((layout.head_dim for layout in layouts), default=0)
    n_read = n_columns if n_read is None else n_read
    tables = (6 * n_columns + 2 * n_read) * n_inputs * n_outputs
    floats = coords * (n_inputs + n_outputs) + tables
    return 4 * (floats + 2 * n_inputs * widest)

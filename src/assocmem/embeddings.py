r"""Random embeddings ``e_x`` (inputs) and ``u_y`` (outputs) in R^d (Cabannes et al. 2024; see the
docs: science/model.md).

Kinds:
- ``gaussian``: i.i.d. :math:`\mathcal{N}(0, 1/d)` entries;
- ``spherical``: Gaussian rows normalised to unit norm;
- ``orthogonal``: orthonormal rows (needs d ≥ number of rows);
- ``clustered`` (input embeddings of closed-form memories only; docs: beyond/similar.md):
  :math:`e_x = \sqrt{\rho}\cdot c_{g(x)} + \sqrt{1-\rho}\cdot \xi_x` with group centres c and token
  noises ξ i.i.d. like the Gaussian kind's entries, so tokens of one group g have correlation ρ:
  Gaussian rows, not independent ones.

Nested d: one draw at the largest d, the first d coordinates for smaller d (common random
numbers across d). Two conventions for the scale at a smaller d:
- ``truncate`` (the paper's notebooks): scale fixed at d_max, so spherical rows are no longer
  unit norm at d < d_max;
- ``renormalize``: rescale at every d (variance 1/d, or unit rows) — the correct law at each d.
"""

from collections.abc import Sequence

import torch

from assocmem.config.closed_form import NESTED_CONVENTIONS as NESTED_CONVENTIONS  # declared there
from assocmem.config.errors import ConfigError, unknown_name
from assocmem.config.problem import EMBEDDING_KINDS as EMBEDDING_KINDS  # declared with the problem
from assocmem.config.problem import INPUT_EMBEDDING_KINDS as INPUT_EMBEDDING_KINDS

# Whether a kind's rows have i.i.d. N(0, σ²) entries (σ fixed at each d). Only then is the
# exact-in-law closed-form sampler exact: spherical rows are normalised, orthogonal rows
# constrained, so their entries are not independent. A new kind (named in config/problem.py)
# states its law here.
IID_GAUSSIAN: dict[str, bool] = {
    "gaussian": True,
    "spherical": False,
    "orthogonal": False,
    "clustered": False,  # Gaussian, but tokens of one group are correlated
}
CLUSTERED = INPUT_EMBEDDING_KINDS[-1]  # "clustered"
DRAW_BLOCK = 16  # coordinates drawn per call, so the first d coordinates never depend on d_max


def check_kind(field: str, kind: str, allowed: Sequence[str] = EMBEDDING_KINDS) -> None:
    if kind not in allowed:
        raise unknown_name(field, "embedding kind", kind, allowed)


def is_iid_gaussian(kind: str) -> bool:
    """True when embeddings of ``kind`` have i.i.d. Gaussian entries (see :data:`IID_GAUSSIAN`).

    The scale may depend on d (``truncate`` or ``renormalize``): a positive constant per d
    changes no argmax, so both conventions keep the entries i.i.d. Gaussian at every d.
    """
    return IID_GAUSSIAN.get(kind, False)


def standard_coordinates(
    n_rows: int,
    dim: int,
    generator: torch.Generator,
    *,
    device: torch.device | str = "cpu",
    dtype: torch.dtype = torch.float32,
) -> torch.Tensor:
    r"""Raw N(0, 1) draws, transposed: shape (dim, n_rows); row k is coordinate k of every row.

    Coordinates are drawn in blocks of :data:`DRAW_BLOCK`, so the first d rows are identical for
    every :math:`\mathrm{dim} \ge d`: this is what makes nested d share random numbers. On CPU the
    blocks are one call: torch's CPU generator fills uniforms in order and turns them into normals
    16 at a time, so whole blocks (16·n_rows numbers each) drawn at once are the numbers drawn block
    by block (a test pins this); a CUDA generator advances by call, so there each block is a call.
    """
    n_blocks = -(-dim // DRAW_BLOCK)
    if torch.device(device).type == "cpu":
        shape = (n_blocks * DRAW_BLOCK, n_rows)
        return torch.randn(shape, generator=generator, device=device, dtype=dtype)[:dim]
    out = torch.empty(n_blocks * DRAW_BLOCK, n_rows, device=device, dtype=dtype)
    for block in range(n_blocks):
        rows = slice(block * DRAW_BLOCK, (block + 1) * DRAW_BLOCK)
        torch.randn(DRAW_BLOCK, n_rows, generator=generator, out=out[rows])
    return out[:dim]


def nested_row_scales(
    coords: torch.Tensor, dims: Sequence[int], kind: str, nested: str
) -> torch.Tensor:
    """Per-row scale turning raw coordinates into embeddings at each nested d.

    coords: (d_max, n_rows) raw N(0, 1) draws. Returns (len(dims), n_rows): the embedding of row
    x at dimension d is ``scale[i, x] * coords[:d, x]`` for ``d = dims[i]``.
    """
    d_max = coords.shape[0]
    n_rows = coords.shape[1]
    if kind in ("gaussian", CLUSTERED):  # clustered rows: unit-variance Gaussian entries too
        ref = [d_max if nested == "truncate" else d for d in dims]
        values = torch.tensor([r**-0.5 for r in ref], device=coords.device, dtype=coords.dtype)
        return values[:, None].expand(len(dims), n_rows).clone()
    if kind == "spherical":
        if nested == "truncate":
            norms = coords.norm(dim=0)
            return torch.reciprocal(norms).expand(len(dims), n_rows).clone()
        sq = coords.square().cumsum(0)
        index = torch.as_tensor([d - 1 for d in dims], device=coords.device)
        return sq.index_select(0, index).rsqrt()
    raise ValueError(f"nested_row_scales: kind {kind!r} has no nested form")


def orthogonal_rows(
    n_rows: int,
    dim: int,
    generator: torch.Generator,
    *,
    device: torch.device | str = "cpu",
    dtype: torch.dtype = torch.float32,
) -> torch.Tensor:
    """``n_rows`` random orthonormal vectors in R^dim, shape (n_rows, dim). Needs dim ≥ n_rows."""
    if dim < n_rows:
        raise ConfigError("dims", f"orthogonal embeddings need d ≥ {n_rows}, got d = {dim}")
    gauss = torch.randn(dim, n_rows, generator=generator, device=device, dtype=torch.float64)
    q, r = torch.linalg.qr(gauss)
    haar: torch.Tensor = q * torch.sign(torch.diagonal(r))  # fix the sign ambiguity of QR
    return haar.T.to(dtype)


def draw_embeddings(
    kind: str,
    n_rows: int,
    dim: int,
    generator: torch.Generator,
    *,
    device: torch.device | str = "cpu",
    dtype: torch.dtype = torch.float32,
) -> torch.Tensor:
    r"""Random embeddings of one kind at one dimension.

    Parameters
    ----------
    kind : {"gaussian", "spherical", "orthogonal"}
        i.i.d. :math:`\mathcal{N}(0, 1/d)` entries; Gaussian rows normalised to unit norm;
        orthonormal rows (needs :math:`\mathrm{dim} \ge n_{\mathrm{rows}}`).
    n_rows : int
        N (input embeddings e_x) or M (output embeddings u_y).
    dim : int
        d.
    generator : torch.Generator
        The source of randomness (explicit: no global seed is read).
    device : torch.device or str, default "cpu"
    dtype : torch.dtype, default torch.float32

    Returns
    -------
    torch.Tensor, shape (n_rows, dim)
        One embedding per row.

    Raises
    ------
    ConfigError
        For an unknown kind, or orthogonal rows with ``dim < n_rows``.

    Notes
    -----
    The embeddings of Cabannes et al. (2024); see the docs: science/model.md.
    """
    check_kind("embedding", kind)
    if kind == "orthogonal":
        return orthogonal_rows(n_rows, dim, generator, device=device, dtype=dtype)
    coords = standard_coordinates(n_rows, dim, generator, device=device, dtype=dtype)
    scale = nested_row_scales(coords, [dim], kind, "renormalize")[0]
    return (coords * scale).T.contiguous()


def clustered_coordinates(
    noise: torch.Tensor, centres: torch.Tensor, groups: torch.Tensor, similarity: float
) -> torch.Tensor:
    r"""Raw coordinates of clustered embeddings:
    :math:`\sqrt{\rho}\cdot c_{g(x)} + \sqrt{1-\rho}\cdot \xi_x`, shape (D, N).

    Parameters
    ----------
    noise : torch.Tensor, shape (D, N)
        ξ: the tokens' own N(0, 1) coordinates (:func:`standard_coordinates` of N rows).
    centres : torch.Tensor, shape (D, G)
        c: the groups' N(0, 1) coordinates (:func:`standard_coordinates` of G rows).
    groups : torch.Tensor, shape (N,), int64
        g(x) ∈ [0, G): the group of each token.
    similarity : float
        ρ ∈ [0, 1]: the correlation of two tokens of one group, coordinate by coordinate.

    Returns
    -------
    torch.Tensor, shape (D, N)
        Unit-variance Gaussian coordinates with
        :math:`\mathbb{E}[z_x z_{x'}] = \rho \cdot \mathbb{1}\{g(x) = g(x')\}` for x ≠ x'; scaled
        like Gaussian rows (:func:`nested_row_scales`, kind ``"clustered"``) they are the
        embeddings. With ρ = 0 they are ``noise`` itself (the Gaussian kind's numbers).

    Notes
    -----
    Similar tokens beyond Cabannes et al. (2024); see the docs: beyond/similar.md.
    """
    if similarity == 0:
        return noise
    mixed = centres.index_select(1, groups.to(centres.device)).mul_(similarity**0.5)
    return mixed.add_(noise, alpha=(1.0 - similarity) ** 0.5)

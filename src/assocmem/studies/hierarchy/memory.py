r"""Two associative memories in series, in closed form: x → z = f₁(x) ∈ [K] → y = f₂(z) ∈ [M].

Beyond Cabannes et al. (2024), whose authors ask how memories compose; see the docs:
beyond/hierarchy.md. Conventions (every vector drawn per trial from its own named stream):

- **memory 1** (d₁×d₁): inputs :math:`e_x \in \mathbb{R}^{d_1}` (Gaussian,
  :math:`\mathcal{N}(0, I/d_1)`), outputs the *concept output embeddings*
  :math:`c_z \in \mathbb{R}^{d_1}` (unit rows); :math:`W_1 = \sum_x q_1(x) c_{f_1(x)} e_x^\top` with
  q₁ a registered scheme applied to p (or to the sample counts n(x) for finite T);
- **memory 2** (d₂×d₂): inputs the *concept input embeddings* :math:`c'_z \in \mathbb{R}^{d_2}`
  (Gaussian), outputs :math:`u_y \in \mathbb{R}^{d_2}` (unit rows);
  :math:`W_2 = \sum_z q_2(z)\, u_{f_2(z)} {c'_z}^\top`, q₂ a scheme applied to the concept law
  :math:`p_2 = p \circ f_1^{-1}` (or the concept counts :math:`n_2(z) = \sum_{f_1(x)=z} n(x)`);
- **hard composition**: :math:`\hat{z} (x) = \operatorname{argmax}_z c_z^\top W_1 e_x` (the strict
  maximum; a tie feeds no concept and counts as an error), then
  :math:`\operatorname{argmax}_y u_y^\top W_2 c'_{\hat{z}}`;
- **soft composition**: memory 1's output vector :math:`W_1 e_x` itself feeds memory 2, so its noise
  propagates. This needs memory 2 to read the space of memory 1's outputs: its inputs are then
  the concept *output* embeddings c_z (:math:`W_2^s = \sum_z q_2(z) u_{f_2(z)} c_z^\top`, d₂ = d₁);
- **direct memory** (d×d): :math:`x \to f_2(f_1(x))` with its own embeddings, the paper's memory.

The memories are compared at equal matrix parameters (:math:`d_1 = d_2 = h` with
:math:`2h^2 \le d^2`, the largest such h) and at equal parameters counting the embeddings
(:math:`2h^2 + (N + 2K + M)h \le d^2 + (N + M)d`). Every scheme of ``schemes`` is run for memory 1
and for the direct memory (so each can be given its best threshold); memory 2 uses
``concept_scheme``.

Never forms W: scores come from :math:`E (E^\top \operatorname{diag}(q) F) G` (G the Gram of the
output embeddings), O(N·d·K) per scheme. The population errors are exact p-weighted sums
(:class:`assocmem.ops.population.PopulationError`), so the decomposition of the hard error,
:math:`E_{\mathrm{hard}} = E_1 + E_2 - B - L` (B: both memories wrong; L: a wrong concept that still
gives the right output), holds to rounding (≤ 1e-15).
"""

import math
from dataclasses import dataclass
from functools import cached_property

import torch

from assocmem import rng
from assocmem.config.checks import int_at_least, positive_number
from assocmem.config.errors import ConfigError
from assocmem.config.memory import DEFAULT_MEMORY_GB, check_budget, check_memory_gb
from assocmem.config.problem import document_problem, problem_field
from assocmem.embeddings import standard_coordinates
from assocmem.laws.tokens import random_targets, sample_tokens, zipf_probabilities
from assocmem.ops.scores import memory_scores, one_hot_weights
from assocmem.schemes import Scheme, parse_scheme

CONCEPT_MAPS = ("balanced", "banded")
PARITIES = ("matrix", "embeddings")
DTYPES = {"float32": torch.float32, "float64": torch.float64}
THRESHOLDS = (
    "threshold:P=d/16",
    "threshold:P=d/8",
    "threshold:P=d/4",
    "threshold:P=d/2",
    "threshold:P=d",
)
# The named random streams of one trial (a naive implementation draws the same vectors).
STREAMS = {
    "concept_map": "hierarchy_concept_map",  # f₁ (balanced maps only)
    "data": "data",  # the T samples (finite T only)
    "inputs": "hierarchy_inputs",  # e_x, memory 1
    "concepts": "hierarchy_concepts",  # c_z, memory 1's outputs (and soft memory 2's inputs)
    "concept_inputs": "hierarchy_concept_inputs",  # c'_z, hard memory 2's inputs
    "outputs": "hierarchy_outputs",  # u_y, memory 2
    "direct_inputs": "direct_inputs",  # e_x, direct memory
    "direct_outputs": "direct_outputs",  # u_y, direct memory
}


@document_problem()
@dataclass(frozen=True)
class HierarchyConfig:
    r"""One hierarchy problem: the law, the concept map, the dimensions and the schemes.

    The Parameters begin with the problem fields ``n_inputs``, ``n_outputs`` and ``alpha``,
    documented once by :class:`~assocmem.config.problem.Problem`.

    Parameters
    ----------
    n_concepts : int, default 20
        K, the number of concepts, with :math:`2 \le M \le K \le N`.
    concept_map : {"balanced", "banded"}, default "balanced"
        f₁: a random balanced map (a random permutation of :math:`x \bmod K`: N/K tokens per
        concept, drawn per trial), or frequency bands (concept z holds the tokens of ranks
        :math:`[zN/K, (z+1)N/K)`: the most frequent tokens share concept 0).
    dims : tuple of int, default (16, 32, 64, 128, 256, 512)
        The direct memory's d; the hierarchy's d₁ = d₂ = h follows from each parity.
    schemes : tuple of str, default: thresholds at P = d/16, d/8, d/4, d/2, d
        The schemes q run for memory 1 and for the direct memory (``assocmem.schemes``).
    concept_scheme : str, default "threshold:P=d/8"
        Memory 2's scheme, on the concept law p₂ (or the concept counts).
    n_samples : int, optional
        T: schemes see the counts of T samples; None for the population law (T = ∞).
    seed : int, default 0
    device : str, default "cpu"
    dtype : {"float32", "float64"}, default "float32"
    memory_gb : float, default 4.0
        A trial whose working set would exceed this is refused up front.

    Raises
    ------
    ConfigError
        Naming the first invalid field and what it allows.
    """

    n_inputs: int = problem_field("n_inputs")
    n_concepts: int = 20
    n_outputs: int = problem_field("n_outputs")
    alpha: float = problem_field("alpha")
    concept_map: str = "balanced"
    dims: tuple[int, ...] = (16, 32, 64, 128, 256, 512)
    schemes: tuple[str, ...] = THRESHOLDS
    concept_scheme: str = "threshold:P=d/8"
    n_samples: int | None = None
    seed: int = 0
    device: str = "cpu"
    dtype: str = "float32"
    memory_gb: float = DEFAULT_MEMORY_GB

    def __post_init__(self) -> None:
        n = int_at_least("n_inputs", self.n_inputs, 2)
        int_at_least("n_outputs", self.n_outputs, 2)
        if int_at_least("n_concepts", self.n_concepts, self.n_outputs) > n:
            raise ConfigError("n_concepts", f"must be ≤ n_inputs = {n}, got {self.n_concepts}")
        positive_number("alpha", self.alpha)
        if self.concept_map not in CONCEPT_MAPS:
            raise ConfigError("concept_map", f"{self.concept_map!r}; allowed: {CONCEPT_MAPS}")
        if not isinstance(self.dims, tuple | list) or not self.dims:
            raise ConfigError("dims", f"must be a non-empty list of integers, got {self.dims!r}")
        dims = tuple(int_at_least("dims", d, 2) for d in self.dims)
        if list(dims) != sorted(set(dims)):
            raise ConfigError("dims", f"must be increasing, got {list(dims)}")
        if not isinstance(self.schemes, tuple | list) or not self.schemes:
            raise ConfigError("schemes", "must be a non-empty list of scheme specs")
        for name, texts in (("schemes", self.schemes), ("concept_scheme", [self.concept_scheme])):
            if not all(isinstance(text, str) for text in texts):
                raise ConfigError(name, f"must be scheme specs (strings), got {texts!r}")
        parsed = tuple(parse_scheme(text) for text in self.schemes)
        for scheme in parsed:
            scheme.validate(n)
        concept_scheme = parse_scheme(self.concept_scheme)
        concept_scheme.validate(self.n_concepts)
        if self.n_samples is not None:
            int_at_least("n_samples", self.n_samples, 1)
        if self.dtype not in DTYPES:
            raise ConfigError("dtype", f"{self.dtype!r}; allowed: {', '.join(DTYPES)}")
        int_at_least("seed", self.seed, 0)
        if self.device not in ("cpu", "cuda"):
            raise ConfigError("device", f"must be cpu or cuda, got {self.device!r}")
        check_memory_gb(self.memory_gb)
        object.__setattr__(self, "dims", dims)
        object.__setattr__(self, "schemes", tuple(s.spec for s in parsed))
        object.__setattr__(self, "concept_scheme", concept_scheme.spec)
        check_budget(
            self.working_set_bytes(),
            self.memory_gb,
            f"a hierarchy trial at d = {max(dims)}",
            "lower dims, n_concepts or the number of schemes",
        )

    @cached_property
    def parsed(self) -> tuple[Scheme, ...]:
        """The schemes of ``schemes``, parsed (memory 1 and the direct memory)."""
        return tuple(parse_scheme(text) for text in self.schemes)

    def hidden_dims(self, parity: str) -> tuple[int, ...]:
        """The hierarchy's d₁ = d₂ = h for each d of ``dims`` at ``parity`` (see
        :func:`hierarchy_dim`)."""
        return tuple(
            hierarchy_dim(d, parity, self.n_inputs, self.n_concepts, self.n_outputs)
            for d in self.dims
        )

    def working_set_bytes(self) -> float:
        """About the peak memory of one trial: embeddings at the largest dims and the scores."""
        h_max = max(max(self.hidden_dims(p)) for p in PARITIES)
        n, k, m, s = self.n_inputs, self.n_concepts, self.n_outputs, len(self.schemes)
        items = 2 * (n + 2 * k + m) * h_max + 2 * (n + m) * max(self.dims) + 4 * s * n * (k + m)
        return float(items * (8 if self.dtype == "float64" else 4) + 16 * n * s)


def parameter_count(dim: int, n_inputs: int, n_outputs: int) -> tuple[int, int]:
    r"""The direct memory's parameters: :math:`(d^2, d^2 + (N + M)\cdot d)` (matrix; with
    embeddings)."""
    return dim * dim, dim * dim + (n_inputs + n_outputs) * dim


def hierarchy_parameter_count(
    hidden: int, n_inputs: int, n_concepts: int, n_outputs: int
) -> tuple[int, int]:
    r"""The hierarchy's parameters at d₁ = d₂ = h: :math:`(2h^2, 2h^2 + (N + 2K + M)\cdot h)`.

    The embeddings counted: e_x and c_z (memory 1, d₁ each), c'_z and u_y (memory 2, d₂ each);
    the soft composition reads c_z in place of c'_z and so has :math:`K\cdot h` fewer.
    """
    matrices = 2 * hidden * hidden
    return matrices, matrices + (n_inputs + 2 * n_concepts + n_outputs) * hidden


def hierarchy_dim(dim: int, parity: str, n_inputs: int, n_concepts: int, n_outputs: int) -> int:
    r"""The largest h (≥ 1) whose hierarchy has no more parameters than a direct memory of d.

    Parameters
    ----------
    dim : int
        The direct memory's d.
    parity : {"matrix", "embeddings"}
        Count the matrices only (:math:`2h^2 \le d^2`, so h = ⌊d/√2⌋), or the embeddings too
        (:func:`hierarchy_parameter_count` against :func:`parameter_count`).
    n_inputs, n_concepts, n_outputs : int
        N, K and M.

    Returns
    -------
    int
    """
    if parity not in PARITIES:
        raise ConfigError("parity", f"{parity!r}; allowed: {', '.join(PARITIES)}")
    index = 0 if parity == "matrix" else 1
    budget = parameter_count(dim, n_inputs, n_outputs)[index]
    b = 0 if index == 0 else n_inputs + 2 * n_concepts + n_outputs
    hidden = int((-b + math.sqrt(b * b + 8 * budget)) / 4)  # root of 2h² + bh = budget
    while hierarchy_parameter_count(hidden + 1, n_inputs, n_concepts, n_outputs)[index] <= budget:
        hidden += 1  # floating-point rounding of the root
    while hidden > 1 and (
        hierarchy_parameter_count(hidden, n_inputs, n_concepts, n_outputs)[index] > budget
    ):
        hidden -= 1
    return max(hidden, 1)


def concept_map(cfg: HierarchyConfig, trial: int) -> torch.Tensor:
    """f₁ of one trial of ``cfg``, (N,) int64 in [0, K): see :func:`draw_concept_map`."""
    return draw_concept_map(cfg.concept_map, cfg.n_inputs, cfg.n_concepts, cfg.seed, trial)


def draw_concept_map(
    kind: str, n_inputs: int, n_concepts: int, seed: int = 0, trial: int = 0
) -> torch.Tensor:
    r"""A concept map f₁: [N] → [K], (N,) int64.

    ``balanced``: a random permutation of :math:`x \bmod K` (⌊N/K⌋ or ⌈N/K⌉ tokens per concept),
    from the stream ``hierarchy_concept_map`` of (seed, trial); ``banded``: frequency bands, token
    of rank x (Zipf: token x) in concept :math:`\lfloor xK/N \rfloor`, the same for every trial.
    """
    if kind not in CONCEPT_MAPS:
        raise ConfigError("concept_map", f"{kind!r}; allowed: {', '.join(CONCEPT_MAPS)}")
    if kind == "banded":
        return torch.arange(n_inputs) * n_concepts // n_inputs
    gen = rng.generator(seed, STREAMS["concept_map"], trial)
    return random_targets(n_inputs, n_concepts, gen)


def token_frequencies(cfg: HierarchyConfig, trial: int) -> torch.Tensor:
    """What the schemes see, (N,) float64: p, or the counts n(x) of the trial's T samples."""
    probs = zipf_probabilities(cfg.n_inputs, cfg.alpha)
    if cfg.n_samples is None:
        return probs
    tokens = sample_tokens(probs, cfg.n_samples, rng.generator(cfg.seed, STREAMS["data"], trial))
    return torch.bincount(tokens, minlength=cfg.n_inputs).to(torch.float64)


def concept_law(freq: torch.Tensor, f1: torch.Tensor, n_concepts: int) -> torch.Tensor:
    r"""p pushed through f₁ (or counts summed per concept): :math:`p_2(z) = \sum_{f_1(x)=z} p(x)`,
    (K,)."""
    return torch.zeros(n_concepts, dtype=freq.dtype).index_add_(0, f1, freq)


def draw_coordinates(cfg: HierarchyConfig, trial: int) -> dict[str, torch.Tensor]:
    r"""The raw N(0, 1) coordinates of one trial's embeddings, (d_max, rows) each, by stream key.

    Row x of an embedding at dimension d is coordinates ``[:d, x]`` scaled (Gaussian:
    :math:`1/\sqrt{d}`; unit rows: normalised), so every d of a trial shares one draw (nested d).
    """
    h_max = max(max(cfg.hidden_dims(p)) for p in PARITIES)
    rows = {
        "inputs": (cfg.n_inputs, h_max),
        "concepts": (cfg.n_concepts, h_max),
        "concept_inputs": (cfg.n_concepts, h_max),
        "outputs": (cfg.n_outputs, h_max),
        "direct_inputs": (cfg.n_inputs, max(cfg.dims)),
        "direct_outputs": (cfg.n_outputs, max(cfg.dims)),
    }
    dtype = DTYPES[cfg.dtype]
    return {
        key: standard_coordinates(
            n,
            d,
            rng.generator(cfg.seed, STREAMS[key], trial, device=cfg.device),
            device=cfg.device,
            dtype=dtype,
        )
        for key, (n, d) in rows.items()
    }


def embedding_at(coords: torch.Tensor, dim: int, unit: bool) -> torch.Tensor:
    r"""Rows at dimension d from raw coordinates (d_max, rows): (rows, d), Gaussian
    :math:`\mathcal{N}(0, I/d)` or unit rows (each normalised at d)."""
    rows = coords[:dim].T
    scale = rows.norm(dim=1, keepdim=True) if unit else math.sqrt(dim)
    out: torch.Tensor = rows / scale
    return out


def scheme_scores(
    inputs: torch.Tensor, outputs: torch.Tensor, targets: torch.Tensor, weights: torch.Tensor
) -> torch.Tensor:
    r""":math:`u_y^\top W_q e_x` for every weighting, without forming W: (S, N, M).

    inputs (N, d), outputs (M, d), targets (N,), weights (S, N). Only the stored tokens
    (:math:`q > 0` in some weighting) enter :math:`S = E^\top \operatorname{diag}(q) F`.
    """
    stored = (weights > 0).any(0).nonzero()[:, 0]
    rows = one_hot_weights(weights[:, stored].to(inputs.dtype), targets[stored], len(outputs))
    # Two-dimensional products (a broadcast matmul would copy the inputs S times).
    scores = memory_scores(
        inputs, rows.transpose(0, 1), outputs, keys=inputs[stored], order="readout"
    )  # (N, S, M)
    return scores.transpose(0, 1)  # (S, N, M)

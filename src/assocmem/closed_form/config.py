"""The closed-form experiment's configuration: a frozen, validated dataclass (TOML or flags)."""

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from functools import cached_property
from typing import Any

import torch

from assocmem.closed_form import cost
from assocmem.closed_form.values import expand_log_ranges, parse_int, parse_sample_size
from assocmem.config.checks import int_at_least, is_int
from assocmem.config.closed_form import COUNTS, DTYPE_NAMES, LABEL_RULES, run_field
from assocmem.config.errors import ConfigError, unknown_name
from assocmem.config.problem import TARGETS, Problem, document_problem, value_type
from assocmem.embeddings import CLUSTERED, INPUT_EMBEDDING_KINDS, NESTED_CONVENTIONS, check_kind
from assocmem.laws import check_label_noise, check_token_alpha, check_words
from assocmem.laws.groups import GROUPINGS
from assocmem.runtime import check_device
from assocmem.schemes import Scheme, parse_scheme

DTYPES: dict[str, torch.dtype] = {name: getattr(torch, name) for name in DTYPE_NAMES}
BYTES = cost.BYTES


@document_problem()
@dataclass(frozen=True)
class ClosedFormConfig(Problem):
    r"""A closed-form memory experiment: every (scheme, d, T) for ``trials`` independent draws.

    Frozen and validated on construction. The memories are
    :math:`W_q = \sum_x q(x)\, u_{f^*(x)} e_x^\top`, one per scheme q, dimension d and sample size
    T, scored by their exact population error.

    The Parameters begin with the problem fields, ``n_inputs`` to ``output_embedding`` (what is
    memorised), documented once by :class:`~assocmem.config.problem.Problem` (and listed here
    from there by :func:`~assocmem.config.problem.document_problem`); the experiment's own
    fields follow.

    Parameters
    ----------
    nested : {"truncate", "renormalize"}, default "truncate"
        Nested d: drawn once at the largest d and truncated (the paper's convention), or rescaled
        at every d.
    schemes : tuple of str, default ("uniform", "population", "threshold:P=d/8")
        Scheme specs (:func:`parse_scheme`; names in :func:`scheme_names`).
    dims : tuple of int, default (10, 20, 50, 100, 200, 500, 1000)
        The memory dimensions d.
    n_samples : tuple of (int or None), default (None,)
        The sample sizes T; None is infinite data (schemes see p itself), also accepted as
        ``float("inf")`` or ``"inf"`` as on the command line (stored as None).
    trials : int, default 10
        Independent draws of embeddings (and samples).
    seed : int, default 0
        Trial t's randomness depends only on (seed, t, stream), never on the other trials.
    device : str, default "cpu"
        A torch device (``"cuda"`` where available).
    dtype : {"float32", "float64"}, default "float32"
        The working precision.
    memory_gb : float, default 4.0
        A run whose working set exceeds this is refused up front.
    head_fraction : float, default 0.1
        The head is the :math:`\lceil \mathrm{fraction} \cdot N \rceil` most probable tokens
        (the head/tail error split).
    readout : bool, default False
        Also the calibrated softmax readout: cross-entropy, p(correct) and the temperature β*.
    sampler : {"auto", "explicit", "in_law"}, default "auto"
        How the input embeddings' randomness is drawn (docs: kernels-sampling.md).
    counts : {"tokens", "multinomial"}, default "tokens"
        How the sample counts n_T(x) of finite T are drawn: the T tokens themselves, counted
        (O(T)), or the count vector directly, ``Multinomial(T, p)`` with nested T as running
        sums (O(N) per T, any T up to 2⁵³; docs: beyond/vocabulary.md). Same law, other numbers.
    label_rule : {"soft", "majority"}, default "soft"
        What a data scheme stores of token x's observed labels: the empirical label law
        :math:`n(x, y)/n(x)` (soft), or the one-hot of its most frequent label (majority; ties
        broken uniformly at random from the trial's ``label_ties`` stream). Docs:
        beyond/noise-threshold.md.
    n_groups : int, default 1
        Similar tokens (docs: beyond/similar.md): the number G of groups g: [N] → [G], used by
        ``embedding = "clustered"`` and ``target = "group"``; refused with any other embedding
        and target.
    similarity : float, default 0.0
        ρ, the correlation of two clustered embeddings of a group:
        :math:`e_x = \sqrt{\rho}\, c_{g(x)} + \sqrt{1-\rho}\, \xi_x`.
    grouping : {"random", "banded"}, default "random"
        How the groups are formed: a random balanced map, or bands of frequency ranks.

    Raises
    ------
    ConfigError
        Naming the first invalid field and what it allows.

    Notes
    -----
    ``words`` needs ``assocmem[words]``; ``embedding = "clustered"`` and ``target = "group"``
    take the groups of ``n_groups``.
    Symbols of Cabannes et al. (2024); see the docs: science/model.md and science/schemes.md.
    """

    nested: str = run_field("nested")  # declared in config/closed_form.py (torch-free)
    schemes: tuple[str, ...] = run_field("schemes")
    dims: tuple[int, ...] = run_field("dims")
    n_samples: tuple[int | None, ...] = run_field("n_samples")
    trials: int = run_field("trials")
    seed: int = run_field("seed")
    device: str = run_field("device")
    dtype: str = run_field("dtype")
    memory_gb: float = run_field("memory_gb")
    head_fraction: float = run_field("head_fraction")
    readout: bool = run_field("readout")
    sampler: str = run_field("sampler")
    counts: str = run_field("counts")
    label_rule: str = run_field("label_rule")
    n_groups: int = run_field("n_groups")
    similarity: float = run_field("similarity")
    grouping: str = run_field("grouping")

    def __post_init__(self) -> None:
        # T = inf, as the command line and the specs write it, is infinite data: None here
        if isinstance(self.n_samples, (tuple, list)) and any(map(_infinite, self.n_samples)):
            infinite = tuple(None if _infinite(t) else t for t in self.n_samples)
            object.__setattr__(self, "n_samples", infinite)
        validate(self)

    @property
    def parsed_schemes(self) -> list[Scheme]:
        return [parse_scheme(text) for text in self.schemes]

    @property
    def torch_dtype(self) -> torch.dtype:
        return DTYPES[self.dtype]

    @cached_property
    def resolved_sampler(self) -> str:
        """The sampler that runs: ``sampler``, or what ``auto`` resolves to from the config
        alone (in_law when exact and cheaper by :mod:`assocmem.closed_form.cost`)."""
        return cost.resolve(self)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _infinite(t: Any) -> bool:
    """Whether a sample size T is written as infinite: ``inf`` (a float or the word)."""
    if isinstance(t, str):
        return t.strip().lower() in ("inf", "infinite")
    return isinstance(t, float) and t == math.inf


def validate(cfg: ClosedFormConfig) -> None:
    """Check every field; raise :class:`ConfigError` naming the first bad one."""
    if cfg.probabilities is not None:
        if len(cfg.probabilities) != cfg.n_inputs:
            raise ConfigError(
                "probabilities",
                f"has {len(cfg.probabilities)} values but n_inputs = {cfg.n_inputs}",
            )
        if (
            any(not math.isfinite(v) or v < 0 for v in cfg.probabilities)
            or sum(cfg.probabilities) <= 0
        ):
            raise ConfigError("probabilities", "must be finite, ≥ 0, with a positive sum")
    int_at_least("n_inputs", cfg.n_inputs, 1)
    if cfg.words is not None:
        if cfg.probabilities is not None:
            raise ConfigError("words", "give either words or probabilities, not both")
        check_words(cfg.words, cfg.n_inputs)
    int_at_least("n_outputs", cfg.n_outputs, 1)
    if cfg.n_outputs > cfg.n_inputs:
        raise ConfigError("n_outputs", f"must be ≤ n_inputs = {cfg.n_inputs}, got {cfg.n_outputs}")
    check_token_alpha(cfg.alpha)
    if cfg.target not in TARGETS:
        raise unknown_name("target", "target", cfg.target, TARGETS)
    check_label_noise(cfg.label_noise, cfg.n_outputs)
    check_kind("embedding", cfg.embedding, INPUT_EMBEDDING_KINDS)
    check_kind("output_embedding", cfg.output_embedding)
    if cfg.nested not in NESTED_CONVENTIONS:
        raise unknown_name("nested", "convention", cfg.nested, NESTED_CONVENTIONS)
    if not cfg.schemes:
        raise ConfigError("schemes", "give at least one scheme")
    for scheme in cfg.parsed_schemes:
        scheme.validate(cfg.n_inputs)
    if len({s.spec for s in cfg.parsed_schemes}) != len(cfg.schemes):
        raise ConfigError("schemes", "each scheme may be given once")
    if not cfg.dims:
        raise ConfigError("dims", "give at least one dimension d")
    for d in cfg.dims:
        int_at_least("dims", d, 1)
    if "orthogonal" in (cfg.embedding, cfg.output_embedding) and min(cfg.dims) < cfg.n_inputs:
        raise ConfigError("dims", f"orthogonal embeddings need every d ≥ n_inputs = {cfg.n_inputs}")
    if not cfg.n_samples:
        raise ConfigError("n_samples", "give at least one sample size T (or inf)")
    for t in cfg.n_samples:
        if t is not None and (not is_int(t) or t < 0):
            raise ConfigError(
                "n_samples", f"must be integers T ≥ 0, or None (or inf): infinite data; got {t!r}"
            )
    int_at_least("trials", cfg.trials, 1)
    int_at_least("seed", cfg.seed, 0)
    if cfg.dtype not in DTYPES:
        raise unknown_name("dtype", "dtype", cfg.dtype, DTYPES)
    check_device(cfg.device)
    if not cfg.memory_gb > 0:
        raise ConfigError("memory_gb", f"must be > 0, got {cfg.memory_gb}")
    if not 0 < cfg.head_fraction <= 1:
        raise ConfigError("head_fraction", f"must be in (0, 1], got {cfg.head_fraction}")
    _check_sampler(cfg)
    _check_counts(cfg)
    _check_label_rule(cfg)
    _check_groups(cfg)
    _check_memory(cfg)


def _check_label_rule(cfg: ClosedFormConfig) -> None:
    if cfg.label_rule not in LABEL_RULES:
        raise ConfigError(
            "label_rule",
            f"unknown label rule {cfg.label_rule!r}; allowed: {', '.join(LABEL_RULES)}",
        )


def _check_sampler(cfg: ClosedFormConfig) -> None:
    if cfg.sampler not in cost.CHOICES:
        raise unknown_name("sampler", "sampler", cfg.sampler, cost.CHOICES)
    if cfg.sampler == "in_law" and not cost.in_law_exact(cfg):
        raise ConfigError(
            "sampler",
            f"in_law is exact only for i.i.d. Gaussian input embeddings, not embedding = "
            f"{cfg.embedding!r}; allowed here: explicit, auto",
        )


MAX_MULTINOMIAL_SAMPLES = 2**53  # float64 counts stay exact integers


def _check_counts(cfg: ClosedFormConfig) -> None:
    """The count draw, and T ≤ 2⁵³ for multinomial counts (the tokens' T is the memory
    guard's business: O(T) bytes)."""
    if cfg.counts not in COUNTS:
        raise unknown_name("counts", "count draw", cfg.counts, COUNTS)
    largest = max((t for t in cfg.n_samples if t is not None), default=0)
    if cfg.counts == "multinomial" and largest > MAX_MULTINOMIAL_SAMPLES:
        raise ConfigError("n_samples", f"must be ≤ 2^53 with counts = 'multinomial', got {largest}")


def _check_groups(cfg: ClosedFormConfig) -> None:
    """The similar-tokens fields: used only by clustered embeddings or group targets."""
    if cfg.embedding != CLUSTERED and cfg.target != "group":
        for field, default in (("n_groups", 1), ("similarity", 0.0), ("grouping", "random")):
            if getattr(cfg, field) != default:
                raise ConfigError(
                    field, "is used only with embedding = 'clustered' or target = 'group'"
                )
        return
    int_at_least("n_groups", cfg.n_groups, 1)
    if cfg.n_groups > cfg.n_inputs:
        raise ConfigError("n_groups", f"must be ≤ n_inputs = {cfg.n_inputs}, got {cfg.n_groups}")
    value = cfg.similarity
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise ConfigError("similarity", f"must be a number in [0, 1], got {value!r}")
    if value != 0 and cfg.embedding != CLUSTERED:
        raise ConfigError("similarity", "is used only with embedding = 'clustered'")
    if cfg.grouping not in GROUPINGS:
        raise unknown_name("grouping", "grouping", cfg.grouping, GROUPINGS)


def working_set_bytes(cfg: ClosedFormConfig) -> int:
    """Peak memory of one trial under the sampler that will run.

    The sampler is :attr:`ClosedFormConfig.resolved_sampler`.

    Explicit: the embeddings at d_max plus the per-column score tensors. In law: the basis
    while it is built, the running products and one d's scores. Top-1 in blocks (large N·M):
    the embeddings and one block of scores (see :mod:`assocmem.closed_form.cost`).
    """
    if cost.top1_in_blocks(cfg):
        return cost.blocked_bytes(cfg)
    return cost.costs(cfg)[cfg.resolved_sampler].working_set


def _check_memory(cfg: ClosedFormConfig) -> None:
    need = working_set_bytes(cfg)
    budget = cfg.memory_gb * 2**30
    if need > budget:
        tokens = cfg.counts == "tokens" and cost.layout(cfg).max_samples * 16 > need / 2
        raise ConfigError(
            "memory_gb",
            f"this run needs about {need / 2**30:.1f} GiB per trial (N = {cfg.n_inputs}, "
            f"d_max = {max(cfg.dims)}, sampler {cfg.resolved_sampler}"
            + (", top-1 in blocks" if cost.top1_in_blocks(cfg) else "")
            + "), over the budget of "
            f"{cfg.memory_gb:g} GiB; "
            + ("set counts = 'multinomial' (O(N) per T), " if tokens else "")
            + "lower n_inputs or dims, or raise memory_gb",
        )


def config_from_mapping(values: Mapping[str, Any]) -> ClosedFormConfig:
    """Build a config from a mapping (a TOML table or CLI flags), checking keys and types."""
    if "distribution" in values:  # zipf, zipf:ALPHA or words:LANG, as `assocmem train` takes it
        from assocmem.laws.words import parse_distribution

        law = parse_distribution(values["distribution"])
        values = {**{k: v for k, v in values.items() if k != "distribution"}, **law}
    if values.get("n_inputs") == "all":  # every word of the language's list
        from assocmem.laws.words import vocabulary_size

        values = {**values, "n_inputs": vocabulary_size(values.get("words"))}
    declared = fields(ClosedFormConfig)
    allowed = {f.name for f in declared} | {"distribution"}
    lists = {f.name for f in declared if value_type(f.type)[1]}  # tuple fields, from their types
    unknown = sorted(set(values) - allowed)
    if unknown:
        raise unknown_name(unknown[0], "key", unknown[0], sorted(allowed))
    clean: dict[str, Any] = {}
    for key, value in values.items():
        if key in lists and value is not None:
            if isinstance(value, str | int | float):
                value = [value]
            if not isinstance(value, Sequence):
                raise ConfigError(key, f"must be a list, got {value!r}")
            if key in ("dims", "n_samples"):
                value = expand_log_ranges(key, value)
            if key == "dims":
                value = [parse_int(key, v) for v in value]
            if key == "n_samples":
                value = [parse_sample_size(v) for v in value]
            if key == "probabilities":
                try:
                    value = [float(v) for v in value]
                except (TypeError, ValueError):
                    raise ConfigError(key, "must be a list of numbers") from None
            value = tuple(value)
        clean[key] = value
    if clean.get("probabilities") is not None and "n_inputs" not in values:
        clean["n_inputs"] = len(clean["probabilities"])
    return ClosedFormConfig(**clean)

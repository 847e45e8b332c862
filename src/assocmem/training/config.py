r"""One frozen, validated configuration per training run (Cabannes et al. 2024, §4–5).

Defaults follow the authors' grid: N = 100, M = 5, α = 2, :math:`f^*(x) = x \bmod M`, Gaussian
:math:`\mathcal{N}(0, 1/d)` embeddings, W initialised at :math:`\mathcal{N}(0, 1/d)`, one pass over
``T`` fresh samples in :math:`T / B` steps, and the paper's learning-rate convention
(``lr_scaling = "paper"``): under Adam the step of W is :math:`\mathrm{lr} / d` and that of learned
embeddings :math:`\mathrm{lr} / \sqrt{d}`; every other optimiser uses ``lr`` unscaled.

The optimiser is a frozen sub-config (:mod:`assocmem.training.optimizers`) owning its
hyper-parameters. TOML specs, the CLI and records spell a config flat (``optimizer = "adam"``,
``betas = [0.9, 0.999]``, ``momentum``, ``eps``, ``weight_decay``): :meth:`TrainConfig.from_flat`
reads that spelling and :meth:`TrainConfig.flat_values` / :meth:`TrainConfig.to_dict` write it.
"""

import functools
import math
import warnings
from collections.abc import Mapping
from dataclasses import MISSING, Field, dataclass, field, fields, replace
from typing import Any

import torch

from assocmem.config.checks import int_at_least
from assocmem.config.errors import ConfigError
from assocmem.config.fields import field_names
from assocmem.config.hyper import hyper_parameter_fields
from assocmem.config.problem import (
    TRAINED_EMBEDDING_KINDS,
    TRAINING,
    document_problem,
    problem_field,
)
from assocmem.config.training import INITS, LR_SCALINGS, MODELS, SCHEDULES, run_field
from assocmem.laws import check_label_noise, check_token_alpha, check_words
from assocmem.laws.tokens import zipf_probabilities
from assocmem.runtime import check_device
from assocmem.training.optimizers import FLAT_DEFAULTS, OPTIMIZERS, AbstractOptimizer
from assocmem.training.optimizers.sgd import SGD

EMBEDDING_KINDS = TRAINED_EMBEDDING_KINDS


RENAMED = {"embeddings": "embedding", "output_embeddings": "output_embedding"}
"""Old spelling → field: the names every configuration now shares (the closed-form ones).
:meth:`TrainConfig.from_flat` reads the old ones (TOML files, stored records, mappings) with
one deprecation warning each; run identities are still hashed under them
(:attr:`assocmem.sweep.kinds.train.TrainKind.renamed`), so a database written before resumes."""


def current_names(values: Mapping[str, Any]) -> dict[str, Any]:
    """``values`` with each old spelling of :data:`RENAMED` as its field (a warning each).

    Raises
    ------
    ConfigError
        If a field is given under both spellings.
    """
    out = dict(values)
    for old, new in RENAMED.items():
        if old in out:
            if new in out:
                raise ConfigError(old, f"is the old spelling of {new}; give one of the two")
            warnings.warn(
                f"{old}: renamed {new} (the closed-form name); the old spelling is still read",
                FutureWarning,
                stacklevel=3,
            )
            out[new] = out.pop(old)
    return out


@document_problem(TRAINING)
@dataclass(frozen=True)
class TrainConfig:
    r"""Everything that determines one training run; ``seed`` and ``lr`` vary inside a batch.

    Frozen and validated on construction. Defaults follow the authors' grid (see the module
    docstring). Field by field (symbols of Cabannes et al. (2024)): the Parameters begin with
    the problem fields (what is memorised: ``n_inputs``, ``n_outputs``, ``alpha``, ``words``,
    ``label_noise``, ``embedding``, ``output_embedding``), documented once by
    :class:`~assocmem.config.problem.Problem` (and listed here from there, at the training
    setup's defaults, by :func:`~assocmem.config.problem.document_problem`); the run's own
    fields follow.

    Parameters
    ----------
    dim : int, default 100
        d.
    n_samples : int, default 10240
        T, fresh i.i.d. samples seen once.
    batch_size : int, default 64
        B; :math:`T / B` optimiser steps.
    full_batch : bool, default False
        Train on the exact population gradient, for ``n_steps`` steps.
    n_steps : int, default 0
        Steps of a full-batch run.
    model : {"matrix", "learned", "relu", "qupdate"}, default "matrix"
        Learn W; W, E and U; ReLU embeddings; or the Eq. (16) update approximation.
    layer_norm : bool, default False
        Divide ``W e_x`` (or ``ReLU(e_x)``) by its L2 norm.
    init : {"gaussian", "zero"}, default "gaussian"
        The initial W.
    optimizer : AbstractOptimizer or str, default SGD()
        An entry of :data:`OPTIMIZERS` with its hyper-parameters (a name gives its defaults).
    lr : float, default 1.0
        The learning rate.
    lr_scaling : {"paper", "none"}, default "paper"
        "paper": under Adam, W moves by lr/d and learned embeddings by lr/√d.
    schedule : {"constant", "step"}, default "constant"
        Multiply lr by ``decay_factor`` at ``decay_steps`` under "step".
    decay_steps : tuple of int, default ()
        The steps at which the "step" schedule multiplies lr by ``decay_factor``.
    decay_factor : float, default 0.1
        The "step" schedule's factor.
    eval_every : int, default 0
        Record the population error every k steps (0: only at the end).
    snapshot_steps : tuple of int, default ()
        Record the N×M softmax scores after these steps.
    seed : int, default 0
        The run's randomness depends only on (seed, stream, run identity).
    device : str, default "cpu"
        The torch device the runs train on: ``cpu``, ``cuda`` or ``cuda:K``.
    extra : dict
        Free-form bookkeeping, not part of the run's identity.

    Raises
    ------
    ConfigError
        Naming the first invalid field and what it allows.

    Notes
    -----
    The training setup is :data:`~assocmem.config.problem.TRAINING`. ``embedding`` and
    ``output_embedding`` were ``embeddings`` and ``output_embeddings`` before 0.2: still read,
    with a deprecation warning. Cabannes et al. (2024), Section 4; see the docs:
    science/optimisation.md.
    """

    n_inputs: int = problem_field("n_inputs", TRAINING)
    n_outputs: int = problem_field("n_outputs", TRAINING)
    alpha: float = problem_field("alpha", TRAINING)
    words: str | None = problem_field("words", TRAINING)
    label_noise: float = problem_field("label_noise", TRAINING)
    dim: int = run_field("dim")  # the run fields: declared in config/training.py (torch-free)
    n_samples: int = run_field("n_samples")
    batch_size: int = run_field("batch_size")
    full_batch: bool = run_field("full_batch")
    n_steps: int = run_field("n_steps")
    model: str = run_field("model")
    layer_norm: bool = run_field("layer_norm")
    init: str = run_field("init")
    embedding: str = problem_field("embedding", TRAINING)  # gaussian: N(0, 1/d) entries
    output_embedding: str = problem_field("output_embedding", TRAINING)
    # An entry of OPTIMIZERS with its hyper-parameters; a name (``"adam"``) gives its defaults.
    optimizer: AbstractOptimizer = field(default_factory=SGD)
    lr: float = run_field("lr")
    lr_scaling: str = run_field("lr_scaling")
    schedule: str = run_field("schedule")
    decay_steps: tuple[int, ...] = run_field("decay_steps")
    decay_factor: float = run_field("decay_factor")
    eval_every: int = run_field("eval_every")
    snapshot_steps: tuple[int, ...] = run_field("snapshot_steps")
    seed: int = run_field("seed")
    device: str = run_field("device")
    extra: dict[str, Any] = field(default_factory=dict, compare=False, hash=False, repr=False)

    def __post_init__(self) -> None:
        if isinstance(self.optimizer, str):  # a name: that optimiser at its defaults
            object.__setattr__(self, "optimizer", optimizer_entry(self.optimizer)())
        validate(self)

    @classmethod
    def from_flat(cls, values: Mapping[str, Any]) -> "TrainConfig":
        """A config from its flat spelling (TOML, CLI, records): ``optimizer`` a name and its
        hyper-parameters (``momentum``, ``weight_decay``, ``betas``, ``eps``…) top-level keys.

        A hyper-parameter the chosen optimiser does not have is a :class:`ConfigError` unless
        it is at the value records give it (e.g. ``momentum = 0`` under Adam). Lists are read
        as tuples (records are JSON). Unknown keys raise ``TypeError``, as the constructor does.
        """
        settings: dict[str, Any] = {
            k: tuple(v) if isinstance(v, list) else v for k, v in current_names(values).items()
        }
        name = settings.pop("optimizer", SGD.name)
        entry = optimizer_entry(name)
        own = entry.hyper_parameters()
        hyper: dict[str, Any] = {}
        for key, default in hyper_parameter_defaults().items():
            if key not in settings:
                continue
            value = settings.pop(key)
            if key in own:
                hyper[key] = value
            elif value != default:
                raise ConfigError(
                    key, f"optimizer {name!r} has no {key}; its settings: {', '.join(own)}"
                )
        return cls(**settings, optimizer=entry(**hyper))

    @classmethod
    def flat_keys(cls) -> tuple[str, ...]:
        """Every key :meth:`from_flat` takes."""
        names = [name for name in field_names(cls) if name != "extra"]
        return (*names, *hyper_parameter_defaults(), *RENAMED)

    @property
    def law(self) -> str:
        """The token law, spelled as ``--distribution`` takes it: ``zipf:α`` or ``words:LANG``."""
        return f"words:{self.words}" if self.words is not None else f"zipf:{self.alpha:g}"

    def probabilities(self) -> torch.Tensor:
        """The input law p over the N tokens, (N,) float64 (token 0 the most frequent)."""
        if self.words is None:
            return zipf_probabilities(self.n_inputs, self.alpha)
        from assocmem.laws.words import word_distribution

        return torch.from_numpy(word_distribution(self.words, self.n_inputs).probabilities)

    @property
    def steps(self) -> int:
        """Number of optimiser steps: ``T // B`` for one pass, ``n_steps`` for full batch."""
        return self.n_steps if self.full_batch else self.n_samples // self.batch_size

    def batch_key(self) -> tuple[Any, ...]:
        """Runs with equal keys share one tensor program: everything but seed and lr."""
        return self.key_without("seed", "lr")

    def key_without(self, *names: str) -> tuple[Any, ...]:
        """Every field's value in declaration order but those of ``names`` (and ``extra``): the
        key of the runs that may differ only there (one program, one trajectory, one padded
        program)."""
        return tuple(
            getattr(self, name)
            for name in field_names(type(self))
            if name not in names and name != "extra"
        )

    def flat_values(self) -> dict[str, Any]:
        """The config as records and run hashes spell it (tuples stay tuples): ``optimizer``
        its name, then every field, the optimiser's hyper-parameters after ``lr_scaling``
        (where they were fields), ``momentum``, ``weight_decay``, ``betas`` and ``eps`` always
        (at :data:`FLAT_DEFAULTS` when the optimiser lacks them)."""
        items = [(name, getattr(self, name)) for name in field_names(type(self)) if name != "extra"]
        at = [name for name, _ in items].index("lr_scaling") + 1
        hyper = list(self.optimizer.flat_values().items())
        values = dict(items[:at] + hyper + items[at:])
        values["optimizer"] = self.optimizer.name
        return values

    def to_dict(self) -> dict[str, Any]:
        """:meth:`flat_values`, JSON-ready (lists for tuples)."""
        return {k: list(v) if isinstance(v, tuple) else v for k, v in self.flat_values().items()}

    def with_(self, **changes: Any) -> "TrainConfig":
        return replace(self, **changes)


def optimizer_entry(name: Any) -> type[AbstractOptimizer]:
    """The registry entry of an optimiser name, or a :class:`ConfigError` listing them."""
    if not isinstance(name, str) or name not in OPTIMIZERS:
        raise ConfigError("optimizer", f"unknown value {name!r}; allowed: {', '.join(OPTIMIZERS)}")
    return OPTIMIZERS[name]


def hyper_parameter_defaults() -> dict[str, Any]:
    """Every optimiser hyper-parameter key, at the value a config without it records: the
    :data:`FLAT_DEFAULTS`, the other fields of :class:`~assocmem.config.hyper.HyperParameters`,
    then a newer optimiser's own fields at their defaults."""
    declared = tuple(hyper_parameter_fields().values())
    return dict(_hyper_parameter_defaults(tuple(OPTIMIZERS.values()), declared))


@functools.cache
def _hyper_parameter_defaults(
    entries: tuple[type[AbstractOptimizer], ...], declared: tuple[Field[Any], ...]
) -> dict[str, Any]:
    """:func:`hyper_parameter_defaults` of these registry entries and declarations (a new one
    is a new key: planning builds tens of thousands of configs and asks each time)."""
    defaults = dict(FLAT_DEFAULTS)
    for item in declared:  # declared, maybe held by no optimiser yet
        defaults.setdefault(item.name, item.default)
    for entry in entries:
        for f in fields(entry):
            if f.name not in defaults:
                defaults[f.name] = f.default if f.default is not MISSING else None
    return defaults


def _choice(name: str, value: str, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise ConfigError(name, f"unknown value {value!r}; allowed: {', '.join(allowed)}")


def _finite(name: str, value: Any, *, low: float = -math.inf, strict: bool = False) -> None:
    ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    if not ok or value < low or (strict and value == low):
        bound = f"> {low}" if strict else f"≥ {low}"
        raise ConfigError(name, f"must be a finite number {bound}, got {value!r}")


def validate(cfg: TrainConfig) -> None:
    """Raise :class:`ConfigError` naming the first invalid field."""
    int_at_least("n_inputs", cfg.n_inputs, 1)
    int_at_least("n_outputs", cfg.n_outputs, 2)
    if cfg.n_outputs > cfg.n_inputs:
        raise ConfigError("n_outputs", f"must be ≤ n_inputs = {cfg.n_inputs}, got {cfg.n_outputs}")
    check_token_alpha(cfg.alpha)
    if cfg.words is not None:
        check_words(cfg.words, cfg.n_inputs)
    check_label_noise(cfg.label_noise, cfg.n_outputs)
    if cfg.label_noise and cfg.model == "qupdate":
        raise ConfigError("label_noise", "the qupdate approximation has no noisy labels; use 0")
    int_at_least("dim", cfg.dim, 1)
    for name in ("layer_norm", "full_batch"):
        if not isinstance(getattr(cfg, name), bool):
            raise ConfigError(name, f"must be true or false, got {getattr(cfg, name)!r}")
    _choice("model", cfg.model, MODELS)
    if not isinstance(cfg.optimizer, AbstractOptimizer):
        raise ConfigError("optimizer", f"must be an optimiser of {', '.join(OPTIMIZERS)}")
    cfg.optimizer.validate()
    _choice("init", cfg.init, INITS)
    _choice("embedding", cfg.embedding, EMBEDDING_KINDS)
    _choice("output_embedding", cfg.output_embedding, EMBEDDING_KINDS)
    _choice("lr_scaling", cfg.lr_scaling, LR_SCALINGS)
    _choice("schedule", cfg.schedule, SCHEDULES)
    check_device(cfg.device)
    _finite("lr", cfg.lr, low=0.0, strict=True)
    _finite("decay_factor", cfg.decay_factor, low=0.0, strict=True)
    if cfg.full_batch:
        int_at_least("n_steps", cfg.n_steps, 1)
    else:
        int_at_least("n_samples", cfg.n_samples, 1)
        int_at_least("batch_size", cfg.batch_size, 1)
        if cfg.batch_size > cfg.n_samples:
            raise ConfigError(
                "batch_size", f"must be ≤ n_samples = {cfg.n_samples}, got {cfg.batch_size}"
            )
    int_at_least("eval_every", cfg.eval_every, 0)
    for step in cfg.decay_steps:
        int_at_least("decay_steps", step, 0)
    for step in cfg.snapshot_steps:
        int_at_least("snapshot_steps", step, 0)
    if cfg.model == "qupdate" and (cfg.full_batch or cfg.optimizer.name != SGD.name):
        raise ConfigError("model", "qupdate approximates one-pass SGD: needs optimizer = sgd")
    int_at_least("seed", cfg.seed, 0)

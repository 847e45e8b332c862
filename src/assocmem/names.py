"""The names held by each registry, readable without importing torch.

The registries themselves (:data:`assocmem.SCHEMES`, :data:`assocmem.OPTIMIZERS`,
:data:`assocmem.EXPERIMENTS`) live with the classes they hold, which need torch. A command
line's ``--help``, a notebook's first cell or a config validator often needs only the names:
these functions give them from a table of the built-in entries (a test checks that the table
equals the registries), or from the registry itself once it is loaded, so that entries added
with ``register_scheme`` / ``register_optimizer`` / ``register_experiment`` are listed too.
"""

import sys

# The built-in entries, in registry order (tests/test_public_api.py checks them against the
# registries: adding an entry there means adding its name here).
BUILTIN_SCHEMES = (
    "population",
    "uniform",
    "threshold",
    "empirical",
    "seen_once",
    "empirical_threshold",
    "min_count",
)
BUILTIN_OPTIMIZERS = ("sgd", "adam", "sign_sgd", "normalized_sgd", "nesterov")
BUILTIN_EXPERIMENTS = (
    "figure-1",
    "figure-3",
    "figure-4",
    "memory",
    "figure-5",
    "figure-6",
    "figure-7",
    "figure-8",
    "table-1",
    "rho",
    "finite-data",
    "overflow",
    "beyond-noise",
    "beyond-laws",
    "beyond-capacity",
    "beyond-superposition",
    "beyond-hierarchy",
    "beyond-vocabulary",
    "beyond-noise-threshold",
    "beyond-editing",
    "beyond-similar",
)


def _loaded(module: str, registry: str, builtin: tuple[str, ...]) -> tuple[str, ...]:
    """The keys of ``module.registry`` if that module is loaded, else the built-in names.

    A registry can only have gained entries if its module was imported (registering needs
    it), so the built-in table is exact whenever the module is not loaded.
    """
    loaded = sys.modules.get(module)
    return tuple(getattr(loaded, registry)) if loaded is not None else builtin


def scheme_names() -> tuple[str, ...]:
    """The names of every registered memory scheme, without importing torch.

    Returns
    -------
    tuple of str
        The keys of :data:`assocmem.SCHEMES` in registry order (``"population"``,
        ``"uniform"``, ``"threshold"``, ...): what ``ClosedFormConfig(schemes=...)`` and
        ``--schemes`` accept before their ``:key=value`` parameters.

    Notes
    -----
    The schemes are the weightings ``q`` of ``W_q = Σ_x q(x) u_{f*(x)} e_xᵀ`` studied by
    Cabannes et al. (2024); see the docs: science/schemes.md.
    """
    return _loaded("assocmem.schemes", "REGISTRY", BUILTIN_SCHEMES)


def optimizer_names() -> tuple[str, ...]:
    """The names of every registered optimiser, without importing torch.

    Returns
    -------
    tuple of str
        The keys of :data:`assocmem.OPTIMIZERS` in registry order (``"sgd"``, ``"adam"``, ...):
        what ``TrainConfig(optimizer=...)`` and ``--optimizers`` accept.

    Notes
    -----
    The optimisers of the study in Cabannes et al. (2024), Section 4; see the docs:
    science/optimisation.md.
    """
    return _loaded("assocmem.training.optimizers.registry", "OPTIMIZERS", BUILTIN_OPTIMIZERS)


def experiment_names() -> tuple[str, ...]:
    """The names of every registered experiment, in report order, without importing torch.

    Returns
    -------
    tuple of str
        The keys of :data:`assocmem.EXPERIMENTS` (``"figure-1"``, ..., ``"table-1"``, then the
        claims without a figure and the studies beyond the paper): each is a section of the
        report that :func:`assocmem.reproduce` writes.

    Notes
    -----
    One experiment per figure or table of Cabannes et al. (2024); see the docs:
    science/figures.md and science/claims.md.
    """
    return _loaded("assocmem.experiments.registry", "EXPERIMENTS", BUILTIN_EXPERIMENTS)


__all__ = [
    "BUILTIN_EXPERIMENTS",
    "BUILTIN_OPTIMIZERS",
    "BUILTIN_SCHEMES",
    "experiment_names",
    "optimizer_names",
    "scheme_names",
]

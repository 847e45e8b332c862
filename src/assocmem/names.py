"""The names held by each registry, read from the registries themselves.

The registries (:data:`assocmem.SCHEMES`, :data:`assocmem.OPTIMIZERS`,
:data:`assocmem.EXPERIMENTS`) live with the classes they hold; these functions return their
keys, so that entries added with ``register_scheme`` / ``register_optimizer`` /
``register_experiment`` (or ``register_study``) are listed too. Reading a registry imports its
module (and torch); ``import assocmem`` itself stays light.
"""

import importlib


def _keys(module: str, registry: str) -> tuple[str, ...]:
    """The keys of the dict ``module.registry``, in registry order."""
    return tuple(getattr(importlib.import_module(module), registry))


def scheme_names() -> tuple[str, ...]:
    r"""The names of every registered memory scheme.

    Returns
    -------
    tuple of str
        The keys of :data:`assocmem.SCHEMES` in registry order (``"population"``,
        ``"uniform"``, ``"threshold"``, ...): what ``ClosedFormConfig(schemes=...)`` and
        ``--schemes`` accept before their ``:key=value`` parameters.

    Notes
    -----
    The schemes are the weightings ``q`` of :math:`W_q = \sum_x q(x) u_{f^*(x)} e_x^\top` studied by
    Cabannes et al. (2024); see the docs: science/schemes.md.
    """
    return _keys("assocmem.schemes", "REGISTRY")


def optimizer_names() -> tuple[str, ...]:
    """The names of every registered optimiser.

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
    return _keys("assocmem.training.optimizers.registry", "OPTIMIZERS")


def experiment_names() -> tuple[str, ...]:
    """The names of every registered experiment, in report order.

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
    return _keys("assocmem.experiments.registry", "EXPERIMENTS")


__all__ = [
    "experiment_names",
    "optimizer_names",
    "scheme_names",
]

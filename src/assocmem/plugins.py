"""Finding the studies: the built-in ones (``assocmem.studies``) and those of other packages.

A study is a folder (``assocmem/studies/NAME/``) or a package of its own. Its package (or its
entry point) is light: importing it registers its command, if any
(:func:`assocmem.register_study`), and names, as ``"module:attribute"``, the module that
defines each of its experiments and registers its run kinds. That module (torch, pandas,
matplotlib) is imported only when the experiment registry or a sweep of one of its kinds
needs it, so ``assocmem --help`` stays light.

This module sits below every layer (it imports no assocmem module by name): the core finds the
studies through it without naming one.
"""

import importlib
import importlib.metadata
from typing import Any

ENTRY_POINTS = "assocmem.studies"  # the entry-point group of studies from other packages
BUILT_IN = "assocmem.studies"  # the package whose import registers the built-in studies

_LOADED: set[str] = set()  # the entry points loaded (or being loaded) in this process
_DEFERRED: list[str] = []  # the "module:attribute" of each deferred experiment, in order


def load_studies() -> list[str]:
    """Register every study: the built-in ones, then each entry point of ``assocmem.studies``.

    Returns
    -------
    list of str
        The names of the entry points loaded by this call (each loads once per process).

    Notes
    -----
    An entry point names a module (imported: it calls :func:`assocmem.register_study`) or a
    function (called with no argument: it calls :func:`assocmem.register_study`). ``assocmem``
    calls this before building its commands, and the experiment registry when first imported.
    """
    importlib.import_module(BUILT_IN)
    loaded = []
    for entry in importlib.metadata.entry_points(group=ENTRY_POINTS):
        if entry.name in _LOADED:
            continue
        _LOADED.add(entry.name)
        target = entry.load()
        if callable(target):
            target()
        loaded.append(entry.name)
    return loaded


def defer_experiment(target: str) -> None:
    """Name the module that defines an experiment: ``"package.module:ATTRIBUTE"`` (the same
    target again: a no-op).

    Internal: a study calls :func:`assocmem.register_study`, which calls this for each
    experiment it names by its module.

    Raises
    ------
    ValueError
        If ``target`` is not of that form.
    """
    module, _, attribute = target.partition(":")
    if not module or not attribute.isidentifier():
        raise ValueError(f"experiment target must be 'module:attribute', got {target!r}")
    if target not in _DEFERRED:
        _DEFERRED.append(target)


def deferred_experiments() -> list[Any]:
    """Every deferred experiment, imported (its run kinds registered), in registration order."""
    load_studies()
    found = []
    for target in list(_DEFERRED):
        module, _, attribute = target.partition(":")
        found.append(getattr(importlib.import_module(module), attribute))
    return found

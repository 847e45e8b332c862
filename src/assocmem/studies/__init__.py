"""The studies beyond the paper: one folder each, registered by one line here.

A study's folder holds its model, theory, run kind, :class:`~assocmem.Experiment`, figure and
spec TOML(s). Its ``__init__.py`` is light: it declares its command (if it has one) and calls
:func:`assocmem.register_study` with the ``"module:ATTRIBUTE"`` of each of its experiments,
whose module registers its run kinds. The core (every package beside this one) names no study; the
studies import the core and never each other (import-linter's contracts). See the docs:
tutorials/add-experiment.md.
"""

import importlib

BUILT_IN = (  # one line a study, in report order
    "real_data",
    "superposition",
    "hierarchy",
    "vocabulary",
    "noise_threshold",
    "editing",
    "similar",
    "facts",
    "incontext",
)

for _study in BUILT_IN:
    importlib.import_module(f"{__name__}.{_study}")

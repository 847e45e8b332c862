"""The studies beyond the paper: one folder each, registered by one line here.

A study's folder holds its model, theory, run kind, :class:`~assocmem.Experiment`, figure and
spec TOML(s). Its ``__init__.py`` is light: it declares its command and calls
:func:`assocmem.register_study` with the ``"module:ATTRIBUTE"`` of its experiment, whose
module registers its run kinds. The core (every package beside this one) names no study; the
studies import the core and never each other (import-linter's contracts). See the docs:
tutorials/add-experiment.md.
"""

from assocmem.studies import facts  # noqa: F401

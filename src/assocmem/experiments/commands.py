"""The command line of each study beyond the paper, declared as data: ``assocmem STUDY …``.

A study is an :class:`~assocmem.experiments.experiment.Experiment` of the registry (its sweeps,
claims, figure and table); its :class:`StudyCommand` here says which of its settings the command
line may change. ``assocmem`` builds one subcommand per entry of :data:`STUDY_COMMANDS`, and
:func:`assocmem.run_study` runs it, so the command and the library do the same thing.

This module imports nothing but the standard library: ``assocmem --help`` and ``assocmem STUDY
--help`` are built from it without torch, pandas or matplotlib.

A study registers through one function, :func:`register_study` (its experiments and its
command, if it has one), whether it is built in or comes from another package. Another
package is found by its Python entry point in the group ``assocmem.studies`` (in its
pyproject.toml, ``toy = "toy_study:register"`` under
``[project.entry-points."assocmem.studies"]``):
:func:`load_studies` loads each one (a module that calls ``register_study`` when imported, or
a function that it calls) before ``assocmem`` builds its commands and when the experiment
registry is first imported, so the study gets its ``assocmem NAME`` command and its
``reproduce --only`` item with no edit here.
"""

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, overload

from assocmem.plugins import ENTRY_POINTS, defer_experiment, load_studies

if TYPE_CHECKING:
    from assocmem.experiments.experiment import Experiment


TYPES = ("int", "float", "str")


@dataclass(frozen=True)
class Option:
    """One setting of a study that its command line may change.

    Attributes
    ----------
    field : str
        The sweep field it sets (``"dims"``, ``"alpha"``, ``"trials"``), in every sweep of the
        study that has it: the top-level ``trials`` / ``seeds``, an axis (the whole list), or a
        ``base`` value. The flag is ``--`` + the field with ``_`` as ``-``.
    type : {"int", "float", "str"}
        The type of one value.
    help : str
        One line for ``--help``.
    many : bool
        A list of values (``--dims 16 32 64``).
    low : float, optional
        The smallest value allowed (numbers).
    choices : tuple of str, optional
        The values allowed (strings).
    """

    field: str
    type: str
    help: str
    many: bool = False
    low: float | None = None
    choices: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        if self.type not in TYPES:
            raise ValueError(f"Option {self.field!r}: type must be one of {TYPES}")

    @property
    def flag(self) -> str:
        return "--" + self.field.replace("_", "-")


@dataclass(frozen=True)
class StudyCommand:
    """The ``assocmem NAME`` command of one study.

    Attributes
    ----------
    name : str
        The subcommand (``"superposition"``).
    experiment : str
        The registered experiment it runs (``"beyond-superposition"``).
    help : str
        One line for ``assocmem --help``.
    description : str
        The paragraph of ``assocmem NAME --help``: the question, the model, what is printed.
    options : tuple of Option
        The settings it may change (besides ``--scale``, ``--out``, ``--format``, ...).
    tiny : tuple of (field, value)
        The settings of ``--scale tiny``, over the quick scale's sweeps: a run of seconds that
        exercises every part of the study (tests, trying options); measured, never judged.
    """

    name: str
    experiment: str
    help: str
    description: str
    options: tuple[Option, ...] = ()
    tiny: tuple[tuple[str, Any], ...] = ()


STUDY_COMMANDS: dict[str, StudyCommand] = {}
"""Every study command by name: ``assocmem NAME`` runs ``run_study(NAME)``."""


def register_study_command(command: StudyCommand) -> StudyCommand:
    """Add a study's command under its name (the same one again: a no-op).

    Parameters
    ----------
    command : StudyCommand
        Its ``experiment`` must be registered (:func:`assocmem.register_experiment`) before
        the command runs.

    Returns
    -------
    StudyCommand
        ``command`` itself.

    Raises
    ------
    ValueError
        If another command holds that name.
    """
    held = STUDY_COMMANDS.get(command.name)
    if held is not None and held != command:
        raise ValueError(f"study command {command.name!r} is already registered")
    STUDY_COMMANDS[command.name] = command
    return command


@overload
def register_study(command: StudyCommand, *experiments: "Experiment | str") -> StudyCommand: ...
@overload
def register_study(command: None, *experiments: "Experiment | str") -> None: ...
def register_study(
    command: StudyCommand | None, *experiments: "Experiment | str"
) -> StudyCommand | None:
    """Register a study: its experiments (sweeps, claims, figure, table) and its command.

    Parameters
    ----------
    command : StudyCommand or None
        Its ``assocmem NAME`` command: ``command.experiment`` names the experiment it runs.
        None: a study without a command of its own (its experiments are run by ``reproduce``,
        :func:`assocmem.run_study`, or commands with flags of their own).
    *experiments : Experiment or str
        Its experiments, added to :data:`assocmem.EXPERIMENTS` in this order (after those
        registered before). Each one's ``item`` is its ``reproduce --only`` choice
        (``"beyond"``: drawn with the studies beyond the paper). A ``"module:ATTRIBUTE"``
        string names the module that defines it (and registers the study's run kinds),
        imported only when the experiment registry or a sweep of its kinds needs it: how the
        built-in studies register, so that the command line stays light. None given: the
        command's experiment is registered already.

    Returns
    -------
    StudyCommand or None
        ``command`` itself.

    Raises
    ------
    ValueError
        If there is neither a command nor an experiment; if another study holds the command's
        name or an experiment's; if a target is not ``"module:ATTRIBUTE"``; or if the
        experiments are given as objects and none is the one the command names.

    Notes
    -----
    The one way a study is registered, built in (``assocmem/studies/NAME/__init__.py``) or
    from another package (an entry point of the group ``assocmem.studies``, see
    :func:`load_studies`). See the docs: tutorials/add-experiment.md.
    """
    if command is None and not experiments:
        raise ValueError("register_study needs a command or at least one experiment")
    objects = [e for e in experiments if not isinstance(e, str)]
    if command is not None and objects and len(objects) == len(experiments):
        names = [e.name for e in objects]
        if command.experiment not in names:
            raise ValueError(
                f"study {command.name!r} runs experiment {command.experiment!r}, "
                f"not {', '.join(map(repr, names))}"
            )
    for target in (e for e in experiments if isinstance(e, str)):
        defer_experiment(target)
    if objects:
        registry = importlib.import_module("assocmem.experiments.registry")
        for experiment in objects:
            registry.register_experiment(experiment)
    return None if command is None else register_study_command(command)


def study_command(name: str) -> StudyCommand | None:
    """The command of a study, by command name or experiment name (None if it has none)."""
    if name in STUDY_COMMANDS:
        return STUDY_COMMANDS[name]
    return next((c for c in STUDY_COMMANDS.values() if c.experiment == name), None)


load_studies()  # the built-in studies (assocmem/studies/) and other packages': their commands

__all__ = [
    "ENTRY_POINTS",
    "STUDY_COMMANDS",
    "Option",
    "StudyCommand",
    "load_studies",
    "register_study",
    "register_study_command",
    "study_command",
]

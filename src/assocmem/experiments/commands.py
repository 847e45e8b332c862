"""The command line of each study beyond the paper, declared as data: ``assocmem STUDY …``.

A study is an :class:`~assocmem.experiments.experiment.Experiment` of the registry (its sweeps,
claims, figure and table); its :class:`StudyCommand` here says which of its settings the command
line may change. ``assocmem`` builds one subcommand per entry of :data:`STUDY_COMMANDS`, and
:func:`assocmem.run_study` runs it, so the command and the library do the same thing.

This module imports nothing but the standard library: ``assocmem --help`` and ``assocmem STUDY
--help`` are built from it without torch, pandas or matplotlib. Adding a study's command is one
entry of :data:`STUDY_COMMANDS` (or :func:`register_study_command`).
"""

from dataclasses import dataclass

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
    """

    name: str
    experiment: str
    help: str
    description: str
    options: tuple[Option, ...] = ()


STUDY_COMMANDS: dict[str, StudyCommand] = {
    "similar": StudyCommand(
        name="similar",
        experiment="beyond-similar",
        help="similar tokens: clustered embeddings, generalisation and N_eff",
        description="Closed-form memories with clustered input embeddings e_x = √ρ·c_g(x) + "
        "√(1−ρ)·ξ_x over G groups (N = 1000, M = 5), targets shared within a group or "
        "independent of it: the error on never-seen tokens, the effective number of tokens "
        "N_eff(ρ, G) against T, the error against d at infinite data, and the interference of "
        "correlated keys, each next to its Gaussian theory (docs: beyond/similar.md). Prints "
        "a table and the judged claims.",
        options=(
            Option("similarity", "float", "similarities ρ in [0, 1]", many=True, low=0.0),
            Option("n_groups", "int", "numbers of groups G", many=True, low=1),
            Option("target", "str", "targets", many=True, choices=("group", "mod", "random")),
            Option("trials", "int", "independent draws per point", low=1),
        ),
    ),
}
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


def study_command(name: str) -> StudyCommand | None:
    """The command of a study, by command name or experiment name (None if it has none)."""
    if name in STUDY_COMMANDS:
        return STUDY_COMMANDS[name]
    return next((c for c in STUDY_COMMANDS.values() if c.experiment == name), None)


__all__ = ["STUDY_COMMANDS", "Option", "StudyCommand", "register_study_command", "study_command"]

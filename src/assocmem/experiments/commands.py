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


def study_command(name: str) -> StudyCommand | None:
    """The command of a study, by command name or experiment name (None if it has none)."""
    if name in STUDY_COMMANDS:
        return STUDY_COMMANDS[name]
    return next((c for c in STUDY_COMMANDS.values() if c.experiment == name), None)


register_study_command(
    StudyCommand(
        name="editing",
        experiment="beyond-editing",
        help="editing and erasing facts by rank-one changes of the weights",
        description="Edit k tokens of closed-form memories (thresholding, q = p) and of trained "
        "ones to new targets, one after the other, by the closed-form replacement and by ROME's "
        "minimum-norm rank-one update (C = I and the key covariance), and erase associations: "
        "success, the change of the other tokens' exact p-weighted error (collateral damage), "
        "which tokens break by frequency rank, and the edit capacity (edits until that error "
        "rises by 10 %) against d, with the interference theory. Prints a table and the judged "
        "claims; --out keeps the runs and the figure.",
        options=(
            Option("dim", "int", "memory dimensions d", many=True, low=2),
            Option("alpha", "float", "Zipf exponents α", many=True, low=1e-9),
            Option("memory", "str", 'memories: "trained" or schemes q of W_q', many=True),
            Option("n_inputs", "int", "number of facts N", low=10),
            Option("trials", "int", "independent draws per point", low=1),
            Option("margin", "float", "ROME margin, in noise standard deviations", low=1e-9),
            Option("covariance_reg", "float", "ridge of the key covariance (× tr/d)", low=1e-12),
            Option("max_edits", "int", "longest capacity search", low=1),
        ),
    )
)

__all__ = ["STUDY_COMMANDS", "Option", "StudyCommand", "register_study_command", "study_command"]

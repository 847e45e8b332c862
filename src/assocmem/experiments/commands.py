"""The command line of each study beyond the paper, declared as data: ``assocmem STUDY …``.

A study is an :class:`~assocmem.experiments.experiment.Experiment` of the registry (its sweeps,
claims, figure and table); its :class:`StudyCommand` here says which of its settings the command
line may change. ``assocmem`` builds one subcommand per entry of :data:`STUDY_COMMANDS`, and
:func:`assocmem.run_study` runs it, so the command and the library do the same thing.

This module imports nothing but the standard library: ``assocmem --help`` and ``assocmem STUDY
--help`` are built from it without torch, pandas or matplotlib.

A study registers through one function, :func:`register_study` (its experiment and its
command), whether it is built in or comes from another package. Another package is found by
its Python entry point in the group ``assocmem.studies`` (in its pyproject.toml, ``toy =
"toy_study:register"`` under ``[project.entry-points."assocmem.studies"]``):
:func:`load_studies` loads each one (a module that calls ``register_study`` when imported, or
a function that it calls) before ``assocmem`` builds its commands and when the experiment
registry is first imported, so the study gets its ``assocmem NAME`` command and its
``reproduce --only`` item with no edit here.
"""

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

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


SUPERPOSITION_COMMAND = StudyCommand(
    name="superposition",
    experiment="beyond-superposition",
    help="associative memories in parallel: H heads against one memory",
    description="H memories in parallel (heads), each with its own embeddings of dimension d_h, "
    "scores summed, against one memory of dimension d at equal width, equal matrix parameters "
    "and equal parameters counting the embeddings: closed-form heads storing the same scheme "
    "or routed tokens (by frequency band or at random, read from every head or only their "
    "own), the summed-heads signal-to-noise prediction, and heads trained jointly (SGD and "
    "sign-Adam) with the participation ratio of their margins. Prints the error at d = 256 "
    "per budget, H and arrangement, and the judged claims.",
    options=(
        Option("dims", "int", "single-memory dimensions d (closed form)", many=True, low=1),
        Option("heads", "int", "numbers of heads H", many=True, low=1),
        Option("budgets", "str", "budgets", many=True, choices=("width", "matrix", "total")),
        Option("schemes", "str", "sample-free schemes q (closed form)", many=True),
        Option("trials", "int", "closed-form draws per point", low=1),
        Option("seeds", "int", "seeds per trained point", low=1),
        Option("dim", "int", "the d of the trained heads (H·d_h = d)", low=1),
        Option("lr", "float", "learning rates of the trained heads", many=True, low=1e-12),
        Option("n_samples", "int", "samples T of the trained heads", low=1),
    ),
    tiny=(
        ("dims", [16, 32]),
        ("heads", [1, 2]),
        ("trials", 2),
        ("seeds", 1),
        ("lr", [10.0]),
        ("n_samples", 1024),
    ),
)


HIERARCHY_COMMAND = StudyCommand(
    name="hierarchy",
    experiment="beyond-hierarchy",
    help="memories in series x → z → y against one direct memory",
    description="Two associative memories in series, x → z = f₁(x) ∈ [K] → y = z mod M, "
    "against one direct memory at equal parameters: exact closed-form errors of the hard "
    "and soft compositions and of their parts, with the theory's predictions, the map over "
    "(K, α) of where each wins, error vs T, and a bottleneck trained end to end (does it "
    "find f₁?). Prints the table at d = 512 and the judged claims (docs: "
    "beyond/hierarchy.md).",
    options=(
        Option("trials", "int", "independent draws (trained: seeds) per point", low=1),
        Option("dims", "int", "closed form: the direct memory's d", many=True, low=2),
        Option(
            "schemes",
            "str",
            "closed form: memory 1's and the direct memory's schemes",
            many=True,
        ),  # fmt: skip
        Option("concept_scheme", "str", "closed form: memory 2's scheme"),
        Option("dim", "int", "trained: the direct memory's d", many=True, low=2),
        Option("lr", "float", "trained: Adam's learning rates", many=True, low=1e-12),
        Option("n_steps", "int", "trained: optimiser steps", low=1),
    ),
    tiny=(("trials", 1), ("dims", [16, 32]), ("dim", [32]), ("n_steps", 20)),
)

VOCABULARY_COMMAND = StudyCommand(
    name="vocabulary",
    experiment="beyond-vocabulary",
    help="scaling laws over every word of the English list (N = 321,180)",
    description="Closed-form memories over the full English word law of wordfreq (its "
    "large list; needs the words extra): error vs d (64 to 16,384) for q = p, "
    "q = 1{x <= d/8} and the empirical threshold P = d/12 at T = 1e4..1e8 (counts drawn as "
    "multinomial vectors), with the curves predicted from the law, slopes fitted per "
    "window with bootstrap intervals, and the single-exponent theory at the Zipf exponent "
    "fitted as by 'words --compare'. Prints the slopes table and the judged claims (docs: "
    "beyond/vocabulary.md).",
    options=(
        Option("dims", "int", "memory dimensions d", many=True, low=1),
        Option("n_samples", "str", "sample sizes T (integers, or inf)", many=True),
        Option("trials", "int", "independent draws per point", low=1),
        Option("seed", "int", "base seed", low=0),
    ),
    tiny=(("dims", [64, 128]), ("n_samples", ["10000", "inf"]), ("trials", 1)),
)

NOISE_THRESHOLD_COMMAND = StudyCommand(
    "noise-threshold",
    "beyond-noise-threshold",
    "noisy associations: store a token once seen k times?",
    "Label noise ε: a sample's label is f*(x) w.p. 1 − ε. The scheme min_count stores x "
    "once seen k times (at most d/8 tokens, or no cap), with its majority label or its label "
    "law; error vs k, the best k and its error, measured and predicted (exact majority "
    "vote, binomial counts, interference retrieval). Docs: beyond/noise-threshold.md.",
    (
        Option("dims", "int", "memory dimensions d", many=True, low=1),
        Option("n_samples", "int", "sample sizes T", many=True, low=1),
        Option("alpha", "float", "Zipf exponents α", many=True, low=0),
        Option("label_noise", "float", "label noise levels ε", many=True, low=0),
        Option("label_rule", "str", "label rules", many=True, choices=("majority", "soft")),
        Option("trials", "int", "independent draws per point", low=1),
    ),
    (("dims", [16, 32]), ("n_samples", [300, 1000]), ("trials", 2)),
)

EDITING_COMMAND = StudyCommand(
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
    tiny=(("dim", [16, 32]), ("trials", 1), ("max_edits", 64)),
)

SIMILAR_COMMAND = StudyCommand(
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
    tiny=(("similarity", [0.0, 0.6]), ("n_groups", [20]), ("trials", 2)),
)

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


def register_study(
    command: StudyCommand, experiment: "Experiment | str | None" = None
) -> StudyCommand:
    """Register a study: its experiment (sweeps, claims, figure, table) and its command.

    Parameters
    ----------
    command : StudyCommand
        Its ``assocmem NAME`` command: ``command.experiment`` names the experiment it runs.
    experiment : Experiment or str, optional
        The experiment, added to :data:`assocmem.EXPERIMENTS` (after those registered before
        it). Its ``item`` is its ``reproduce --only`` choice (``"beyond"``: drawn with the
        studies beyond the paper). A ``"module:ATTRIBUTE"`` string names the module that
        defines it (and registers the study's run kinds), imported only when the experiment
        registry or a sweep of its kinds needs it: how the built-in studies register, so that
        the command line stays light. None: it is registered already.

    Returns
    -------
    StudyCommand
        ``command`` itself.

    Raises
    ------
    ValueError
        If another study holds the command's name or the experiment's, or the experiment is
        not the one the command names.

    Notes
    -----
    The one way a study is registered, built in (``assocmem/studies/NAME/__init__.py``) or
    from another package (an entry
    point of the group ``assocmem.studies``, see :func:`load_studies`). See the docs:
    tutorials/add-experiment.md.
    """
    if isinstance(experiment, str):
        defer_experiment(command.experiment, experiment)
    elif experiment is not None:
        if experiment.name != command.experiment:
            raise ValueError(
                f"study {command.name!r} runs experiment {command.experiment!r}, "
                f"not {experiment.name!r}"
            )
        registry = importlib.import_module("assocmem.experiments.registry")
        registry.register_experiment(experiment)
    return register_study_command(command)


def study_command(name: str) -> StudyCommand | None:
    """The command of a study, by command name or experiment name (None if it has none)."""
    if name in STUDY_COMMANDS:
        return STUDY_COMMANDS[name]
    return next((c for c in STUDY_COMMANDS.values() if c.experiment == name), None)


# The studies built in (their experiments are in the registry, in report order).
for _command in (
    SUPERPOSITION_COMMAND,
    HIERARCHY_COMMAND,
    VOCABULARY_COMMAND,
    NOISE_THRESHOLD_COMMAND,
    EDITING_COMMAND,
    SIMILAR_COMMAND,
):
    register_study(_command)

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

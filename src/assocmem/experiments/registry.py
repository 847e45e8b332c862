"""Every experiment of ``assocmem reproduce``, in report order: the paper's figures, Table 1,
the claims without a figure, then the studies beyond the paper.

Adding an experiment: a module defining an :class:`~assocmem.experiments.experiment.Experiment`
and one line here. Its ``item`` is the ``reproduce --only`` choice that draws it. A study from
another package registers itself with ``register_study`` (its entry point is loaded at the end
of this module's import, see :func:`assocmem.experiments.commands.load_studies`).
"""

from assocmem.experiments.closed_form_checks import FINITE_DATA, OVERFLOW, RHO
from assocmem.experiments.experiment import Experiment
from assocmem.experiments.figure1 import FIGURE_1
from assocmem.experiments.figure3 import FIGURE_3
from assocmem.experiments.figure4 import FIGURE_4
from assocmem.experiments.figure5 import FIGURE_5
from assocmem.experiments.figure7 import FIGURE_7
from assocmem.experiments.figure8 import FIGURE_8
from assocmem.experiments.pictures import FIGURE_6, MEMORY
from assocmem.experiments.table1 import TABLE_1
from assocmem.plugins import deferred_experiments

EXPERIMENTS: dict[str, Experiment] = {
    e.name: e
    for e in (
        FIGURE_1,
        FIGURE_3,
        FIGURE_4,
        MEMORY,
        FIGURE_5,
        FIGURE_6,
        FIGURE_7,
        FIGURE_8,
        TABLE_1,
        RHO,
        FINITE_DATA,
        OVERFLOW,
    )
}
"""Every :class:`Experiment` by name (the paper's figures, Table 1 and the studies beyond it),
in report order: what ``reproduce`` runs and draws; :func:`register_experiment` adds one (docs:
tutorials/add-experiment.md)."""
BEYOND = "beyond"  # the item of the studies beyond the paper (drawn only when asked for)
CLAIMS_ITEM = "claims"  # judges the claims of every paper experiment


def paper_items() -> tuple[str, ...]:
    """The ``reproduce --only`` items of the paper, in report order, then "claims"."""
    items = (e.item for e in EXPERIMENTS.values() if e.item not in (None, BEYOND))
    return (*dict.fromkeys(i for i in items if i is not None), CLAIMS_ITEM)


def only_groups() -> dict[str, tuple[str, ...]]:
    """The ``reproduce --only`` choices in two groups, as the error and the docs list them:
    "items" (:func:`paper_items`, then "beyond": each draws every experiment of its item) and
    "experiments" (each registered experiment's name, in report order, not already an item:
    it selects that experiment alone)."""
    items = (*paper_items(), BEYOND)
    return {"items": items, "experiments": tuple(n for n in EXPERIMENTS if n not in items)}


def only_choices() -> tuple[str, ...]:
    """Every ``reproduce --only`` choice: the items, then the experiments' names
    (:func:`only_groups`, flattened)."""
    return tuple(name for group in only_groups().values() for name in group)


def register_experiment(experiment: Experiment) -> Experiment:
    """Add an experiment to :data:`EXPERIMENTS` (after the built-in ones) under its ``name``.

    Parameters
    ----------
    experiment : Experiment
        Its sweeps per scale, its judged claims, its figure and/or table. Its ``item`` is the
        ``reproduce(only=[...])`` choice that draws it: a new item, an existing one (drawn
        together), ``"beyond"`` (with the studies beyond the paper), or None (claims only).

    Returns
    -------
    Experiment
        ``experiment`` itself.

    Raises
    ------
    TypeError
        If ``experiment`` is not an :class:`Experiment`.
    ValueError
        If another experiment already holds its name (the same one again is a no-op).

    Notes
    -----
    Registered before :func:`assocmem.reproduce` is called, it is run, drawn and judged with
    the others. See the docs: architecture.md, "Extending assocmem".
    """
    if not isinstance(experiment, Experiment):
        raise TypeError(f"register_experiment takes an Experiment, got {experiment!r}")
    held = EXPERIMENTS.get(experiment.name)
    if held is not None and held is not experiment:
        raise ValueError(f"experiment {experiment.name!r} is already registered")
    EXPERIMENTS[experiment.name] = experiment
    return experiment


def drawn(items: set[str]) -> list[Experiment]:
    """The experiments whose figure or table the ``--only`` choices ask for (by item or by
    name), in report order."""
    return [e for e in EXPERIMENTS.values() if e.item in items or e.name in items]


def judged(items: set[str]) -> list[Experiment]:
    """The experiments whose claims are judged: every paper experiment under the "claims" item,
    every study beyond the paper under the "beyond" item, a figure's own claims under its
    item ("4" judges claims 1–4), and an experiment's own claims under its name."""
    return [e for e in EXPERIMENTS.values() if e.claims and _judging_choices(e) & items]


def _judging_choices(experiment: Experiment) -> set[str | None]:
    """The ``--only`` choices that judge ``experiment``'s claims: its section ("beyond" or
    "claims"), its item and its name."""
    section = BEYOND if experiment.item == BEYOND else CLAIMS_ITEM
    return {section, experiment.item, experiment.name}


for _experiment in deferred_experiments():  # the studies' folders, then other packages'
    register_experiment(_experiment)

# at import, the studies' folders included (the CLI's choices); reproduce() reads the functions
PAPER_ITEMS = paper_items()
ONLY_CHOICES = only_choices()

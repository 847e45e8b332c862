"""Every experiment of ``assocmem reproduce``, in report order: the paper's figures, Table 1,
the claims without a figure, then the studies beyond the paper.

Adding an experiment: a module defining an :class:`~assocmem.experiments.experiment.Experiment`
and one line here. Its ``item`` is the ``reproduce --only`` choice that draws it.
"""

from assocmem.experiments.beyond import CAPACITY_FRONTIER, LAWS, NOISE
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
        NOISE,
        LAWS,
        CAPACITY_FRONTIER,
    )
}
BEYOND = "beyond"  # the item of the studies beyond the paper (drawn only when asked for)
CLAIMS_ITEM = "claims"  # judges the claims of every paper experiment
PAPER_ITEMS = (
    *dict.fromkeys(e.item for e in EXPERIMENTS.values() if e.item not in (None, BEYOND)),
    CLAIMS_ITEM,
)
ONLY_CHOICES = (*PAPER_ITEMS, BEYOND)


def drawn(items: set[str]) -> list[Experiment]:
    """The experiments whose figure or table the ``--only`` items ask for, in report order."""
    return [e for e in EXPERIMENTS.values() if e.item in items]


def judged(items: set[str]) -> list[Experiment]:
    """The paper experiments whose claims are judged: all of them under the "claims" item."""
    if CLAIMS_ITEM not in items:
        return []
    return [e for e in EXPERIMENTS.values() if e.claims and e.item != BEYOND]

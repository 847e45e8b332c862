"""The factual-recall study: N facts with as many answers, capacity in bits per
parameter, linear against MLP memories (docs: beyond/facts.md). Light: its command here, its
experiment and run kind in :mod:`assocmem.studies.facts.experiment`; the capacity frontiers it
extends (``beyond-capacity``, the ``capacity`` run kind) in
:mod:`assocmem.studies.facts.frontier_experiment`."""

from assocmem.experiments.commands import Option, StudyCommand, register_study

FACTS_COMMAND = StudyCommand(
    name="facts",
    experiment="beyond-facts",
    help="factual recall: N facts, M = N answers, capacity and bits per parameter",
    description="N facts x -> f*(x) with as many answers (M = N, f* a random permutation, "
    "uniform law): the capacity N*(d) at top-1 accuracy >= 0.99 of the outer-product memory "
    "(closed form, top-1 in blocks) and of trained linear and MLP key-value memories (SGD and "
    "sign-Adam of the optimiser registry) beside the sharp threshold d^2 = 2 N ln N and an "
    "extreme-value model of the outer product, local slopes of N*(d), bits per parameter (the "
    "information of f* less Fano's term) beside the 2 bits/parameter of trained language "
    "models, and the error law for M = 5, 50, 500, N under Zipf with the M - 1-competitor "
    "theory. Prints a table and the judged claims (docs: beyond/facts.md).",
    options=(
        Option("dim", "int", "memory dimensions d (capacity searches)", many=True, low=2),
        Option("seed", "int", "independent searches (seeds)", many=True, low=0),
        Option("trials", "int", "draws per accuracy (closed form: per error point)", low=1),
    ),
    tiny=(("dim", [16, 24]), ("seed", [0, 1]), ("trials", 2), ("dims", [32, 64])),
)

# The capacity frontiers (``assocmem capacity`` runs one search with its own flags),
# drawn by reproduce --beyond before this study's own experiment.
register_study(
    FACTS_COMMAND,
    "assocmem.studies.facts.frontier_experiment:CAPACITY_FRONTIER",
    "assocmem.studies.facts.experiment:FACTS",
)

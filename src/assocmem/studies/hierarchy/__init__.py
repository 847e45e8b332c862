"""Associative memories in series, closed form and trained (docs: beyond/hierarchy.md)."""

from assocmem.experiments.commands import Option, StudyCommand, register_study

COMMAND = StudyCommand(
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

register_study(COMMAND, "assocmem.studies.hierarchy.experiment:HIERARCHY")

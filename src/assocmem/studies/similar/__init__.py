"""Similar tokens: clustered input embeddings (docs: beyond/similar.md)."""

from assocmem.experiments.commands import Option, StudyCommand, register_study

COMMAND = StudyCommand(
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

register_study(COMMAND, "assocmem.studies.similar.experiment:SIMILAR")

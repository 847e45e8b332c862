"""Associative memories in parallel: H heads against one memory (docs: beyond/superposition.md)."""

from assocmem.experiments.commands import Option, StudyCommand, register_study

COMMAND = StudyCommand(
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

register_study(COMMAND, "assocmem.studies.superposition.experiment:SUPERPOSITION")

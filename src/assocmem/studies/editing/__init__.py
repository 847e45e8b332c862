"""Editing and erasing facts by rank-one changes of the weights (docs: beyond/editing.md)."""

from assocmem.experiments.commands import Option, StudyCommand, register_study

COMMAND = StudyCommand(
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

register_study(COMMAND, "assocmem.studies.editing.experiment:EDITING")

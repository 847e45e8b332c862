"""Noisy labels and the rule "store a token once seen k times" (docs: beyond/noise-threshold.md)."""

from assocmem.experiments.commands import Option, StudyCommand, register_study

COMMAND = StudyCommand(
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
        Option("alpha", "float", "Zipf exponents α (> 0)", many=True, low=1e-9),
        Option("label_noise", "float", "label noise levels ε", many=True, low=0),
        Option("label_rule", "str", "label rules", many=True, choices=("majority", "soft")),
        Option("trials", "int", "independent draws per point", low=1),
    ),
    (("dims", [16, 32]), ("n_samples", [300, 1000]), ("trials", 2)),
)

register_study(COMMAND, "assocmem.studies.noise_threshold.experiment:NOISE_THRESHOLD")

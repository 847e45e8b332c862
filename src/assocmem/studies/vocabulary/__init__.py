"""Scaling laws over a whole vocabulary of real words (docs: beyond/vocabulary.md)."""

from assocmem.experiments.commands import Option, StudyCommand, register_study

COMMAND = StudyCommand(
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

register_study(COMMAND, "assocmem.studies.vocabulary.experiment:VOCABULARY")

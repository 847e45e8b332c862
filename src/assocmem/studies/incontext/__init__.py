"""Memories written in context: the MQAR task and the closed-form memories that sequence mixers
write while they read it — linear attention (Hebbian), the delta rule (gated or not), softmax
attention — with their exact recall error, their capacity and the theory beside them
(``assocmem incontext``; docs: beyond/incontext.md).
"""

from assocmem.experiments.commands import Option, StudyCommand, register_study
from assocmem.studies.incontext.contexts import GENERATOR_VERSION, Contexts, mqar_contexts
from assocmem.studies.incontext.states import (
    RULES,
    DeltaRule,
    HardAttention,
    Hebbian,
    SoftmaxAttention,
    recall_error,
)

COMMAND = StudyCommand(
    name="incontext",
    experiment="beyond-incontext",
    help="memories written in context: linear attention, delta rule, softmax attention (MQAR)",
    description="Multi-query associative recall: contexts of T key-value pairs (keys Zipf(α) "
    "over N, a fresh map per context) read by linear attention (Hebbian, gated or not), the "
    "delta rule (β, passes, gate), softmax attention (β per √d) and its limit, hard "
    "attention, each in closed form: the exact recall error against d and T, the capacity "
    "T*(d) at 99 % recall, the paper's interference prediction for the Hebbian state and the "
    "extreme-value prediction for hard attention. Prints the capacities and the judged "
    "claims (docs: beyond/incontext.md).",
    options=(
        Option("alpha", "float", "Zipf exponents α of the keys (≥ 0)", many=True, low=0),
        Option("contexts", "int", "contexts read per trial", low=2),
        Option("trials", "int", "independent trials per point", low=1),
    ),
    tiny=(("alpha", [0.0]), ("contexts", 4), ("trials", 1)),
)

register_study(COMMAND, "assocmem.studies.incontext.experiment:INCONTEXT")

__all__ = [
    "GENERATOR_VERSION",
    "RULES",
    "Contexts",
    "DeltaRule",
    "HardAttention",
    "Hebbian",
    "SoftmaxAttention",
    "mqar_contexts",
    "recall_error",
]

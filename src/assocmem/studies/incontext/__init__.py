"""Memories written in context: the MQAR task and the closed-form memories that sequence mixers
write while they read it — linear attention (Hebbian), the delta rule (gated or not), softmax
attention and hard attention — with their exact recall error, their capacity and the theory
beside them (``assocmem incontext``; docs: beyond/incontext.md).

The package is light (``assocmem --help`` imports no torch): its public names are imported from
:mod:`~assocmem.studies.incontext.contexts` and :mod:`~assocmem.studies.incontext.states` when
first read.
"""

import importlib
from typing import Any

from assocmem.experiments.commands import Option, StudyCommand, register_study

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

_PUBLIC = {  # name → the module that defines it
    "GENERATOR_VERSION": "contexts",
    "Contexts": "contexts",
    "mqar_contexts": "contexts",
    "RULES": "states",
    "DeltaRule": "states",
    "HardAttention": "states",
    "Hebbian": "states",
    "SoftmaxAttention": "states",
    "recall_error": "states",
}


def __getattr__(name: str) -> Any:
    """The public names, imported on first use (PEP 562)."""
    if name not in _PUBLIC:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_PUBLIC[name]}"), name)


__all__ = sorted(_PUBLIC)

"""Memories written in context (in progress): the MQAR task and the closed-form memories that
sequence mixers write while they read it — linear attention (Hebbian), the delta rule (gated or
not), softmax attention — with their exact recall error.

The library part stands (:mod:`~assocmem.studies.incontext.contexts`,
:mod:`~assocmem.studies.incontext.states`); the study's command, sweeps, theory curves, trained
layers and claims are still to come, so it registers no command yet.
"""

from assocmem.studies.incontext.contexts import GENERATOR_VERSION, Contexts, mqar_contexts
from assocmem.studies.incontext.states import (
    RULES,
    DeltaRule,
    Hebbian,
    SoftmaxAttention,
    recall_error,
)

__all__ = [
    "GENERATOR_VERSION",
    "RULES",
    "Contexts",
    "DeltaRule",
    "Hebbian",
    "SoftmaxAttention",
    "mqar_contexts",
    "recall_error",
]

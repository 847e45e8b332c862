r"""Closed-form memories :math:`W_q = \sum_x q(x)\, u_{f^*(x)} e_x^\top`.

Their configuration (config), what trials share (problem), the batched kernel that computes
their exact population error (kernel), the samplers that draw the input embeddings' randomness
(samplers: explicit, in_law; cost: which one runs), the readout (readout) and the result
(result)."""

from assocmem.closed_form.config import ClosedFormConfig, config_from_mapping
from assocmem.closed_form.kernel import retrieval, run_closed_form, trial_scores
from assocmem.closed_form.readout import calibrated_softmax
from assocmem.closed_form.result import ClosedFormResult, Column, summary_rows

__all__ = [
    "ClosedFormConfig",
    "ClosedFormResult",
    "Column",
    "calibrated_softmax",
    "config_from_mapping",
    "retrieval",
    "run_closed_form",
    "summary_rows",
    "trial_scores",
]

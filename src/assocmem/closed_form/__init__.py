"""Closed-form memories ``W_q = Σ_x q(x) u_{f*(x)} e_xᵀ``: their configuration and the batched
kernel that computes their exact population error."""

from assocmem.closed_form.config import ClosedFormConfig, config_from_mapping
from assocmem.closed_form.kernel import (
    ClosedFormResult,
    Column,
    calibrated_softmax,
    run_closed_form,
    summary_rows,
    trial_scores,
)

__all__ = [
    "ClosedFormConfig",
    "ClosedFormResult",
    "Column",
    "calibrated_softmax",
    "config_from_mapping",
    "run_closed_form",
    "summary_rows",
    "trial_scores",
]

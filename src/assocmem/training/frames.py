"""Training results as tidy pandas DataFrames, with the columns :func:`assocmem.load_results`
gives the same runs once stored by a sweep (so a notebook can mix the two)."""

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from assocmem.training.records import RunResult

if TYPE_CHECKING:
    import pandas as pd

METRICS = (
    "error", "head_error", "tail_error", "cross_entropy",
    "p_correct", "noisy_error", "bayes_error", "excess_error",
)  # fmt: skip


def _config_cells(result: RunResult) -> dict[str, Any]:
    """The run's flat config (optimiser name and hyper-parameters as columns), lists as tuples."""
    return {k: tuple(v) if isinstance(v, list) else v for k, v in result.config.to_dict().items()}


def runs_frame(results: Sequence[RunResult]) -> "pd.DataFrame":
    """One row per training run: its config, status and metrics.

    Parameters
    ----------
    results : sequence of RunResult
        What :func:`train` returned.

    Returns
    -------
    pandas.DataFrame
        One row per run, in order. Columns: the flat config (``n_inputs``, ``n_outputs``,
        ``alpha``, ``dim``, ``n_samples``, ``batch_size``, ``model``, ``optimizer`` (its name),
        its hyper-parameters (``momentum``, ``betas``, ``eps``, ``weight_decay``), ``lr``,
        ``seed``, ...), then ``status`` (``"ok"`` or ``"diverged"``), the metrics ``error``,
        ``head_error``, ``tail_error``, ``cross_entropy``, ``p_correct``, ``noisy_error``,
        ``bayes_error``, ``excess_error`` (float64) and ``kernel`` (str).

    Notes
    -----
    Average over seeds with :func:`aggregate`, choose learning rates with :func:`select_lr`.
    """
    import pandas as pd

    rows = [
        {
            **_config_cells(r),
            "status": r.status,
            **{m: float(getattr(r, m)) for m in METRICS},
            "kernel": r.kernel,
        }
        for r in results
    ]
    return pd.DataFrame(rows)


def curves_frame(results: Sequence[RunResult]) -> "pd.DataFrame":
    """One row per (run, evaluated step) of the runs that recorded their error along training.

    Parameters
    ----------
    results : sequence of RunResult
        What :func:`train` returned (runs with ``eval_every > 0`` have curves).

    Returns
    -------
    pandas.DataFrame
        The run's flat config columns (as in :func:`runs_frame`), then ``step`` (int) and
        ``error`` (float64): what :func:`figure5` and the step panels of the figures read.
    """
    import pandas as pd

    rows = [
        {**_config_cells(r), "step": int(step), "error": float(error)}
        for r in results
        for step, error in r.curve
    ]
    return pd.DataFrame(rows)

"""The result of a closed-form run: per-trial metrics of every (column, d) and their records."""

import math
import platform
import socket
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from assocmem import __version__
from assocmem.closed_form.config import ClosedFormConfig
from assocmem.laws.tokens import noisy_error
from assocmem.runtime import numerics

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class Column:
    """One weighting evaluated at every d: a scheme at one sample size (None = infinite data)."""

    scheme: str
    n_samples: int | None


@dataclass
class ClosedFormResult:
    """Per-trial errors of every (column, d) of a closed-form run, and their summaries.

    Attributes
    ----------
    config : ClosedFormConfig
        The experiment.
    trials : list of int
        The trial indices, in the order of the first axis.
    columns : list of Column
        A column is one scheme at one sample size (``n_samples`` None for infinite data).
    dims : list of int
        The dimensions d, in the order of the last axis.
    errors : numpy.ndarray of float64, shape (n_trials, n_columns, n_dims)
        The population error of each memory.
    head : numpy.ndarray of float64, shape (n_trials, n_columns, n_dims)
        The part of it on the head tokens (the tail part is ``errors - head``).
    readout : dict of str to numpy.ndarray
        With ``config.readout``: ``cross_entropy``, ``p_correct``, ``beta``, each of that shape.
    provenance : dict
        Version, device, host and wall time.
    """

    config: ClosedFormConfig
    trials: list[int]
    columns: list[Column]
    dims: list[int]
    errors: np.ndarray
    head: np.ndarray
    readout: dict[str, np.ndarray] = field(default_factory=dict)  # cross_entropy, p_correct, beta
    provenance: dict[str, Any] = field(default_factory=dict)

    @property
    def records(self) -> list[dict[str, Any]]:
        """One summary record per (scheme, T, d).

        Returns
        -------
        list of dict
            Keys ``scheme``, ``dim``, ``n_samples`` (None for infinite data), ``n_trials``,
            ``mean``, ``std``, ``sem`` (over trials), ``head_mean``, ``tail_mean``,
            ``errors`` (the per-trial list), the noisy-label metrics under label noise and
            ``<metric>_mean`` of the readout metrics.
        """
        out = []
        n = len(self.trials)
        for c, column in enumerate(self.columns):
            for i, dim in enumerate(self.dims):
                values = self.errors[:, c, i]
                std = float(values.std(ddof=1)) if n > 1 else 0.0
                out.append(
                    {
                        "scheme": column.scheme,
                        "dim": dim,
                        "n_samples": column.n_samples,
                        "n_trials": n,
                        "mean": float(values.mean()),
                        "std": std,
                        "sem": std / math.sqrt(n),
                        "head_mean": float(self.head[:, c, i].mean()),
                        "tail_mean": float((values - self.head[:, c, i]).mean()),
                        "errors": values.tolist(),
                        **self._noisy(float(values.mean())),
                        **{f"{k}_mean": float(v[:, c, i].mean()) for k, v in self.readout.items()},
                    }
                )
        return out

    def _noisy(self, error: float) -> dict[str, float]:
        r"""With label noise ε: the error against noisy labels and the Bayes floor ε.

        The Bayes predictor is f* (ε < (M−1)/M); a predictor wrong (vs f*) on mass E has error
        :math:`\varepsilon + (1 - \varepsilon M/(M-1)) E` against the noisy labels, so its excess
        error is ∝ E.
        """
        eps, m = self.config.label_noise, self.config.n_outputs
        if eps == 0:
            return {}
        return {"noisy_mean": noisy_error(error, eps, m), "bayes_error": eps}

    def to_frame(self) -> "pd.DataFrame":
        """Tidy rows: one per (trial, scheme, T, d).

        Returns
        -------
        pandas.DataFrame
            Columns ``scheme`` (str, the scheme spec), ``dim`` (int), ``n_samples`` (float,
            ``inf`` for infinite data), ``trial`` (int), ``error``, ``head_error`` and
            ``tail_error`` (float64; ``error = head_error + tail_error``): the columns
            :func:`assocmem.load_results` gives the same runs once stored by a sweep, and
            what the figure functions read.
        """
        import pandas as pd

        rows = [
            {
                "scheme": column.scheme,
                "dim": dim,
                "n_samples": math.inf if column.n_samples is None else column.n_samples,
                "trial": trial,
                "error": self.errors[r, c, i],
                "head_error": self.head[r, c, i],
                "tail_error": self.errors[r, c, i] - self.head[r, c, i],
            }
            for r, trial in enumerate(self.trials)
            for c, column in enumerate(self.columns)
            for i, dim in enumerate(self.dims)
        ]
        return pd.DataFrame(rows)

    def to_json(self) -> dict[str, Any]:
        """The result as JSON-ready data (what ``assocmem closed-form --format json`` writes).

        Returns
        -------
        dict
            ``{"kind": "closed_form", "config": ..., "records": ..., "provenance": ...}``
            with the :attr:`records`; :func:`fit_records` reads it.
        """
        return {
            "kind": "closed_form",
            "config": self.config.to_dict(),
            "records": self.records,
            "provenance": self.provenance,
        }


def provenance(device: str, wall_seconds: float, sampler: str = "explicit") -> dict[str, Any]:
    """Where and how a run was computed (``sampler``: the resolved closed-form sampler)."""
    return {
        "sampler": sampler,
        "assocmem": __version__,
        "torch": torch.__version__,
        "python": platform.python_version(),
        "device": device,
        "host": socket.gethostname(),
        "wall_seconds": round(wall_seconds, 3),
        **numerics(device),  # CPU: cpu_pin; CUDA: deterministic, tf32
    }


def summary_rows(records: Sequence[dict[str, Any]]) -> list[list[Any]]:
    """Table rows (scheme, d, T, mean, sem, head, tail) for printing."""
    return [
        [
            r["scheme"],
            r["dim"],
            "inf" if r["n_samples"] is None else r["n_samples"],
            r["mean"],
            r["sem"],
            r["head_mean"],
            r["tail_mean"],
        ]
        for r in records
    ]

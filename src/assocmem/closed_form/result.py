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

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class Column:
    """One weighting evaluated at every d: a scheme at one sample size (None = infinite data)."""

    scheme: str
    n_samples: int | None


@dataclass
class ClosedFormResult:
    """Per-trial errors of every (column, d), and their summary records.

    errors, head: (n_trials, n_columns, n_dims) float64 — the population error and the part of
    it on the head tokens (the tail part is ``errors - head``). readout: the same shape, the
    calibrated softmax metrics when the config asks for them (``readout = true``).
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
        """One record per scheme × d × T with mean, std and standard error over trials."""
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
        """With label noise ε: the error against noisy labels and the Bayes floor ε.

        The Bayes predictor is f* (ε < (M−1)/M); a predictor wrong (vs f*) on mass E has error
        ``ε + (1 − ε M/(M−1)) E`` against the noisy labels, so its excess error is ∝ E.
        """
        eps, m = self.config.label_noise, self.config.n_outputs
        if eps == 0:
            return {}
        return {"noisy_mean": noisy_error(error, eps, m), "bayes_error": eps}

    def to_frame(self) -> "pd.DataFrame":
        """Tidy rows, one per trial: scheme, dim, n_samples (inf = ∞), trial, error, head, tail."""
        import pandas as pd

        rows = [
            {
                "scheme": column.scheme,
                "dim": dim,
                "n_samples": math.inf if column.n_samples is None else column.n_samples,
                "trial": trial,
                "error": self.errors[r, c, i],
                "head": self.head[r, c, i],
                "tail": self.errors[r, c, i] - self.head[r, c, i],
            }
            for r, trial in enumerate(self.trials)
            for c, column in enumerate(self.columns)
            for i, dim in enumerate(self.dims)
        ]
        return pd.DataFrame(rows)

    def to_json(self) -> dict[str, Any]:
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

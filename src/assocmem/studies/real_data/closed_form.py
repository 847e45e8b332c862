"""Closed-form scaling on real word distributions, next to the synthetic Zipf law at the
estimated α (the KL-closest Zipf over the same N tokens)."""

from dataclasses import dataclass
from typing import Any

import numpy as np

from assocmem.analysis.fit import fit_scaling
from assocmem.closed_form import ClosedFormResult, run_closed_form
from assocmem.closed_form.config import ClosedFormConfig
from assocmem.laws.words import word_distribution


@dataclass
class LawComparison:
    """Slopes in d of each (scheme, T) column, for the real law and its Zipf fit."""

    language: str
    alpha: float
    rows: list[dict[str, Any]]


def _slopes(result: ClosedFormResult, seed: int) -> dict[tuple[str, int | None], Any]:
    out = {}
    dims = np.asarray(result.dims, dtype=float)
    for c, column in enumerate(result.columns):
        errors = result.errors[:, c, :]
        fit = fit_scaling(dims, errors, n_boot=500, seed=seed) if len(dims) >= 3 else None
        out[(column.scheme, column.n_samples)] = (fit, errors.mean(axis=0)[-1])
    return out


def compare_with_zipf(language: str, *, progress: bool = False, **config: Any) -> LawComparison:
    """Run the same closed-form experiment on ``language``'s words and on Zipf(α̂)
    (``config``: :class:`ClosedFormConfig` fields; ``progress``: a bar per run on stderr)."""
    base = ClosedFormConfig(**config)
    alpha = word_distribution(language, base.n_inputs).alpha_kl
    real_cfg = ClosedFormConfig(**{**base.to_dict(), "words": language})
    real = run_closed_form(real_cfg, progress=progress)
    zipf_cfg = ClosedFormConfig(**{**base.to_dict(), "words": None, "alpha": alpha})
    zipf = run_closed_form(zipf_cfg, progress=progress)
    real_fits, zipf_fits = _slopes(real, base.seed), _slopes(zipf, base.seed)
    rows = []
    for key, (fit, last) in real_fits.items():
        zfit, zlast = zipf_fits[key]
        rows.append(
            {
                "scheme": key[0],
                "n_samples": key[1],
                "slope_real": None if fit is None else fit.slope,
                "ci_real": None if fit is None else (fit.ci_low, fit.ci_high),
                "slope_zipf": None if zfit is None else zfit.slope,
                "ci_zipf": None if zfit is None else (zfit.ci_low, zfit.ci_high),
                "error_real_dmax": float(last),
                "error_zipf_dmax": float(zlast),
            }
        )
    return LawComparison(language, alpha, rows)

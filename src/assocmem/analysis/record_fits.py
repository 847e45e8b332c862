r"""Scaling fits of closed-form records next to theory: every slope in d (per scheme and T), in T
(per scheme and d) and, on request, the joint law :math:`E \approx A d^{-a} + B T^{-b}` per scheme.

The input is the payload of ``assocmem closed-form --format json`` (``config`` and ``records``,
each record with ``scheme``, ``dim``, ``n_samples`` and the per-trial ``errors``); the theory
slopes come from :func:`assocmem.analysis.theory.scheme_law`.
"""

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from assocmem.analysis.fit import PowerLawFit, fit_scaling
from assocmem.analysis.joint_fit import fit_joint
from assocmem.analysis.theory import SchemeLaw, scheme_law
from assocmem.config.errors import ConfigError
from assocmem.progress import Bar, progress_bar

Record = dict[str, Any]


@dataclass(frozen=True)
class FitOptions:
    """How :func:`fit_records` fits.

    Attributes
    ----------
    d_window, t_window : tuple of (float, float) or None
        The ranges of d and T fitted (None: automatic).
    loss : str
        ``"linear"``, ``"soft_l1"`` or ``"huber"`` (:func:`fit_power_law`).
    n_boot : int
        Bootstrap resamples.
    level : float
        Confidence level of the intervals.
    seed : int
        Seed of the resampling.
    schemes : sequence of str or None
        The scheme specs to fit (None: all).
    joint : bool
        Also fit the joint law (:func:`fit_joint`).
    alpha : float or None
        α of the theory (None: the config's α; no theory for a user-given law).
    """

    d_window: tuple[float, float] | None = None
    t_window: tuple[float, float] | None = None
    loss: str = "linear"
    n_boot: int = 1000
    level: float = 0.95
    seed: int = 0
    schemes: Sequence[str] | None = None
    joint: bool = False
    alpha: float | None = None


def _law(spec: str, alpha: float | None) -> SchemeLaw | None:
    if alpha is None or alpha <= 1:
        return None
    try:
        return scheme_law(spec, alpha)
    except ConfigError:
        return None


def _neg(value: float | None) -> float | None:
    return None if value is None else -value


def _series(records: list[Record], key: str) -> tuple[np.ndarray, np.ndarray]:
    """x values (sorted) and the per-trial errors (n_trials, n_x) of one curve."""
    rows = sorted(records, key=lambda r: r[key])
    x = np.array([r[key] for r in rows], dtype=np.float64)
    errors = np.array([r["errors"] for r in rows], dtype=np.float64).T
    return x, errors


def _fit_row(
    spec: str, variable: str, at: str, fit: PowerLawFit | None, theory: float | None, note: str = ""
) -> Record:
    row: Record = {"scheme": spec, "variable": variable, "at": at, "theory_slope": theory}
    if fit is None:
        return row | {"verdict": note}
    return row | fit.as_dict()


def _by_scheme(records: list[Record], schemes: Sequence[str] | None) -> dict[str, list[Record]]:
    by_scheme: dict[str, list[Record]] = defaultdict(list)
    for record in records:
        by_scheme[record["scheme"]].append(record)
    if schemes:
        missing = [s for s in schemes if s not in by_scheme]
        if missing:
            raise ConfigError(
                "schemes", f"{missing[0]!r} is not in the results; have {', '.join(by_scheme)}"
            )
        by_scheme = defaultdict(list, {s: by_scheme[s] for s in schemes})
    return by_scheme


def _curves(records: list[Record]) -> dict[tuple[str, Any], list[Record]]:
    """The curves of at least 3 points: in d at each T, in T (finite, > 0) at each d."""
    curves: dict[tuple[str, Any], list[Record]] = defaultdict(list)
    for r in records:
        curves[("d", r["n_samples"])].append(r)
        if r["n_samples"] is not None and r["n_samples"] > 0:
            curves[("T", r["dim"])].append(r)
    return {key: curve for key, curve in curves.items() if len(curve) >= 3}


def _curve_fits(
    spec: str, records: list[Record], law: SchemeLaw | None, options: FitOptions, bar: Bar
) -> list[Record]:
    """One fit per curve of :func:`_curves`."""
    theory = {"d": _neg(law.dim_exponent) if law else None}
    theory["T"] = _neg(law.data_exponent) if law else None
    window = {"d": options.d_window, "T": options.t_window}
    fits = []
    for (variable, fixed), curve in _curves(records).items():
        at = f"T={'inf' if fixed is None else fixed}" if variable == "d" else f"d={fixed}"
        x, errors = _series(curve, "dim" if variable == "d" else "n_samples")
        try:
            fit = fit_scaling(
                x, errors, theory_slope=theory[variable], window=window[variable],
                loss=options.loss, n_boot=options.n_boot, level=options.level, seed=options.seed,
            )  # fmt: skip
        except ConfigError as err:
            note = f"not fitted: {err.message}"
            fits.append(_fit_row(spec, variable, at, None, theory[variable], note))
        else:
            fits.append(_fit_row(spec, variable, at, fit, theory[variable]))
        bar.update()
    return fits


def _joint_fit(
    spec: str, records: list[Record], law: SchemeLaw | None, options: FitOptions
) -> Record | None:
    r""":math:`E \approx A d^{-a} + B T^{-b}` on the finite-T records (None with fewer than 2 d or 2
    T)."""
    finite = [r for r in records if r["n_samples"] is not None and r["n_samples"] > 0]
    if len({r["dim"] for r in finite}) < 2 or len({r["n_samples"] for r in finite}) < 2:
        return None
    joint = fit_joint(
        [r["dim"] for r in finite], [r["n_samples"] for r in finite],
        np.array([r["errors"] for r in finite]).T,
        theory_a=law.dim_exponent if law else None, theory_b=law.data_exponent if law else None,
        n_boot=min(options.n_boot, 200), level=options.level, seed=options.seed,
    )  # fmt: skip
    return {"scheme": spec} | joint.as_dict()


def fit_records(
    payload: dict[str, Any], options: FitOptions, *, progress: bool = False
) -> dict[str, Any]:
    """Every slope fit of a closed-form result: in d at each T, in T at each d.

    Parameters
    ----------
    payload : dict
        A closed-form result as JSON (:meth:`ClosedFormResult.to_json`, or ``assocmem
        closed-form --format json``): its ``config`` and ``records``.
    options : FitOptions
        Windows, loss, bootstrap, schemes, joint fit, α.
    progress : bool, default False
        A progress bar of the fits on stderr.

    Returns
    -------
    dict
        ``{"kind": "fit", "alpha": α, "fits": [...], "joint": [...]}``. Each fit row has the
        scheme, the variable (``"d"`` or ``"T"``), where the other is held (``at``), the theory
        slope, and the fit (:meth:`PowerLawFit.as_dict`) or a ``verdict`` saying why none.

    Raises
    ------
    ConfigError
        For bad options (window, loss), records without the fitted variable, or records
        without one curve of three points.

    Notes
    -----
    Cabannes et al. (2024), Theorem 1 and Proposition 4; see the docs: science/claims.md.
    """
    config = payload.get("config", {})
    alpha = options.alpha if options.alpha is not None else config.get("alpha")
    if config.get("probabilities") is not None and options.alpha is None:
        alpha = None  # a user-given law has no α: no theory slope
    fits, joints = [], []
    by_scheme = _by_scheme(payload["records"], options.schemes)
    if not options.joint and not any(_curves(records) for records in by_scheme.values()):
        raise ConfigError("results", "nothing to fit: a slope needs three or more d at one T, or "
                          "three or more finite T > 0 at one d, for one scheme")  # fmt: skip
    total = sum(len(_curves(records)) + options.joint for records in by_scheme.values())
    with progress_bar(total, "fit", "fit", progress) as bar:
        for spec, records in by_scheme.items():
            law = _law(spec, alpha)
            fits += _curve_fits(spec, records, law, options, bar)
            joint = _joint_fit(spec, records, law, options) if options.joint else None
            bar.update(int(options.joint))
            if joint is not None:
                joints.append(joint)
    return {"kind": "fit", "alpha": alpha, "fits": fits, "joint": joints}

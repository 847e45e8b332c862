"""The closed-form claims (Cabannes et al. 2024, §4–5), measured on fresh runs and judged
(``assocmem claims``); ``assocmem reproduce`` judges the same claims on its stored runs.

The claims live with their experiments (Figure 1: claim 7; Figure 4: claims 1–4; the others in
:mod:`assocmem.experiments.closed_form_checks`) and read record frames named as the
experiments' sweeps (tidy rows: scheme, dim, n_samples, trial, error). :func:`check_claims`
runs those sweeps at their full-scale settings, with the trials asked for, through the runner
every command uses (:func:`~assocmem.experiments.runner.run_experiments`), into a temporary
results database: the records, and so the verdicts, are those ``reproduce`` stores.
"""

import shutil
import tempfile
import weakref
from collections.abc import Collection
from pathlib import Path

import pandas as pd

from assocmem.closed_form.config import ClosedFormConfig, config_from_mapping
from assocmem.experiments.experiment import Experiment, Judge, RawSpec, claim_order, parse_sweeps
from assocmem.experiments.figure1 import FIG1_DIMS, FIG1_SAMPLES
from assocmem.experiments.figure4 import FIG4_DIMS
from assocmem.experiments.registry import BEYOND, EXPERIMENTS
from assocmem.experiments.runner import run_experiments
from assocmem.report import Claim
from assocmem.sweep.spec import SweepSpec

__all__ = [
    "CLAIMS",
    "CLOSED_FORM",
    "FIG1_DIMS",
    "FIG1_SAMPLES",
    "FIG4_DIMS",
    "SWEEPS",
    "ClaimRunner",
    "check_claims",
    "claim_specs",
    "claim_config",
]


def _closed_form(experiment: Experiment) -> bool:
    return all(raw["kind"] == "closed_form" for raw in experiment.sweeps("full").values())


# The paper's experiments whose claims need closed-form runs only, and those claims by id (paper
# order). The studies beyond the paper judge their own claims (``run_study``, reproduce --beyond).
CLOSED_FORM = [e for e in EXPERIMENTS.values() if e.claims and e.item != BEYOND and _closed_form(e)]
CLAIMS: dict[str, Judge] = dict(
    sorted(
        ((cid, judge) for e in CLOSED_FORM for cid, judge in e.claims.items()),
        key=lambda item: claim_order(item[0]),
    )
)
SWEEPS: dict[str, RawSpec] = {n: raw for e in CLOSED_FORM for n, raw in e.sweeps("full").items()}


def claim_specs(trials: int = 100, seed: int = 0, device: str = "cpu") -> dict[str, SweepSpec]:
    """The closed-form sweeps of :data:`SWEEPS` at their full-scale settings, with ``trials``
    trials from the base seed ``seed``, on ``device``."""
    raws = {
        name: {**raw, "trials": trials, "base": {**raw["base"], "seed": seed}}
        for name, raw in SWEEPS.items()
    }
    return parse_sweeps(raws, "full", device)


class ClaimRunner:
    """Record frames named as the closed-form sweeps (``runner.figure4``, ``runner.rho``, …),
    each run on first read with ``trials`` trials from ``seed``, through
    :func:`~assocmem.experiments.runner.run_experiments` into a temporary results database
    (removed with the runner)."""

    def __init__(
        self, trials: int = 100, seed: int = 0, device: str = "cpu", progress: bool = False
    ):
        self.trials, self.seed, self.device, self.progress = trials, seed, device, progress
        folder = Path(tempfile.mkdtemp(prefix="assocmem-claims-"))
        weakref.finalize(self, shutil.rmtree, folder, ignore_errors=True)  # with the runner
        specs = claim_specs(trials, seed, device)
        run = run_experiments([], specs, folder, "full", on_first_read=True, progress=progress)
        self._frames = run.ctx.frames

    def __getattr__(self, name: str) -> pd.DataFrame:
        if name.startswith("_") or name not in SWEEPS:
            raise AttributeError(name)
        frame: pd.DataFrame = getattr(self._frames, name)
        return frame


def claim_config(
    name: str, trials: int = 100, seed: int = 0, device: str = "cpu"
) -> ClosedFormConfig:
    """The config of the closed-form sweep
    ``name`` (a key of ``SWEEPS``) at ``trials`` trials from ``seed``."""
    values = SWEEPS[name]["base"] | {"trials": trials, "seed": seed, "device": device}
    return config_from_mapping(values)


def check_claims(
    ids: Collection[str] | None = None,
    *,
    trials: int = 100,
    seed: int = 0,
    device: str = "cpu",
    progress: bool = False,
) -> list[Claim]:
    """Measure and judge the closed-form claims ``ids`` (default all), in the paper's order:
    :func:`~assocmem.experiments.runner.run_experiments` over :data:`CLOSED_FORM`, each sweep
    run (into a temporary database) when a claim first reads it."""
    with tempfile.TemporaryDirectory(prefix="assocmem-claims-") as folder:
        run = run_experiments(
            CLOSED_FORM,
            claim_specs(trials, seed, device),
            Path(folder),
            "full",
            only=ids,
            on_first_read=True,
            progress=progress,
        )
    return sorted(run.claims, key=lambda c: claim_order(c.id))

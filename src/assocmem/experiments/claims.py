"""The closed-form claims (Cabannes et al. 2024, §4–5), measured on fresh runs and judged
(``assocmem claims``); ``assocmem reproduce`` judges the same claims on its stored runs.

The claims live with their experiments (Figure 1: claim 7; Figure 4: claims 1–4; the others in
:mod:`assocmem.experiments.closed_form_checks`) and read record frames named as the
experiments' sweeps (tidy rows: scheme, dim, n_samples, trial, error); :class:`ClaimRunner`
runs those sweeps directly, at their full-scale settings, with the trials asked for.
"""

from collections.abc import Collection
from typing import Any

import pandas as pd

from assocmem.closed_form import run_closed_form
from assocmem.closed_form.config import ClosedFormConfig, config_from_mapping
from assocmem.experiments.experiment import Experiment, Judge, RawSpec, claim_order
from assocmem.experiments.figure1 import FIG1_DIMS, FIG1_SAMPLES
from assocmem.experiments.figure4 import FIG4_DIMS
from assocmem.experiments.registry import BEYOND, EXPERIMENTS
from assocmem.report import Claim

__all__ = [
    "CLAIMS",
    "CLOSED_FORM",
    "FIG1_DIMS",
    "FIG1_SAMPLES",
    "FIG4_DIMS",
    "SWEEPS",
    "ClaimRunner",
    "check_claims",
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


class ClaimRunner:
    """Record frames named as the closed-form sweeps (``runner.figure4``, ``runner.rho``, …),
    each run once on first use with ``trials`` trials from ``seed``."""

    def __init__(
        self, trials: int = 100, seed: int = 0, device: str = "cpu", progress: bool = False
    ):
        self.trials, self.seed, self.device, self.progress = trials, seed, device, progress
        self._frames: dict[str, pd.DataFrame] = {}

    def __getattr__(self, name: str) -> pd.DataFrame:
        if name.startswith("_") or name not in SWEEPS:
            raise AttributeError(name)
        if name not in self._frames:
            cfg = claim_config(name, self.trials, self.seed, self.device)
            self._frames[name] = run_closed_form(cfg, progress=self.progress).to_frame()
        return self._frames[name]


def claim_config(
    name: str, trials: int = 100, seed: int = 0, device: str = "cpu"
) -> ClosedFormConfig:
    """The config of the closed-form sweep
    ``name`` (a key of ``SWEEPS``) at ``trials`` trials from ``seed``."""
    values = SWEEPS[name]["base"] | {"trials": trials, "seed": seed, "device": device}
    return config_from_mapping(values)


def check_claims(ids: Collection[str] | None = None, **runner_kw: Any) -> list[Claim]:
    """Measure and judge the closed-form claims ``ids`` (default all), in the paper's order."""
    runner = ClaimRunner(**runner_kw)
    claims = [claim for e in CLOSED_FORM for claim in e.judge(runner, "full", only=ids)]
    return sorted(claims, key=lambda c: claim_order(c.id))

"""Run one experiment on its own, as ``assocmem STUDY`` does: :func:`run_study`.

A study's sweeps run into a results database (``OUT/runs.db`` when an output folder is given,
so a study shares its stored runs with ``reproduce --beyond --out OUT``; else a temporary one,
removed afterwards), and the experiment's table, claims and figure are made from the stored
records, exactly as the report makes them.
"""

import copy
import re
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pandas as pd
from matplotlib.figure import Figure

from assocmem.config.errors import ConfigError, unknown_name
from assocmem.config.files import check_output_dir
from assocmem.config.memory import DEFAULT_MEMORY_GB, check_memory_gb
from assocmem.experiments.commands import study_command
from assocmem.experiments.experiment import SCALES, Experiment, RawSpec, parse_sweeps
from assocmem.experiments.registry import EXPERIMENTS
from assocmem.experiments.runner import run_experiments
from assocmem.figures import save
from assocmem.report import Claim, Table
from assocmem.runtime import check_device
from assocmem.sweep.kinds import get_kind
from assocmem.sweep.plan import expand_runs
from assocmem.sweep.spec import SpecError, SweepSpec, check_spec_memory

__all__ = ["StudyResult", "run_study", "study_experiment", "study_specs"]

TOP_LEVEL = ("trials", "seeds")  # settings of a sweep spec's top level, not of its configs
TINY = "tiny"  # a study command's tiny settings over the quick sweeps (StudyCommand.tiny)
STUDY_SCALES = (TINY, *SCALES)


@dataclass(frozen=True)
class StudyResult:
    """What :func:`run_study` measured.

    Attributes
    ----------
    experiment : str
        The experiment's name (``"beyond-superposition"``): each claim's ``figure``.
    scale : str
        ``"quick"`` or ``"full"``.
    settings : dict
        Each sweep's spec as run, by sweep name (the tables of a sweep spec).
    frames : dict of str to pandas.DataFrame
        The tidy records of each sweep, by sweep name.
    table : Table or None
        The experiment's table (``title``, ``headers``, ``rows``, ``note``).
    claims : list of Claim
        Its judged claims; ``passed`` is None for every claim when ``settings`` were changed
        from the scale's spec (the tolerances were fixed for that spec).
    figure : matplotlib.figure.Figure or None
        Its figure.
    """

    experiment: str
    scale: str
    settings: dict[str, RawSpec]
    frames: dict[str, pd.DataFrame]
    table: Table | None
    claims: list[Claim]
    figure: Figure | None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: experiment, scale, settings, table, claims and every sweep's records."""
        table = None
        if self.table is not None:
            table = {
                "title": self.table.title,
                "headers": self.table.headers,
                "rows": self.table.rows,
                "note": self.table.note,
            }
        records = {
            name: frame.astype(object).where(frame.notna(), None).to_dict("records")
            for name, frame in self.frames.items()
        }
        return {
            "experiment": self.experiment,
            "scale": self.scale,
            "settings": self.settings,
            "table": table,
            "claims": [claim.to_dict() for claim in self.claims],
            "records": records,
        }


def study_experiment(name: str) -> Experiment:
    """The registered experiment called ``name``, or the one the study command ``name`` runs."""
    command = study_command(name)
    key = command.experiment if command is not None else name
    if key not in EXPERIMENTS:
        raise ConfigError("study", f"unknown study {name!r}; registered: {', '.join(EXPERIMENTS)}")
    return EXPERIMENTS[key]


def _override(raws: dict[str, RawSpec], field: str, value: Any) -> None:
    """Set ``field`` in every sweep that has it: top level, an axis, or ``base``."""
    if isinstance(value, list) and len(set(map(repr, value))) < len(value):
        raise ConfigError(field, f"values must be distinct, got {value}")  # else: two equal runs
    found = False
    for raw in raws.values():
        if field in TOP_LEVEL:
            if field in raw:
                raw[field], found = value, True
            continue
        for table in ("axes", "zip"):
            if field in raw.get(table, {}):
                if table == "zip":
                    raise ConfigError(field, "varies with other settings here; cannot be set")
                raw[table][field] = value if isinstance(value, list) else [value]
                found = True
                break
        else:
            if field in raw["base"]:
                raw["base"][field], found = value, True
    if not found:
        raise ConfigError(field, "is not a setting of this study's sweeps")


def study_specs(
    experiment: Experiment,
    scale: str,
    settings: Mapping[str, Any] | None = None,
    device: str = "cpu",
    memory_gb: float | None = None,
) -> dict[str, SweepSpec]:
    """The experiment's sweeps at ``scale`` with ``settings`` applied, parsed and checked.

    Raises
    ------
    ConfigError
        For an unknown scale, a setting no sweep has, or an invalid value (one line).
    """
    if scale not in STUDY_SCALES:
        raise unknown_name("scale", "scale", scale, STUDY_SCALES)
    check_device(device)  # every study: before any sweep is parsed or run
    raws = copy.deepcopy(experiment.sweeps(_base_scale(scale)))
    for field, value in (_tiny(experiment, scale) | dict(settings or {})).items():
        _override(raws, field, value)
    if memory_gb is not None:
        check_memory_gb(memory_gb)
        for raw in raws.values():
            if "memory_gb" in get_kind(raw["kind"]).operational:
                raw["base"]["memory_gb"] = memory_gb
    try:
        specs = parse_sweeps(raws, _base_scale(scale), device)
        for spec in specs.values():
            check_spec_memory(spec, memory_gb or DEFAULT_MEMORY_GB)
            spec.points()  # every point valid before anything runs
    except SpecError as err:
        raise _setting_error(err) from None
    return experiment.checked(specs)


def _setting_error(err: SpecError) -> ConfigError:
    """A sweep's first problem as the setting at fault: ``base.heads: …`` (or ``point (…):
    heads: …``) as ``heads: …``, the field a study's settings and flags name."""
    problem = re.sub(r"^point \(.*?\): ", "", err.problems[0])
    location, _, message = problem.partition(": ")
    return ConfigError(location.split(".")[-1], message)


def _base_scale(scale: str) -> str:
    """The scale whose sweeps ``scale`` starts from: tiny is a cut of quick."""
    return "quick" if scale == TINY else scale


def _tiny(experiment: Experiment, scale: str) -> dict[str, Any]:
    """The settings ``scale`` applies before the user's: the study command's tiny ones."""
    if scale != TINY:
        return {}
    command = study_command(experiment.name)
    if command is None or not command.tiny:
        raise ConfigError("scale", f"{experiment.name} has no tiny scale; allowed: quick, full")
    return copy.deepcopy(dict(command.tiny))


def run_study(
    name: str,
    *,
    scale: str = "quick",
    settings: Mapping[str, Any] | None = None,
    out: str | Path | None = None,
    device: str = "cpu",
    memory_gb: float | None = None,
    progress: bool = False,
) -> StudyResult:
    """Run one experiment's sweeps and make its table, claims and figure from the records.

    Parameters
    ----------
    name : str
        A study command (``"superposition"``) or any registered experiment
        (``"beyond-superposition"``, ``"figure-4"``).
    scale : {"quick", "full", "tiny"}, default "quick"
        The sweeps of that scale, as ``reproduce`` runs them; ``"tiny"``: the quick sweeps cut
        to the study command's tiny settings (seconds; measured, never judged).
    settings : mapping, optional
        Changes to the sweeps (``{"dims": [16, 64], "trials": 5}``): a field is set in every
        sweep that has it, at the top level (``trials``, ``seeds``), as a whole axis, or in
        ``base``. When they change the runs, the claims are measured but not judged
        (``passed`` None); settings that leave every run as the scale's keep the verdicts.
    out : str or pathlib.Path, optional
        A folder for ``runs.db`` (reused and resumed, shared with ``reproduce --out``) and the
        figure (``figures/NAME.png`` and ``.svg``). Default: a temporary database, nothing kept.
    device : str, default "cpu"
    memory_gb : float, optional
        The memory budget of each run (for the run kinds that have one) and of the plan.
    progress : bool, default False
        Progress bars on stderr.

    Returns
    -------
    StudyResult

    Raises
    ------
    ConfigError
        For an unknown study, scale or setting, an invalid value or an unusable ``out``:
        before anything is written.

    Notes
    -----
    The studies beyond Cabannes et al. (2024); see the docs: beyond/index.md.
    """
    experiment = study_experiment(name)
    specs = study_specs(experiment, scale, settings, device, memory_gb)
    # judged only on the scale's own runs: settings that leave them unchanged keep the verdicts
    changed = scale == TINY or (
        bool(settings)
        and _runs(specs) != _runs(study_specs(experiment, scale, None, device, memory_gb))
    )
    if out is not None:
        check_output_dir("out", out)
        Path(out).mkdir(parents=True, exist_ok=True)
        result = _run(experiment, specs, scale, Path(out), changed, progress)
        if result.figure is not None:
            save(result.figure, Path(out) / "figures" / experiment.name, formats=("png", "svg"))
        return result
    with tempfile.TemporaryDirectory(prefix="assocmem-study-") as folder:
        return _run(experiment, specs, scale, Path(folder), changed, progress)


def _runs(specs: Mapping[str, SweepSpec]) -> set[str]:
    """The identities (hashes) of every run of the sweeps."""
    return {run.key for spec in specs.values() for run in expand_runs(spec)}


def _run(
    experiment: Experiment,
    specs: dict[str, SweepSpec],
    scale: str,
    out: Path,
    changed: bool,
    progress: bool,
) -> StudyResult:
    base = _base_scale(scale)
    run = run_experiments([experiment], specs, out, base, progress=progress)
    ctx, frames, claims = run.ctx, run.ctx.frames, run.claims
    if changed:
        note = f"settings changed from the {base} spec: measured, not judged"
        claims = [replace(c, passed=None, note=note) for c in claims]
    figure = experiment.draw(ctx) if experiment.draw is not None else None
    return StudyResult(
        experiment=experiment.name,
        scale=scale,
        settings={name: _as_raw(spec) for name, spec in specs.items()},
        frames={name: getattr(frames, name) for name in specs},
        table=experiment.table(ctx) if experiment.table is not None else None,
        claims=claims,
        figure=figure,
    )


def _as_raw(spec: SweepSpec) -> RawSpec:
    raw: RawSpec = {"kind": spec.kind, "base": spec.base, "axes": spec.axes}
    if spec.zipped:
        raw["zip"] = spec.zipped
    raw["trials" if spec.run_kind.has_trials else "seeds"] = (
        spec.trials if spec.run_kind.has_trials else spec.seeds
    )
    return raw

"""The one runner: ``reproduce``, ``assocmem STUDY`` and ``claims`` run experiments through
:func:`run_experiments`.

It runs (or resumes) the sweeps of the experiments into ``OUT/runs.db``, reads the stored
records back as frames named as the sweeps, and judges the experiments' claims on them: the
figures, tables and claims of every command are functions of the stored records, computed the
same way. The callers differ only in what they select (the registry's items, one study, the
paper's closed-form claims) and what they write (a report, a study's result, a claims table).
"""

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from assocmem.experiments.experiment import Context, Experiment
from assocmem.experiments.frames import StoredFrames
from assocmem.report import Claim
from assocmem.sweep.execute import SweepReport, run_sweep
from assocmem.sweep.spec import SweepSpec

__all__ = ["ExperimentsRun", "run_experiments"]


@dataclass(frozen=True)
class ExperimentsRun:
    """What :func:`run_experiments` ran and judged.

    Attributes
    ----------
    ctx : Context
        The stored frames of the sweeps, the output folder, the scale and the specs: what an
        experiment draws its figure and table from.
    sweeps : list of SweepReport
        One report per sweep run (in name order); empty when the sweeps run on first read.
    claims : list of Claim
        The claims of the experiments judged, in experiment order, each experiment's in its
        own order.
    """

    ctx: Context
    sweeps: list[SweepReport]
    claims: list[Claim]


def run_experiments(
    judged: Sequence[Experiment],
    specs: Mapping[str, SweepSpec],
    out: Path,
    scale: str,
    *,
    only: Collection[str] | None = None,
    on_first_read: bool = False,
    executor: str = "local",
    workers: int | None = None,
    progress: bool = False,
) -> ExperimentsRun:
    """Run the sweeps ``specs`` into ``out/runs.db`` and judge the claims of ``judged``.

    Parameters
    ----------
    judged : sequence of Experiment
        The experiments whose claims are judged (those of ``only``, if given).
    specs : mapping of str to SweepSpec
        Every sweep to run, by the frame name the experiments read it under (``figure4``).
    out : pathlib.Path
        An existing folder: its ``runs.db`` is created or resumed.
    scale : {"quick", "full"}
        The scale the claims are judged at.
    only : collection of str, optional
        Claim ids to judge (default: every claim of ``judged``).
    on_first_read : bool, default False
        Run each sweep only when a claim first reads its frame (the sweeps a subset of claims
        needs are known only once judged); default: every sweep first, in name order.
    executor, workers, progress
        As :func:`assocmem.run_sweep`.

    Returns
    -------
    ExperimentsRun
    """
    db = out / "runs.db"
    specs = dict(specs)

    def run(name: str) -> SweepReport:
        return run_sweep(specs[name], db, executor=executor, workers=workers, progress=progress)

    sweeps = [] if on_first_read else [run(name) for name in sorted(specs)]
    frames = StoredFrames(db, specs, run=run if on_first_read else None)
    claims = [claim for e in judged for claim in e.judge(frames, scale, only)]
    return ExperimentsRun(Context(frames, out, scale, specs), sweeps, claims)

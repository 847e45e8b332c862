"""``assocmem reproduce``: the paper's figures, Table 1 and claims (and, when asked, the studies
beyond it), from sweeps run through the results database, into a self-contained report.

Every experiment of :mod:`assocmem.experiments.registry` names its sweeps; they are written to
``OUT/runs.db``: an interrupted reproduction resumes, a second one reuses every stored run and
only redraws (seconds), and ``--full`` reuses the trials that ``--quick`` already computed
wherever the settings coincide. Figures, tables and claims are functions of the stored records.
"""

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from assocmem import __version__
from assocmem.config.checks import int_at_least
from assocmem.config.errors import ConfigError, unknown_name
from assocmem.config.files import check_output_dir
from assocmem.experiments.experiment import (
    SCALES,
    TRAIN_SEEDS,
    TRIALS,
    Context,
    Experiment,
    claim_order,
)
from assocmem.experiments.registry import (
    EXPERIMENTS,
    ONLY_CHOICES,
    PAPER_ITEMS,
    drawn,
    judged,
    only_choices,
    only_groups,
    paper_items,
)
from assocmem.experiments.runner import run_experiments
from assocmem.figures import save
from assocmem.report import Claim, FigureEntry, Report, verdict_counts, write_report
from assocmem.runtime import check_device
from assocmem.sweep.execute import SweepReport, check_executor, provenance
from assocmem.sweep.plan import expand_runs
from assocmem.sweep.spec import SweepSpec
from assocmem.sweep.store import Store, done_keys_readonly

__all__ = ["ONLY_CHOICES", "PAPER_ITEMS", "Reproduction", "reproduce"]
NOTES = ["Figure 2 of the paper is a diagram (three memories, one wrong answer) and is omitted."]


def opening(scale: str) -> str:
    """The report's opening paragraph: what is judged, at which scale, and what a verdict means
    there."""
    judged = (
        "Each claim below, of the paper and of the studies beyond it, is measured again from "
        "this package's own runs and judged against the tolerance the package states for it "
        "(its column gives the date it was set, and any revision with its reason). "
    )
    if scale == "full":
        return judged + (
            f"Scale: full, the paper's settings ({TRIALS['full']} trials per closed-form point, "
            f"{TRAIN_SEEDS['full']} seeds per trained one). Each tolerance applies as stated: "
            'within it a claim reads "pass", outside it "FAIL".'
        )
    return judged + (
        f"Scale: quick, {TRIALS['quick']} trials per closed-form point and "
        f"{TRAIN_SEEDS['quick']} seeds per trained one (the paper: {TRIALS['full']} and "
        f"{TRAIN_SEEDS['full']}), so every statistic is noisier than the paper's. At this scale a "
        "tolerance is widened by a band of a few standard errors of each statistic, sized from "
        "the number of statistics a claim compares so that a true claim falls outside the band "
        "by chance about once in 10⁴ reproductions or less (each tolerance's revision gives the "
        "calculation and its caveats). "
        'Within the tolerance a claim reads "pass"; outside it but inside the band, "not '
        'refuted at this scale", counted apart from the passes; outside the band, "FAIL". '
        "`assocmem reproduce --full` runs the paper's settings and applies the tolerances as "
        "stated, without the band."
    )


@dataclass(frozen=True)
class Reproduction:
    """What one :func:`reproduce` call wrote.

    Attributes
    ----------
    report : pathlib.Path
        ``report.html``.
    claims : list of Claim
        The judged claims (also in ``claims.json`` beside the report).
    figures : list of pathlib.Path
        The figure files (PNG).
    seconds : float
        The wall time.
    """

    report: Path
    claims: list[Claim]
    figures: list[Path]
    seconds: float

    def summary(self) -> str:
        """A few lines: claims passed of those checked (the failing named), figures, time."""
        checked = [c for c in self.claims if c.passed is not None]
        verdict = f"claims: {verdict_counts(self.claims)}"
        if not self.claims:
            verdict = "claims: none judged in this call (they are judged with --only claims)"
        if len(checked) < len(self.claims):
            verdict += f" ({len(self.claims) - len(checked)} shown, not judged)"
        figures = f"figures: {len(self.figures)} written to {self.report.parent / 'figures'}"
        return "\n".join(
            [verdict, figures, f"report: {self.report}", f"time: {self.seconds:.1f} s"]
        )


def selected(scale: str, only: Sequence[str] | None) -> tuple[list[Experiment], list[Experiment]]:
    """The experiments to draw and to judge for ``only`` (default: every paper item): each
    choice an item (``"4"``, ``"claims"``, ``"beyond"``) or an experiment's name
    (``"beyond-capacity"``, that experiment alone); see
    :func:`~assocmem.experiments.registry.only_groups`."""
    if scale not in SCALES:
        raise unknown_name("scale", "scale", scale, SCALES)
    items = set(only or paper_items())
    allowed = only_choices()
    for item in sorted(items - set(allowed)):
        raise unknown_name("only", "item or experiment", item, allowed, groups=only_groups())
    return drawn(items), judged(items)


def reproduce(
    out: str | Path,
    *,
    scale: str = "quick",
    only: Sequence[str] | None = None,
    executor: str = "local",
    workers: int | None = None,
    device: str = "cpu",
    progress: bool = False,
    seed: int = 0,
) -> Reproduction:
    """Reproduce the paper: run (or resume) the sweeps, draw the figures, judge the claims.

    Parameters
    ----------
    out : str or pathlib.Path
        The output folder: ``runs.db`` (every run), ``figures/``, ``report.html`` and
        ``claims.json``. Running again resumes from ``runs.db``.
    scale : {"quick", "full"}, default "quick"
        "quick" runs fewer trials and seeds; "full" the paper's settings.
    only : sequence of str, optional
        What to draw and judge, default every paper item: items (``"1"``, ``"3"``, ``"4"``,
        ``"memory"``, ..., ``"claims"``, ``"beyond"``) and experiments' names (``"figure-4"``,
        ``"rho"``, ``"beyond-capacity"``, ...: that experiment alone, its figure, table and
        claims); :func:`~assocmem.experiments.registry.only_choices` lists them all.
    executor : {"local", "dask"}, default "local"
    workers : int, optional
        Dask workers.
    device : str, default "cpu"
    progress : bool, default False
        Progress bars on stderr.
    seed : int, default 0
        The reproduction's seed S: each sweep's seeds are derived from (S, sweep name) by a
        stable hash, so no run is shared between two values of S
        (:func:`~assocmem.experiments.experiment.reseeded`); 0 runs the sweeps as written.

    Returns
    -------
    Reproduction
        The report's path, the judged claims, the figure files and the wall time.

    Raises
    ------
    ConfigError
        For an unknown ``only`` choice, scale, executor or a negative seed (before anything runs).

    Notes
    -----
    Every input is checked before ``out`` is created. The report shows every result ``out``
    holds: the selected experiments and each experiment whose runs a previous call stored (so a
    call with ``only`` adds to the report instead of replacing it).

    Every figure, Table 1 and the checkable claims of Cabannes et al. (2024); see the docs:
    science/figures.md and science/claims.md.
    """
    start = time.perf_counter()
    to_draw, to_judge = selected(scale, only)
    check_device(device)  # once, as the field it is, before any sweep is parsed
    int_at_least("seed", seed, 0)
    specs: dict[str, SweepSpec] = {}
    for experiment in (*to_draw, *to_judge):
        specs |= experiment.specs(scale, device, seed)
    for spec in specs.values():
        spec.points()  # every point valid before anything is written
    check_executor(executor, workers, None)
    check_output_dir("out", out)
    out = Path(out)
    db = out / "runs.db"
    stored_draw, stored_judge = stored_experiments(out, scale, device, seed)
    to_draw = _union(to_draw, stored_draw)
    to_judge = _union(to_judge, stored_judge)
    for experiment in (*to_draw, *to_judge):
        specs |= experiment.specs(scale, device, seed)
    out.mkdir(parents=True, exist_ok=True)
    with Store(db):
        pass  # the database exists even when no selected experiment has runs
    run = run_experiments(
        to_judge, specs, out, scale, executor=executor, workers=workers, progress=progress
    )
    ctx = run.ctx
    report = Report(
        title="assocmem: Scaling Laws for Associative Memories, reproduced",
        subtitle=f"{scale} scale{f', seed {seed}' if seed else ''} — Cabannes, Dohmatob, Bietti "
        f"(ICLR 2024); assocmem {__version__}",
        intro=opening(scale),
        notes=list(NOTES),
        titles={e.name: e.title for e in EXPERIMENTS.values()},
    )
    figures = [path for e in to_draw for path in add_experiment(report, e, ctx)]
    report.claims = sorted(run.claims, key=lambda c: claim_order(c.id))
    report.provenance = run_provenance(ctx, run.sweeps, device, time.perf_counter() - start)
    report.provenance["seed"] = seed
    write_claims(report.claims, out / "claims.json")
    path = write_report(report, out / "report.html")
    return Reproduction(path, report.claims, figures, time.perf_counter() - start)


def _union(first: Sequence[Experiment], second: Sequence[Experiment]) -> list[Experiment]:
    """The experiments of either list, in registry (report) order."""
    names = {e.name for e in (*first, *second)}
    return [e for e in EXPERIMENTS.values() if e.name in names]


def stored_experiments(
    out: Path, scale: str, device: str, seed: int = 0
) -> tuple[list[Experiment], list[Experiment]]:
    """The experiments (to draw, to judge) whose results ``out`` already holds: every run at
    ``scale`` in ``out/runs.db``, or, for an experiment without runs, its figure in
    ``out/figures``. Those whose sweeps cannot be built here (e.g. a word law without the
    words extra) are left out."""
    done = done_keys_readonly(out / "runs.db") if out.is_dir() else set()
    complete = []
    for experiment in EXPERIMENTS.values():
        try:
            specs = experiment.specs(scale, device, seed)
            keys = {run.key for spec in specs.values() for run in expand_runs(spec)}
        except ConfigError:
            continue
        drawn_before = (out / "figures" / f"{experiment.name}.png").exists()
        if (keys and keys <= done) or (not keys and drawn_before):
            complete.append(experiment)
    to_draw = [e for e in complete if e.item is not None]
    to_judge = [e for e in complete if e.claims]
    return to_draw, to_judge


def add_experiment(report: Report, experiment: Experiment, ctx: Context) -> list[Path]:
    """Draw ``experiment`` into OUT/figures/NAME.png and .svg and add its figure and table to
    the report; the PNG written, if any."""
    written = []
    if experiment.draw is not None:
        fig = experiment.draw(ctx)
        stem = ctx.out / "figures" / experiment.name
        written = [p for p in save(fig, stem, formats=("png", "svg")) if p.suffix == ".png"]
        settings = experiment.figure_settings(ctx)
        # the report embeds the PNG just written (a third rendering cost a third of the
        # figures' time: 12 of 42 s on the 2-core VM)
        png = written[0].read_bytes()
        entry = FigureEntry(experiment.name, experiment.title, experiment.caption, settings, png)
        report.figures.append(entry)
    if experiment.table is not None:
        report.tables.append(experiment.table(ctx))
    return written


def write_claims(claims: Sequence[Claim], path: Path) -> None:
    """``claims.json``: one object per judged claim (the :class:`Claim` schema), atomically."""
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps([c.to_dict() for c in claims], indent=1, ensure_ascii=False))
    tmp.replace(path)


def run_provenance(
    ctx: Context, sweeps: Sequence[SweepReport], device: str, seconds: float
) -> dict[str, Any]:
    """The stored runs the report reads, what this call computed, and the software."""
    statuses: dict[str, int] = {}
    for sweep in sweeps:
        for status, count in sweep.statuses.items():
            statuses[status] = statuses.get(status, 0) + count
    runs = ctx.frames.all
    if runs.empty:  # nothing stored yet (an experiment without runs): empty columns
        runs = pd.DataFrame({"hash": [], "wall_seconds": [], "host": []})
    runs = runs.drop_duplicates("hash")
    return {
        "scale": ctx.scale,
        "database": str(ctx.frames.db),
        "runs_stored": int(len(runs)),
        "runs_written_now": int(sum(s.written for s in sweeps)),
        "statuses_now": statuses,
        "compute_seconds_stored": float(runs["wall_seconds"].fillna(0).sum()),
        "hosts": sorted(set(runs["host"].dropna())),
        **provenance(device),
        "wall_seconds_this_invocation": round(seconds, 2),
    }

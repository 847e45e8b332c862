"""Beyond the paper: associative memories in parallel — ``assocmem superposition``.

H heads, each its own memory of dimension d_h with its own embeddings, scores summed, against
one memory of dimension d at three budgets; closed-form heads storing the same scheme or routed
tokens, the signal-to-noise theory of summed heads, and heads trained jointly (docs:
beyond/superposition.md). Settings: the shipped specs ``superposition`` (closed form) and
``superposition_trained``; the quick scale keeps d ≤ 512, 20 trials, 3 seeds and three lrs.
The claims' tolerances are the ``[claims.ID]`` tables of those specs.
"""

import copy
import functools
from collections.abc import Mapping
from typing import Any, cast

import pandas as pd
from matplotlib.figure import Figure

from assocmem.config.errors import ConfigError
from assocmem.experiments.experiment import (
    Context,
    Experiment,
    RawSpec,
    need_distinct,
    shipped_sweep,
)
from assocmem.experiments.tolerances import tolerances
from assocmem.report import Table
from assocmem.studies.superposition.claims import (
    ALPHA,
    CLAIMS,
    CLOSED,
    POPULATION,
    THRESHOLD,
    TRAINED,
)
from assocmem.studies.superposition.figure import superposition_figure
from assocmem.studies.superposition.kind import SuperpositionKind
from assocmem.studies.superposition.kind_train import HeadsTrainKind
from assocmem.studies.superposition.records import (
    best_lr,
    exponents,
    rank_profile,
    select,
    summary,
    with_predictions,
)
from assocmem.studies.superposition.theory import BUDGET_RULES
from assocmem.sweep.kinds import register_kind
from assocmem.sweep.spec import SweepSpec

QUICK: dict[str, Any] = {"max_dim": 512, "trials": 20, "seeds": 3, "lrs": [1.0, 10.0, 100.0]}
SCHEME_LABELS = {THRESHOLD: "q = 1{x ≤ d/8}", POPULATION: "q = p"}
BUDGET_TITLES = {"width": "equal width H·d_h = d", "matrix": "equal matrix parameters H·d_h² = d²",
                 "total": "equal parameters with embeddings"}  # fmt: skip
PANEL_TITLES = {"width": "equal width $H\\,d_h = d$",  # the figure's, in mathtext
                "matrix": "equal matrix parameters $H\\,d_h^2 = d^2$",
                "total": "equal parameters with embeddings"}  # fmt: skip
SHORT_LABELS = {THRESHOLD: "1{x≤d/8}", POPULATION: "q=p"}  # in the text table


@functools.cache
def _spec(name: str) -> RawSpec:
    return shipped_sweep(name)


def sweeps(scale: str) -> dict[str, RawSpec]:
    """The shipped specs (full), or their quick cut: d ≤ 512, 20 trials, 3 seeds, lr ∈ {1, 10,
    100}."""
    closed, trained = (copy.deepcopy(_spec(name)) for name in (CLOSED, TRAINED))
    for raw in (closed, trained):
        raw.pop("name", None)
        raw.pop("description", None)
    if scale == "quick":
        closed["trials"] = QUICK["trials"]
        closed["base"]["dims"] = [d for d in closed["base"]["dims"] if d <= QUICK["max_dim"]]
        trained["seeds"] = QUICK["seeds"]
        trained["axes"]["lr"] = list(QUICK["lrs"])
    return {CLOSED: closed, TRAINED: trained}


# ---- table and figure ---------------------------------------------------------------------


def reference_dim(frame: pd.DataFrame) -> int:
    """The d of the error-vs-H panels: the spec's (claim 2's), else the largest d run below it,
    else the smallest d run."""
    wanted, dims = tolerances("superposition-2")["dim"], sorted(set(frame["dim"].dropna()))
    below = [d for d in dims if d <= wanted]
    return int(below[-1] if below else dims[0])


def heads_stats(frame: pd.DataFrame, scheme: str, budget: str, dim: int) -> pd.DataFrame:
    part = select(frame, alpha=ALPHA, scheme=scheme, budget=budget, dim=dim)
    keys = ["alpha", "scheme", "arrangement", "heads"]
    return with_predictions(summary(part, keys), part)


def _counts_note(frame: pd.DataFrame, dim: int) -> str:
    """The actual d_h and parameter counts (matrices; with embeddings) per budget and H."""
    part = frame[frame["dim"] == dim].drop_duplicates(["budget", "heads"])
    parts = []
    for budget, rows in part.groupby("budget", sort=False):
        cells = [
            f"H={int(r.heads)}: {int(r.head_dim)}, {int(r.matrix_params)}, {int(r.total_params)}"
            for r in cast(Any, rows.sort_values("heads")).itertuples()
        ]
        parts.append(f"{budget}: " + "; ".join(cells))
    return "Actual d_h, H·d_h², H·(d_h² + (N+M)·d_h): " + " | ".join(parts) + "."


def table(ctx: Context) -> Table:
    """Error at the reference d (α = 2) per scheme, budget and arrangement, one column per H:
    the mean over trials (the prediction)."""
    frame = ctx.frames.superposition
    dim = reference_dim(frame)
    heads = sorted(int(h) for h in set(frame["heads"]))
    rows = []
    for scheme in dict.fromkeys(frame["scheme"]):
        for budget in dict.fromkeys(frame["budget"]):
            stats = heads_stats(frame, scheme, budget, dim)
            for arrangement in dict.fromkeys(frame["arrangement"]):
                part = cast(Any, stats[stats["arrangement"] == arrangement])
                by_h = {
                    int(r.heads): f"{r.mean:.4f} ({r.predicted:.4f})" for r in part.itertuples()
                }
                rows.append([SHORT_LABELS.get(scheme, scheme), budget, arrangement,
                             *(by_h.get(h, "") for h in heads)])  # fmt: skip
    return Table(
        f"H heads against one memory of d = {dim} (α = {ALPHA:g}): mean error over trials "
        "(signal-to-noise prediction)",
        ["scheme", "budget", "arrangement", *(f"H = {h}" for h in heads)],
        rows,
        "Budgets: " + "; ".join(f"{k}: {v}" for k, v in BUDGET_RULES.items()) + ". The "
        "scheme's d is the total width H·d_h. same: q in every head; band, random: each token "
        "stored in one head (by frequency band; balanced at random), scores summed over all "
        "heads; -gated: read from its own head only. "
        + _counts_note(frame, dim)
        + " Standard errors: the claims, the figure's bands and the records (--format json).",
    )


def _dims_curve(frame: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    """The rows of the error-vs-d panel and its title: q = 1{x ≤ d/8} in every head at equal
    width, or the first scheme and budget run when the settings left those out."""
    schemes, budgets = list(dict.fromkeys(frame["scheme"])), list(dict.fromkeys(frame["budget"]))
    scheme = THRESHOLD if THRESHOLD in schemes else schemes[0]
    budget = "width" if "width" in budgets else budgets[0]
    curve = select(frame, alpha=ALPHA, scheme=scheme, arrangement="same", budget=budget)
    label = "equal width" if budget == "width" else BUDGET_TITLES.get(budget, budget)
    return curve, f"{SCHEME_LABELS.get(scheme, scheme)} in every head, {label}"


def check_sweeps(specs: Mapping[str, SweepSpec]) -> None:
    """What the analysis needs: two d for the slopes, two H to compare, and H ≤ d (each head
    at least one dimension at equal width)."""
    for cfg in specs[CLOSED].points():
        need_distinct("dims", cfg.dims, 2, "to fit a slope in d")
        need_distinct("heads", cfg.heads, 2, "to compare H heads")
        if max(cfg.heads) > max(cfg.dims):
            raise ConfigError("heads", f"H = {max(cfg.heads)} exceeds every d ({max(cfg.dims)}): "
                              "at equal width each head needs d_h = d/H ≥ 1")  # fmt: skip
    for cfg in specs[TRAINED].points():
        if cfg.heads > cfg.dim:
            raise ConfigError("heads", f"H = {cfg.heads} exceeds the trained heads' d = "
                              f"{cfg.dim}: each head needs d_h = d/H ≥ 1")  # fmt: skip


def draw(ctx: Context) -> Figure:
    frame = ctx.frames.superposition
    dim = reference_dim(frame)
    panels = {
        (SCHEME_LABELS.get(scheme, scheme), f"{PANEL_TITLES.get(budget, budget)}, d = {dim}"):
        heads_stats(frame, scheme, budget, dim)
        for scheme in dict.fromkeys(frame["scheme"])
        for budget in dict.fromkeys(frame["budget"])
    }  # fmt: skip
    curve, curve_title = _dims_curve(frame)
    fits = exponents(curve, tolerances("superposition-5")["min_dim"], auto=True)
    slopes = {h: f"slope {f.slope:.2f} [{f.ci_low:.2f}, {f.ci_high:.2f}]" for h, f in fits.items()}
    dims = with_predictions(summary(curve, ["alpha", "scheme", "arrangement", "heads", "dim"]),
                            curve)  # fmt: skip
    trained = best_lr(ctx.frames.superposition_trained)
    errors = trained.groupby(["heads", "optimizer"])["error"].agg(["mean", "sem"]).reset_index()
    d = int(trained["dim"].iloc[0])
    titles = {
        "dims": f"{curve_title}, α = {ALPHA:g}\nslopes (automatic window) with 95 % intervals",
        "trained": f"trained heads, $H\\,d_h = {d}$, best lr",
        "specialisation": f"trained heads' margins, $H\\,d_h = {d}$",
    }
    return superposition_figure(panels, dims, slopes, errors.fillna({"sem": 0.0}),
                                rank_profile(ctx.frames.superposition_trained), titles)  # fmt: skip


SUPERPOSITION = Experiment(
    name="beyond-superposition",
    title="Beyond the paper: associative memories in parallel (superposition)",
    caption="H memories in parallel, scores summed, against one memory of dimension d (N = 1000, "
    "M = 5). Top rows: error vs H at d = 256 (α = 2) at equal width, equal matrix parameters "
    "and equal parameters counting the embeddings, for each arrangement (the same scheme in "
    "every head, or each token stored in one head, routed by frequency band or at random, "
    "read from every head or its own); dashed: the summed-heads signal-to-noise prediction. "
    "Bottom: error vs d per H with fitted slopes (equal width); heads trained jointly "
    "(sign-Adam and SGD, best lr); the participation ratio of the trained heads' margins by "
    "frequency rank, against q = p in every head and q = p routed. Bands: 95 % intervals.",
    item="beyond",
    sweeps=sweeps,
    claims=CLAIMS,
    draw=draw,
    table=table,
    check=check_sweeps,
)

register_kind(SuperpositionKind())
register_kind(HeadsTrainKind())

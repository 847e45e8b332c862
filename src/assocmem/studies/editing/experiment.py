"""Beyond the paper: editing and erasing facts by rank-one changes of the weights.

Closed-form memories (``threshold:P=d/8``, ``population``) and trained ones (sign-like Adam)
are edited by the closed-form replacement and by ROME's minimum-norm rank-one update without and
with the key covariance; erasures likewise (docs: beyond/editing.md). The settings are the
shipped specs ``editing`` (N = 1000; α, d, memory) and ``editing_sizes`` (N at d = 128), at full
scale; the quick scale keeps d ≤ 512, 20 trials and at most 512 edits.
"""

import copy

import pandas as pd
from matplotlib.figure import Figure

from assocmem.experiments.experiment import Context, Experiment, RawSpec, shipped_sweep
from assocmem.report import Table
from assocmem.studies.editing.claims import CLAIMS
from assocmem.studies.editing.common import (
    POPULATION,
    THRESHOLD,
    TRAINED,
    Theory,
    at,
    main_rows,
    main_settings,
    theory,
)
from assocmem.studies.editing.kind import EditingKind
from assocmem.studies.editing.summary import capacity_summary, checkpoint_summary, relative_damage
from assocmem.sweep.kinds import register_kind

QUICK = {"trials": 20, "max_dim": 512, "max_edits": 512}


def sweeps(scale: str) -> dict[str, RawSpec]:
    """The shipped specs at full scale; quick: d ≤ 512, 20 trials, at most 512 edits."""
    raws = {"editing": shipped_sweep("editing"), "editing_sizes": shipped_sweep("editing_sizes")}
    out = {}
    for name, raw in raws.items():
        raw = {k: copy.deepcopy(v) for k, v in raw.items() if k not in ("name", "description")}
        if scale == "quick":
            raw["trials"] = QUICK["trials"]
            raw["axes"]["dim"] = [d for d in raw["axes"]["dim"] if d <= QUICK["max_dim"]]
            raw["base"]["max_edits"] = min(raw["base"]["max_edits"], QUICK["max_edits"])
        out[name] = raw
    return out


def _row(frame: pd.DataFrame, memory: str, method: str, dim: int, theory_: Theory) -> list[str]:
    """One table row at k = 64 (the largest checkpoint ≤ 64)."""
    rows = frame[(frame["memory"] == memory) & (frame["method"] == method) & (frame["dim"] == dim)]
    k = int(rows.loc[rows["band"] == "all", "k"].loc[lambda s: s <= 64].max())
    edit, erase = at(rows, k).copy(), at(rows, k, operation="erase")
    edit["relative"] = relative_damage(edit)
    success, relative = checkpoint_summary(edit, "success"), checkpoint_summary(edit, "relative")
    erased = checkpoint_summary(erase, "success")
    capacity = capacity_summary(rows)
    n_inputs, alpha = main_settings(frame)
    prediction = theory_.get((memory, alpha, n_inputs, dim)) if method == "rome" else None
    predicted_capacity = f"{prediction.capacity:g}" if prediction is not None else "—"

    def pm(summary: pd.DataFrame) -> str:
        return f"{summary['mean'].iloc[0]:.3f} ± {summary['two_se'].iloc[0]:.3f}"

    measured_capacity = "not searched"
    if not capacity.empty:
        cap = capacity.iloc[0]
        measured_capacity = f"{cap['median']:g} [{cap['q25']:g}, {cap['q75']:g}]"
    return [
        memory,
        METHOD_NAMES[method],
        str(dim),
        f"{rows['base_error'].mean():.4f}",
        pm(success),
        pm(relative),
        pm(erased),
        measured_capacity,
        predicted_capacity,
    ]


METHOD_NAMES = {"replace": "replace", "rome": "ROME C = I", "rome_cov": "ROME C = Σ p e eᵀ"}


def table(ctx: Context) -> Table:
    """Success, damage, erasure and capacity per memory and method at d = 64 and the largest d."""
    frame = main_rows(ctx.frames.editing)
    predictions = theory(ctx.frames.editing)
    n_inputs, alpha = main_settings(ctx.frames.editing)
    dims = [d for d in (64, int(frame["dim"].max())) if d in set(frame["dim"])]
    rows = [
        _row(frame, memory, method, dim, predictions)
        for memory in (THRESHOLD, POPULATION, TRAINED)
        for method in ("replace", "rome", "rome_cov")
        for dim in dims
        if not (memory == TRAINED and method == "replace")
        and not frame[(frame["memory"] == memory) & (frame["dim"] == dim)].empty
    ]
    return Table(
        f"Edits of k = 64 tokens drawn uniformly (N = {n_inputs}, M = 5, α = {alpha:g}): mean "
        "± 2 s.e. over trials",
        [
            "memory",
            "method",
            "d",
            "error before",
            "edit success",
            "relative damage",
            "old target after erasure",
            "capacity median [quartiles]",
            "theory",
        ],
        rows,
        "relative damage: change of the other tokens' p-weighted error over its value before; "
        "erasure: share of the erased tokens still answering their old target (chance 1/M = "
        "0.2); capacity: edits until the others' error rises by 10 % (inf: not within N).",
    )


def draw(ctx: Context) -> Figure:
    from assocmem.studies.editing.figure import editing_figure

    frame = ctx.frames.editing
    dims = sorted(frame["dim"].unique())
    middle = 128 if 128 in dims else int(dims[len(dims) // 2])
    settings = main_settings(frame)
    return editing_figure(
        frame, ctx.frames.editing_sizes, theory(frame), dim=middle, settings=settings
    )


EDITING = Experiment(
    name="beyond-editing",
    title="Beyond the paper: editing and erasing facts",
    caption="Rank-one edits of closed-form memories (thresholding P = d/8 and q = p, Gaussian E, "
    "spherical U) and of trained ones (sign-like Adam, T = 10240, B = 256): the closed-form "
    "replacement and ROME's minimum-norm update with C = I and with the key covariance, one "
    "edit after the other on tokens drawn uniformly (new targets uniform among the other "
    "outputs); N = 1000, M = 5, α = 2 unless said. Damage: change of the exact p-weighted error "
    "of the other tokens; capacity: edits until it rises by 10 %. Dashed: the interference "
    "theory (docs: beyond/editing.md).",
    item="beyond",
    sweeps=sweeps,
    claims=CLAIMS,
    draw=draw,
    table=table,
)

register_kind(EditingKind())

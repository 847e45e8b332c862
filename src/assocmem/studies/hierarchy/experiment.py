"""Beyond the paper: associative memories in series (``assocmem hierarchy``, figure
``beyond-hierarchy``; docs: beyond/hierarchy.md).

Three sweeps, each a shipped spec (the full scale; each setting written once): the closed-form
map over (K, α) (``hierarchy``), finite data (``hierarchy_data``) and the trained bottleneck
(``hierarchy_trained``). The quick scale keeps a subset of each spec's values (:data:`QUICK`)
and 20 trials (3 seeds for the trained runs). The claims' tolerances are the ``[claims.ID]``
tables of ``studies/hierarchy/hierarchy.toml``.
"""

import copy
import functools
import math
from typing import Any

import pandas as pd
from matplotlib.figure import Figure

from assocmem.experiments.experiment import TRIALS, Context, Experiment, RawSpec, shipped_sweep
from assocmem.experiments.measure import margin
from assocmem.experiments.tolerances import tolerances
from assocmem.report import DETECTABLE_SE, Claim, Table
from assocmem.studies.hierarchy.figure import hierarchy_figure
from assocmem.studies.hierarchy.kind import BottleneckKind, HierarchyKind
from assocmem.studies.hierarchy.memory import HierarchyConfig
from assocmem.studies.hierarchy.stats import compare, parts, trained_summary, winner
from assocmem.studies.hierarchy.theory import predict_hierarchy
from assocmem.sweep.kinds import register_kind

SPECS = {name: shipped_sweep(name) for name in ("hierarchy", "hierarchy_data", "hierarchy_trained")}
TOLERANCES = {claim_id: tolerances(claim_id) for claim_id in SPECS["hierarchy"]["claims"]}
MAP_DIM = 512  # the d of the (K, α) map and of the table: the largest d of both scales
# The quick scale: these values of each spec's lists (a subset), trials per scale.
QUICK: dict[str, dict[str, Any]] = {
    "hierarchy": {
        "n_concepts": [5, 20, 100],
        "alpha": [1.5, 2.0],
        "concept_map": ["balanced"],
        "dims": [d for d in SPECS["hierarchy"]["base"]["dims"] if d <= MAP_DIM],
    },
    "hierarchy_data": {"dims": [64, 256], "n_samples": [100, 1000, 10000, 100000]},
    "hierarchy_trained": {"dim": [32, 64], "lr": [0.01]},
}
QUICK_TRIALS = {"hierarchy": TRIALS["quick"], "hierarchy_data": TRIALS["quick"]}
QUICK_TRIALS["hierarchy_trained"] = 3


def _restrict(raw: RawSpec, keep: dict[str, list[Any]]) -> RawSpec:
    """The spec with only the ``keep`` values of its lists (base lists, axes or zip rows)."""
    raw = copy.deepcopy(raw)
    for name, values in keep.items():
        for table in ("base", "axes"):
            if name in raw.get(table, {}) and isinstance(raw[table][name], list):
                raw[table][name] = [v for v in raw[table][name] if v in values]
    if "zip" in raw:
        columns = raw["zip"]
        rows = [dict(zip(columns, row, strict=True)) for row in zip(*columns.values(), strict=True)]
        rows = [r for r in rows if all(r[k] in keep.get(k, [r[k]]) for k in r)]
        raw["zip"] = {name: [r[name] for r in rows] for name in columns}
    return raw


def sweeps(scale: str) -> dict[str, RawSpec]:
    """The three sweeps at ``scale``: the shipped specs (full) or their quick subsets."""
    out = {}
    for name, spec in SPECS.items():
        raw = {k: v for k, v in spec.items() if k in ("kind", "trials", "base", "axes", "zip")}
        if scale == "quick":
            raw = _restrict(raw, QUICK[name])
            raw["trials"] = QUICK_TRIALS[name]
        out[name] = raw
    return out


def _focus(frame: pd.DataFrame, claim: str) -> pd.DataFrame:
    """The rows of the claim's point: its K and α, balanced f₁, infinite data."""
    tol = TOLERANCES[claim]
    keep = (
        (frame["n_concepts"] == tol["n_concepts"])
        & (frame["alpha"] == tol["alpha"])
        & (frame["concept_map"] == "balanced")
        & (frame["n_samples"] == math.inf)
    )
    rows: pd.DataFrame = frame[keep]
    return rows


def _unjudged(claim_id: str, statement: str, tolerance: str, why: str) -> Claim:
    return Claim(claim_id, statement, {}, None, tolerance, note=why)


def focus_config(frame: pd.DataFrame, dims: list[int], scheme: str) -> HierarchyConfig:
    """The config of the stored focus point (its seed, N, M, memory 2's scheme) at ``dims``."""
    first = frame.iloc[0]
    return HierarchyConfig(
        n_inputs=int(first["n_inputs"]),
        n_concepts=int(first["n_concepts"]),
        n_outputs=int(first["n_outputs"]),
        alpha=float(first["alpha"]),
        dims=tuple(dims),
        schemes=(scheme,),
        concept_scheme=str(first["concept_scheme"]),
        seed=int(first["seed"]),
    )


@functools.cache
def predictions(cfg: HierarchyConfig, scheme: str, trials: int) -> pd.DataFrame:
    """Predicted parts and compositions at every d of ``cfg`` (means over ``trials`` f₁)."""
    predicted = predict_hierarchy(cfg, scheme, "matrix", trials=range(trials))
    out = {name: v.mean(0) for name, v in predicted.items() if name != "hidden"}
    return pd.DataFrame({"dim": cfg.dims, "hidden": predicted["hidden"], **out})


def _measured_and_predicted(frame: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame] | None:
    tol = TOLERANCES["hierarchy-2"]
    focus = _focus(frame, "hierarchy-2")
    if focus.empty or tol["scheme"] not in set(focus["scheme"]):
        return None
    measured = parts(focus, tol["scheme"])
    dims = sorted(int(d) for d in measured["dim"])
    cfg = focus_config(focus, dims, tol["scheme"])
    return measured, predictions(cfg, tol["scheme"], int(tol["prediction_trials"]))


def claim_theory(frames: Any, scale: str) -> Claim:
    """The predicted hard error against the measured one at the focus point, d ≥ min_dim."""
    tol = TOLERANCES["hierarchy-2"]
    statement = (
        f"the hard composition's error predicted from the two single-memory laws (interference "
        f"picture, independence) matches the measured one for d ≥ {tol['min_dim']} "
        f"(K = {tol['n_concepts']}, α = {tol['alpha']:g}, memory 1 {tol['scheme']}, matrix "
        "parity)"
    )
    rel = float(tol["rel_tolerance"])
    tolerance = f"|predicted − measured| ≤ {rel:g}·measured + 2 s.e. at every d"
    both = _measured_and_predicted(frames.hierarchy)
    if both is None:
        return _unjudged("hierarchy-2", statement, tolerance, "the focus point was not run")
    measured, predicted = both
    rows = measured.merge(predicted, on="dim", suffixes=("", "_predicted"))
    rows = rows[rows["dim"] >= tol["min_dim"]]
    values: dict[str, float] = {}
    ok, margins = True, []
    for _, row in rows.iterrows():
        d, mean, sem, pred = int(row["dim"]), row["hard_mean"], row["hard_sem"], row["hard"]
        values |= {f"measured_d{d}": float(mean), f"sem_d{d}": float(sem)}
        values[f"predicted_d{d}"] = float(pred)
        ok = ok and bool(abs(pred - mean) <= rel * mean + 2 * sem)
        margins.append(margin(abs(pred - mean), -math.inf, rel * mean + 2 * sem, sem))
    return Claim(
        "hierarchy-2",
        statement,
        values,
        bool(ok and len(rows)),
        tolerance=tolerance,
        margin_se=min(margins) if margins else None,
        margin_note="the worst d, in the measured error's s.e. over trials",
    )


def claim_soft(frames: Any, scale: str) -> Claim:
    """The soft composition never beats the direct memory at equal matrix parameters."""
    tol = TOLERANCES["hierarchy-3"]
    k = float(tol["standard_errors"])
    rows = compare(frames.hierarchy, "soft", "matrix", pick_se=True)
    rows = rows[rows["dim"] >= tol["min_dim"]]
    # the s.e. of a difference at picked schemes includes the pick (a bootstrap of the trials)
    slack = rows["diff"] + k * rows["diff_sem_pick"]
    worst = rows.loc[slack.idxmin()] if slack.notna().any() else None  # NaN: one trial, no s.e.
    measured = {"points": float(len(rows)), "beaten": float((slack < 0).sum())}
    margins = [
        margin(d, -k * se, math.inf, se)
        for d, se in zip(rows["diff"], rows["diff_sem_pick"], strict=True)
    ]
    if worst is not None:
        worst_se = float(worst["diff_sem_pick"])
        measured |= {"worst_diff": float(worst["diff"]), "worst_diff_sem": worst_se}
    return Claim(
        "hierarchy-3",
        "the soft composition (memory 1's output vector fed to memory 2, its noise carried) "
        "never beats the direct memory at equal matrix parameters: it is the direct memory "
        f"W₂W₁ of rank ≤ d₁ (every K, α and d ≥ {tol['min_dim']}; best schemes)",
        measured,
        bool(len(rows) and (slack >= 0).all()),
        tolerance=f"E_soft − E_direct ≥ −{k:g} s.e. (paired over trials, the pick of each "
        "side's best scheme included) at every point",
        margin_se=min(margins) if margins else None,
        margin_note="the worst point, in s.e. of the paired difference with the scheme pick "
        "(bootstrap over trials)",
    )


def _at_map_dim(frame: pd.DataFrame, metric: str, parity: str, dim: int = MAP_DIM) -> pd.DataFrame:
    rows = compare(frame, metric, parity)
    return rows[(rows["dim"] == dim) & (rows["n_samples"] == math.inf)]


def table_dim(frame: pd.DataFrame) -> int:
    """The d of the table: :data:`MAP_DIM`, else the largest d run below it, else the smallest
    (settings without d = 512 still get a table)."""
    dims = sorted(int(d) for d in set(frame["dim"].dropna()))
    below = [d for d in dims if d <= MAP_DIM]
    return below[-1] if below else dims[0]


def claim_where(frames: Any, scale: str) -> Claim:
    """The hard hierarchy beats the direct memory at K = 4M and loses at K = M (largest d)."""
    tol = TOLERANCES["hierarchy-4"]
    k = float(tol["standard_errors"])
    statement = (
        f"at d = {MAP_DIM} (α = {tol['alpha']:g}, balanced f₁, equal matrix parameters, best "
        f"thresholds) the hard hierarchy beats the direct memory with K = {tol['wins']} concepts "
        f"and loses with K = M = {tol['loses']}"
    )
    tolerance = f"paired difference beyond ±{k:g} s.e., of the expected sign"
    rows = _at_map_dim(frames.hierarchy, "hard", "matrix")
    rows = rows[(rows["alpha"] == tol["alpha"]) & (rows["concept_map"] == "balanced")]
    found = {
        int(K): row for K, row in zip(rows["n_concepts"], rows.to_dict("records"), strict=True)
    }
    if tol["wins"] not in found or tol["loses"] not in found:
        return _unjudged("hierarchy-4", statement, tolerance, f"no d = {MAP_DIM} runs of those K")
    measured: dict[str, float] = {}
    verdicts, margins = [], []
    for role, expected in (("wins", "hierarchy"), ("loses", "direct")):
        row = found[int(tol[role])]
        for name, key in (("hierarchy", "mean"), ("direct", "direct_mean"), ("diff", "diff")):
            measured[f"K{tol[role]}_{name}"] = float(row[key])
        measured[f"K{tol[role]}_diff_sem"] = float(row["diff_sem"])
        verdicts.append(winner(row["diff"], row["diff_sem"], k) == expected)
        signed = -row["diff"] if expected == "hierarchy" else row["diff"]
        margins.append(margin(signed, k * row["diff_sem"], math.inf, row["diff_sem"]))
    return Claim(
        "hierarchy-4",
        statement,
        measured,
        bool(all(verdicts)),
        tolerance=tolerance,
        margin_se=min(margins),
        margin_note="in paired s.e. over trials",
    )


def _trained_cell(frames: Any, claim: str) -> dict[str, Any] | None:
    """The trained hierarchy's summary at the claim's K, the largest d and the largest T."""
    frame = frames.hierarchy_trained
    summary = trained_summary(frame[frame["n_concepts"] == TOLERANCES[claim]["n_concepts"]])
    if summary.empty:
        return None
    rows = summary[summary["model"] == "hierarchy"]
    rows = rows[(rows["dim"] == rows["dim"].max()) & (rows["n_samples"] == rows["n_samples"].max())]
    return dict(rows.iloc[0])


def claim_found(frames: Any, scale: str) -> Claim:
    """At K = M the trained bottleneck finds f₁ (NMI ≥ 0.9) at the largest d and T."""
    tol = TOLERANCES["hierarchy-5"]
    statement = (
        f"trained end to end, the bottleneck finds f₁ when K = M = {tol['n_concepts']}: NMI(ẑ, "
        f"f₁) ≥ {tol['found']:g} at the largest d and T (best seed-averaged lr)"
    )
    cell = _trained_cell(frames, "hierarchy-5")
    tolerance = f"mean NMI over seeds ≥ {tol['found']:g}"
    if cell is None:
        return _unjudged("hierarchy-5", statement, tolerance, "no trained runs with that K")
    measured = {
        name: float(cell[key])
        for name, key in (("nmi", "nmi_mean"), ("nmi_sem", "nmi_sem"), ("error_hard", "error_mean"))
        + (("dim", "dim"), ("n_samples", "n_samples"), ("lr", "lr"))
    }
    return Claim(
        "hierarchy-5",
        statement,
        measured,
        bool(cell["nmi_mean"] >= tol["found"]),
        tolerance,
        margin_se=margin(float(cell["nmi_mean"]), tol["found"], math.inf, float(cell["nmi_sem"])),
        margin_note="in s.e. of the NMI over seeds",
    )


def claim_unidentified(frames: Any, scale: str) -> Claim:
    """At K > M, ẑ agrees with f₁ no better than with a random map of the same residues."""
    tol = TOLERANCES["hierarchy-6"]
    statement = (
        f"with K = {tol['n_concepts']} > M the data fix f₁ only up to its residue mod M: the "
        "learned ẑ agrees with f₁ no better than with a random map f̃₁ of the same residues "
        "(largest d and T)"
    )
    cell = _trained_cell(frames, "hierarchy-6")
    tolerance = f"|NMI(ẑ, f₁) − NMI(ẑ, f̃₁)| ≤ max({tol['tolerance']:g}, 2 s.e.)"
    if cell is None:
        return _unjudged("hierarchy-6", statement, tolerance, "no trained runs with that K")
    bound = max(float(tol["tolerance"]), 2 * cell["gap_sem"])
    names = ("nmi", "nmi_null", "gap", "nmi_output", "concepts_used")
    measured = {name: float(cell[f"{name}_mean"]) for name in names}
    measured["gap_sem"] = float(cell["gap_sem"])
    se = float(cell["gap_sem"])
    return Claim(
        "hierarchy-6",
        statement,
        measured,
        bool(abs(cell["gap_mean"]) <= bound),
        tolerance,
        margin_se=margin(abs(float(cell["gap_mean"])), -math.inf, bound, se),
        margin_note="in s.e. of the gap over seeds",
        detectable=DETECTABLE_SE * se,
    )


def _cell(mean: float, sem: float) -> str:
    """Mean ± 2 s.e., in units of 10⁻³."""
    return f"{1e3 * mean:.3g}±{2e3 * sem:.2g}"


def table(ctx: Context) -> Table:
    """At d = MAP_DIM (or :func:`table_dim`): each memory at its best threshold, and who wins
    at each parity."""
    frame = ctx.frames.hierarchy
    dim = table_dim(frame)
    by_parity = {p: _at_map_dim(frame, "hard", p, dim) for p in ("matrix", "embeddings")}
    soft = _at_map_dim(frame, "soft", "matrix", dim)
    keys = ["n_concepts", "alpha", "concept_map"]
    rows = []
    matrix = by_parity["matrix"].merge(by_parity["embeddings"], on=keys, suffixes=("", "_emb"))
    matrix = matrix.merge(soft, on=keys, suffixes=("", "_soft"))
    for row in matrix.sort_values(["concept_map", "alpha", "n_concepts"]).to_dict("records"):
        rows.append(
            [
                f"{row['n_concepts']}",
                f"{row['alpha']:g}",
                row["concept_map"],
                _cell(row["direct_mean"], row["direct_sem"]),
                _cell(row["mean"], row["sem"]),
                winner(row["diff"], row["diff_sem"]),
                _cell(row["mean_emb"], row["sem_emb"]),
                winner(row["diff_emb"], row["diff_sem_emb"]),
                _cell(row["mean_soft"], row["sem_soft"]),
            ]
        )
    return Table(
        f"Memories in series against one direct memory at d = {dim}: errors × 10³, mean ± 2 s.e.",
        ["K", "α", "f₁", "direct", "hard (matrix)", "wins", "hard (emb.)", "wins", "soft"],
        rows,
        "Each memory at its best threshold (trial-mean). Matrix parity: d₁ = d₂ = ⌊d/√2⌋; "
        "emb.: equal parameters counting the embeddings. 'wins' from the paired difference "
        "beyond 2 s.e. (hierarchy, direct or tie).",
    )


def draw(ctx: Context) -> Figure:
    both = _measured_and_predicted(ctx.frames.hierarchy)
    focus = TOLERANCES["hierarchy-2"]
    return hierarchy_figure(
        ctx.frames.hierarchy,
        ctx.frames.hierarchy_data,
        ctx.frames.hierarchy_trained,
        parts_frames=both,
        focus={"n_concepts": focus["n_concepts"], "alpha": focus["alpha"]},
        scheme=focus["scheme"],
        map_dim=MAP_DIM,
    )


HIERARCHY = Experiment(
    name="beyond-hierarchy",
    title="Beyond the paper: associative memories in series",
    caption="x → z = f₁(x) ∈ [K] → y = z mod M (N = 1000, M = 5): two closed-form memories in "
    "series against one direct memory, each at its best threshold. (a) error vs d at K = 20, α "
    r"= 2 (hierarchy at equal matrix parameters $d_1 = d_2 = \lfloor d/\sqrt{2}\rfloor$, or at "
    "equal parameters with the embeddings); (b) error vs T (schemes on sample counts); (c) the "
    "parts of the composition at one memory-1 threshold, measured (points, ± 2 s.e.) and "
    "predicted from the single-memory laws (lines); (d) where each wins over (K, α), log₁₀ of "
    "the error ratio; (e, f) trained end to end through a K-concept bottleneck: NMI of the "
    "learned concept with f₁ (dotted: a random map of the same residues) and the error, vs T. "
    "An error of 0 is not drawn on log axes.",
    item="beyond",
    sweeps=sweeps,
    claims={
        "hierarchy-2": claim_theory,
        "hierarchy-3": claim_soft,
        "hierarchy-4": claim_where,
        "hierarchy-5": claim_found,
        "hierarchy-6": claim_unidentified,
    },
    draw=draw,
    table=table,
)

register_kind(HierarchyKind())
register_kind(BottleneckKind())

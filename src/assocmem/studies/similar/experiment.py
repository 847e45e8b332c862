r"""Beyond the paper: similar tokens. Clustered input embeddings
:math:`e_x = \sqrt{\rho}\cdot c_{g(x)} + \sqrt{1-\rho}\cdot \xi_x` over G groups, with targets
shared within a group or independent of it: the error on never-seen tokens (generalisation through
the group), the effective number of tokens N_eff(ρ, G), and the interference of correlated keys
(docs: beyond/similar.md).

One sweep, the shipped spec ``similar`` (``assocmem sweep run similar`` runs the full scale);
the quick scale keeps d ≤ 512 (its largest d becomes 512) and 20 trials. Its ``[claims.ID]``
tables fix the claims' tolerances.
"""

import copy
import math
from collections.abc import Mapping
from typing import Any

import pandas as pd
from matplotlib.figure import Figure

from assocmem.config.errors import ConfigError
from assocmem.experiments.experiment import (
    TRIALS,
    Context,
    Experiment,
    RawSpec,
    shipped_sweep,
)
from assocmem.experiments.measure import CI_NOTE, ci_se, margin
from assocmem.experiments.tolerances import tolerances
from assocmem.ops.stats import mean_se
from assocmem.report import Claim, Table
from assocmem.studies.similar.figure import similar_figure
from assocmem.studies.similar.kind import SimilarKind
from assocmem.studies.similar.records import (
    MIN_MASS,
    data_rows,
    dim_rows,
    effective_table,
    paired,
    select,
)
from assocmem.sweep.kinds import register_kind
from assocmem.sweep.spec import SweepSpec

SPEC = "similar"
QUICK_MAX_DIM = 512
BASE_POINT = {"alpha": 2.0, "grouping": "random"}  # the claims' token law and grouping


def sweeps(scale: str) -> dict[str, RawSpec]:
    """The shipped spec at ``scale``: full as shipped; quick with d ≤ 512 and 20 trials."""
    raw = copy.deepcopy(shipped_sweep(SPEC))
    raw.pop("name", None)
    raw["trials"] = TRIALS[scale]
    if scale == "quick":
        table = "zip" if "dims" in raw.get("zip", {}) else "base"
        dims = raw[table]["dims"]
        capped = [sorted({min(d, QUICK_MAX_DIM) for d in row}) for row in dims]
        raw[table]["dims"] = capped if table == "zip" else capped[0]
    return {SPEC: raw}


def _unjudged(claim_id: str, statement: str, missing: str) -> Claim:
    note = f"not judged: the records lack {missing} (settings changed from the spec?)"
    return Claim(claim_id, statement, {}, None, tolerance="", note=note)


def _largest(rows: pd.DataFrame) -> pd.DataFrame:
    largest: pd.DataFrame = rows[rows["dim"] == rows["dim"].max()]
    return largest


def claim_generalisation(frames: Any, scale: str) -> Claim:
    """Shared targets: the error on never-seen tokens falls below chance through the group."""
    tol = tolerances("similar-1")
    rho, groups, size = tol["similarity"], tol["n_groups"], tol["n_samples"]
    statement = (
        f"With group-shared targets (G = {groups}, α = 2, random groups), tokens never seen in "
        f"T = {size} samples are answered through their group: their error at ρ = {rho} is "
        f"lower than at ρ = 0 (chance, 1 − 1/M) by at least {tol['min_drop']} (largest d)"
    )
    rows = data_rows(frames.similar, **BASE_POINT, n_groups=groups, target="group")
    rows = _largest(rows[rows["n_samples"] == size])
    by_rho = {r: part.set_index("trial")["never_seen"] for r, part in rows.groupby("similarity")}
    if 0.0 not in by_rho or rho not in by_rho:
        return _unjudged("similar-1", statement, f"ρ = 0 and ρ = {rho} at T = {size}")
    drop, se = paired(by_rho[0.0], by_rho[rho])
    base, base_se = mean_se(by_rho[0.0])
    chance = 1 - 1 / int(rows["n_outputs"].iloc[0])
    return Claim(
        "similar-1",
        statement,
        {
            "never_seen_error_rho0": base,
            "never_seen_error_rho0_se": base_se,
            "chance": chance,
            f"never_seen_error_rho{rho}": mean_se(by_rho[rho])[0],
            "drop": drop,
            "drop_se": se,
        },
        bool(drop - 2 * se >= tol["min_drop"]),
        tolerance=f"drop − 2 s.e. ≥ {tol['min_drop']} (paired over trials)",
        margin_se=margin(drop, tol["min_drop"] + 2 * se, math.inf, se),
        margin_note="in paired s.e. over trials",
    )


def claim_theory(frames: Any, scale: str) -> Claim:
    """The Gaussian theory of the never-seen tokens' error, shared targets, every ρ > 0 and G."""
    tol = tolerances("similar-2")["tolerance"]
    statement = (
        "With group-shared targets the Gaussian theory of the scores predicts the error on "
        f"never-seen tokens within {tol} (+ 2 s.e.) at every ρ > 0, G and T (never-seen mass ≥ "
        f"{MIN_MASS * 100:g} %; α = 2, random groups, largest d)"
    )
    rows = _largest(data_rows(frames.similar, **BASE_POINT, target="group"))
    rows = rows[rows["similarity"] > 0]
    worst: tuple[float, float, str] = (0.0, 0.0, "")
    passed, points, margins = True, 0, []
    for (rho, groups, size), part in rows.groupby(["similarity", "n_groups", "n_samples"]):
        if part["unseen_mass"].mean() < MIN_MASS:
            continue
        diff, se = mean_se(part["never_seen"] - part["theory_never_seen"])
        points += 1
        passed &= abs(diff) <= tol + 2 * (0 if math.isnan(se) else se)
        if not math.isnan(se):
            margins.append(margin(abs(diff), -math.inf, tol + 2 * se, se))
        if abs(diff) >= abs(worst[0]):
            worst = (diff, se, f"ρ = {rho}, G = {groups}, T = {size:g}")
    if points == 0:
        return _unjudged("similar-2", statement, "shared-target rows with ρ > 0")
    return Claim(
        "similar-2",
        statement,
        {"points": float(points), "largest_deviation": worst[0], "its_se": worst[1]},
        bool(passed),
        tolerance=f"|measured − theory| ≤ {tol} + 2 s.e. at every point",
        note=f"largest deviation at {worst[2]}",
        margin_se=min(margins) if margins else None,
        margin_note="the worst point, in its s.e. over trials",
    )


def claim_effective(frames: Any, scale: str) -> Claim:
    """N_eff: N at ρ = 0, far fewer tokens at ρ > 0, fewer with fewer groups."""
    tol = tolerances("similar-3")
    rho, ratio = tol["similarity"], tol["max_fraction"]
    statement = (
        "With group-shared targets the effective number of tokens (the N of the disjoint model "
        f"with the same error-vs-T curve) is N at ρ = 0 (interval contains N), below "
        f"{ratio}·N at ρ = {rho} for both G, and smaller for fewer groups (α = 2, random groups)"
    )
    fits = effective_table(select(frames.similar, target="group"))
    at = _fits_by_point(fits[(fits["alpha"] == 2.0) & (fits["grouping"] == "random")])
    groups = sorted({g for g, _ in at})
    need = [(g, r) for g in groups for r in (0.0, rho)]
    if len(groups) < 2 or any(key not in at for key in need):
        return _unjudged("similar-3", statement, f"two G with ρ = 0 and ρ = {rho}")
    n = at[need[0]]["n_inputs"]
    zero = at[(groups[0], 0.0)]
    small, large = at[(groups[0], rho)], at[(groups[-1], rho)]
    passed = (
        zero["low"] <= n <= zero["high"]
        and all(at[(g, rho)]["high"] < ratio * n for g in groups)
        and small["high"] < large["low"]
    )
    se = {key: ci_se(fit["low"], fit["high"]) for key, fit in at.items()}
    margins = [margin(n, zero["low"], zero["high"], se[need[0]])]  # N inside the interval
    margins += [margin(at[(g, rho)]["high"], -math.inf, ratio * n, se[(g, rho)]) for g in groups]
    between = math.hypot(se[(groups[0], rho)], se[(groups[-1], rho)])
    margins.append(margin(large["low"] - small["high"], 0.0, math.inf, between))
    measured = {f"n_eff_rho0{end}": zero[name] for end, name in _FIT_FIELDS}
    for g in groups:
        measured |= {f"n_eff_G{g}{end}": at[(g, rho)][name] for end, name in _FIT_FIELDS}
    return Claim(
        "similar-3",
        statement,
        measured,
        bool(passed),
        tolerance=f"95 % bootstrap intervals: N ∈ [low, high] at ρ = 0; high < {ratio}·N at "
        f"ρ = {rho}; high(G = {groups[0]}) < low(G = {groups[-1]})",
        margin_se=min(margins),
        margin_note="the worst part, " + CI_NOTE + " of each N_eff",
    )


_FIT_FIELDS = (("", "n_eff"), ("_low", "low"), ("_high", "high"))


def _fits_by_point(fits: pd.DataFrame) -> dict[tuple[int, float], dict[str, float]]:
    """(G, ρ) → the numbers of one N_eff fit (:func:`effective_table` rows of one law)."""
    names = ("n_inputs", "n_eff", "low", "high")
    return {
        (int(row["n_groups"]), float(row["similarity"])): {k: float(row[k]) for k in names}
        for row in fits.to_dict("records")
    }


def claim_interference(frames: Any, scale: str) -> Claim:
    """Independent targets: correlated keys of one group interfere (threshold memory, T = ∞)."""
    tol = tolerances("similar-4")
    rho, groups = tol["similarity"], tol["n_groups"]
    statement = (
        f"With targets independent of the groups (G = {groups}, α = 2), correlated keys "
        f"interfere: at infinite data the threshold memory's error at the largest d exceeds its "
        f"ρ = 0 value by at least {tol['min_excess']} at ρ = {rho}, and the theory's excess "
        f"agrees within {tol['tolerance']} (+ 2 s.e.)"
    )
    rows = _largest(dim_rows(frames.similar, **BASE_POINT, n_groups=groups, target="mod"))
    by_rho = {r: part.set_index("trial") for r, part in rows.groupby("similarity")}
    if 0.0 not in by_rho or rho not in by_rho:
        return _unjudged("similar-4", statement, f"ρ = 0 and ρ = {rho} at infinite data")
    excess, se = paired(by_rho[rho]["error"], by_rho[0.0]["error"])
    theory = by_rho[rho]["theory_error"] - by_rho[0.0]["theory_error"]
    gap, gap_se = paired(by_rho[rho]["error"] - by_rho[0.0]["error"], theory)
    passed = excess - 2 * se >= tol["min_excess"] and abs(gap) <= tol["tolerance"] + 2 * gap_se
    return Claim(
        "similar-4",
        statement,
        {
            "error_rho0": mean_se(by_rho[0.0]["error"])[0],
            f"error_rho{rho}": mean_se(by_rho[rho]["error"])[0],
            "excess": excess,
            "excess_se": se,
            "theory_excess": float(theory.mean()),
            "measured_minus_theory": gap,
            "measured_minus_theory_se": gap_se,
        },
        bool(passed),
        tolerance=f"excess − 2 s.e. ≥ {tol['min_excess']}; |excess − theory| ≤ "
        f"{tol['tolerance']} + 2 s.e.",
        margin_se=min(
            margin(excess, tol["min_excess"] + 2 * se, math.inf, se),
            margin(abs(gap), -math.inf, tol["tolerance"] + 2 * gap_se, gap_se),
        ),
        margin_note="the worst part, in paired s.e. over trials",
    )


def _cell(mean: float, se: float) -> str:
    return "—" if math.isnan(mean) else f"{mean:.3f}±{2 * se:.3f}"


def _count(value: float) -> str:
    return f"{value:.0e}".replace("+0", "") if value >= 10_000 else f"{value:.0f}"


def table(ctx: Context) -> Table:
    """Per point (α, grouping, G, ρ): N_eff with shared targets, the never-seen error at the
    claims' T, and the interference of independent targets at that T."""
    frame = ctx.frames.similar
    size = tolerances("similar-1")["n_samples"]
    fits = {
        (r["alpha"], r["grouping"], r["n_groups"], r["similarity"]): r
        for r in effective_table(frame).to_dict("records")
        if r["target"] == "group"
    }
    at = _largest(data_rows(frame))
    at = at[at["n_samples"] == size]
    rows = []
    for _, cell in at.groupby(["alpha", "grouping", "n_groups", "similarity"]):
        first = cell.iloc[0]
        law = (float(first["alpha"]), str(first["grouping"]), int(first["n_groups"]))
        rho = float(first["similarity"])
        same = at[(at["alpha"] == law[0]) & (at["grouping"] == law[1]) & (at["n_groups"] == law[2])]
        zero = same[(same["similarity"] == 0.0) & (same["target"] == "mod")].set_index("trial")
        shared = cell[cell["target"] == "group"].set_index("trial")
        own = cell[cell["target"] == "mod"].set_index("trial")
        fit = fits.get((*law, rho))
        rows.append(
            [
                f"{law[0]:g}",
                law[1],
                law[2],
                f"{rho:g}",
                "—" if fit is None else _fit_cell(fit),
                "—" if fit is None else f"{fit['rms']:.2f}",
                "—" if fit is None else _count(fit["n_eff_never_seen"]),
                _cell(*mean_se(shared["never_seen"])),
                f"{shared['theory_never_seen'].mean():.3f}",
                _cell(*paired(own["error"], zero["error"])),
                f"{(own['theory_error'] - zero['theory_error']).mean():.3f}",
            ]
        )
    return Table(
        f"Similar tokens: N_eff, never-seen error and interference (T = {size}, largest d)",
        [
            "α",
            "groups",
            "G",
            "ρ",
            "N_eff [95% CI]",
            "rms",
            "unseen fit",
            "never-seen",
            "theory",
            "interf.",
            "theory",
        ],  # fmt: skip
        rows,
        "Shared targets: f* = g mod M; independent: f* = x mod M. N_eff: the N of the disjoint "
        "model whose error-vs-T curve matches (least squares on log error over T ≤ (d/8)^α; "
        "95 % trial bootstrap; rms: its log residual); 'unseen fit': the same fit on the "
        "never-seen tokens' part of the error. Never-seen: the error on tokens never seen, "
        "shared targets (mean ± 2 s.e.). Interf.: the error with independent targets minus the "
        "ρ = 0 error (paired, mean ± 2 s.e.). Theory: the Gaussian theory of the scores.",
    )


def _fit_cell(fit: Any) -> str:
    return f"{_count(fit['n_eff'])} [{_count(fit['low'])}, {_count(fit['high'])}]"


def draw(ctx: Context) -> Figure:
    frame = ctx.frames.similar
    return similar_figure(frame, effective_table(frame))


def check_sweeps(specs: Mapping[str, SweepSpec]) -> None:
    """What the N_eff fit needs: with group-shared targets, G ≥ 2 (one group gives every token
    the same target: error 0 at every T, nothing to fit)."""
    for cfg in specs[SPEC].points():
        if cfg.target == "group" and cfg.n_groups < 2:
            raise ConfigError("n_groups", "G = 1 gives every token the same group-shared target "
                              "(error 0 at every T: no N_eff to fit); give G ≥ 2")  # fmt: skip


SIMILAR = Experiment(
    name="beyond-similar",
    title="Beyond the paper: similar tokens",
    caption="Closed-form memories with clustered input embeddings $e_x = "
    r"\sqrt{\rho}\,c_{g(x)} + \sqrt{1-\rho}\,\xi_x$ (N = 1000, M = 5, G groups; α = 2 unless "
    "stated). Top: tokens never seen (seen-once memory at the largest d; dashed: Gaussian "
    r"theory), the error against T with the fitted disjoint curves $E_0(T;\,N_{\mathrm{eff}})$ "
    r"(dotted), and $N_{\mathrm{eff}}(\rho, G)$ with 95 % bootstrap intervals. Bottom: infinite "
    "data, threshold d/8 memory, against d with shared and independent targets (dashed: "
    "theory), and the extra interference of independent targets against T.",
    item="beyond",
    sweeps=sweeps,
    claims={
        "similar-1": claim_generalisation,
        "similar-2": claim_theory,
        "similar-3": claim_effective,
        "similar-4": claim_interference,
    },
    draw=draw,
    table=table,
    check=check_sweeps,
)

register_kind(SimilarKind())

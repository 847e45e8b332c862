"""Beyond the paper: the factual-recall regime. N facts with as many answers
(M = N), f* a random permutation, p uniform: the capacity of the outer-product memory and of
trained linear and MLP memories (SGD and sign-Adam of the optimiser registry), their bits per
parameter beside the 2 bits of trained language models, and the error law as M grows under
Zipf with predict.py's M − 1-competitor theory (docs: beyond/facts.md).

Three shipped specs in this folder: ``facts`` (trained memories, with the claims' tolerances),
``facts-closed`` (the outer-product memory) and ``facts-errors`` (the error law); two more,
``facts-editing`` and ``facts-parallel``, ask the earlier studies' questions at M = N
(:mod:`assocmem.studies.facts.earlier`, claims facts-7 and facts-8). The quick
scale keeps trained d ≤ 32 and two seeds, closed-form d ≤ 256 and three seeds, 20 trials.
"""

import copy
import math
from typing import Any

import pandas as pd
from matplotlib.figure import Figure

from assocmem.experiments.experiment import TRIALS, Context, Experiment, RawSpec, shipped_sweep
from assocmem.experiments.measure import margin
from assocmem.experiments.tolerances import tolerances
from assocmem.report import Claim, Table
from assocmem.studies.facts.claims import (
    capacity_records,
    claim_advantage_trend,
    claim_bits,
    claim_slope,
    claim_threshold,
)
from assocmem.studies.facts.earlier import (
    EARLIER_NOTE,
    claim_edit_capacity,
    claim_equal_width,
    earlier_panels,
    earlier_rows,
    earlier_sweeps,
)
from assocmem.studies.facts.figure import facts_figure
from assocmem.studies.facts.kind import FactsCapacityKind
from assocmem.studies.facts.summary import (
    SIGN_ADAM_LINEAR,
    capacity_table,
    capacity_theory,
    error_curves,
    theory_configs,
    theory_frame,
)
from assocmem.sweep.kinds import register_kind

register_kind(FactsCapacityKind())

QUICK = {
    "facts": {"dim": [16, 24, 32], "seed": [0, 1]},
    "facts_closed": {"dim": [32, 64, 128, 256], "seed": [0, 1, 2]},
}
THEORY_OUTPUTS = (5,)  # predict.py's quadrature: seconds at M = 5, minutes at 50, not at M = N
SPECS = {"facts": "facts", "facts_closed": "facts-closed", "facts_errors": "facts-errors"}


def sweeps(scale: str) -> dict[str, RawSpec]:
    """The three shipped specs at ``scale`` (full: as shipped)."""
    out = {}
    for frame, spec in SPECS.items():
        raw = copy.deepcopy(shipped_sweep(spec))
        raw.pop("name", None)
        if frame == "facts_errors":
            raw["trials"] = TRIALS[scale]
        elif scale == "quick":
            raw["axes"] = {**raw["axes"], **QUICK[frame]}
        out[frame] = raw
    return out | earlier_sweeps(scale)


def claim_error_theory(frames: Any, scale: str) -> Claim:
    """predict.py's theory within tolerance (+ 2 s.e.) at M = 5, q = p, T = ∞, d ≥ min_dim (its
    quadrature costs N·41(M + 1)·M per node: minutes at M = 50, out of reach at M = N)."""
    tol = tolerances("facts-5")
    statement = (
        f"Under Zipf (α = 2, N = 1000, random f*), the M − 1-competitor theory of predicted "
        "error curves "
        f"gives the error of q = p at infinite data within {tol['tolerance']} (+ 2 s.e.) "
        f"for M = 5 at every d ≥ {tol['min_dim']}"
    )
    return theory_claim("facts-5", statement, _error_vs_theory(frames, False), tol)


def claim_error_theory_large_m(frames: Any, scale: str) -> Claim:
    """The same theory, by the large-M quadrature, at M ∈ {50, 500, N}, d ≥ min_dim."""
    tol = tolerances("facts-6")
    statement = (
        "Under Zipf (α = 2, N = 1000, random f*), the M − 1-competitor theory (the same model, "
        "by its large-M quadrature) gives the error of q = p at "
        f"infinite data within {tol['tolerance']} (+ 2 s.e.) for M = 50, 500 and N at every "
        f"d ≥ {tol['min_dim']}"
    )
    return theory_claim("facts-6", statement, _error_vs_theory(frames, True), tol)


def theory_claim(claim_id: str, statement: str, merged: pd.DataFrame, tol: dict[str, Any]) -> Claim:
    """A theory claim judged on ``merged`` (rows of dim, n_outputs, error, error_se, predicted):
    every point at d ≥ ``min_dim`` within the tolerance + 2 s.e.; not judged where one trial
    leaves the s.e. undefined."""
    merged = merged[merged["dim"] >= tol["min_dim"]]
    if merged.empty:
        return Claim(claim_id, statement, {}, None, tolerance="", note="no rows at those M")
    if merged["error_se"].isna().any():  # one trial: no s.e., so no tolerance to judge by
        return Claim(
            claim_id, statement, {"points": float(len(merged))}, None, tolerance="",
            note="one trial per point: its standard errors are undefined, so not judged",
        )  # fmt: skip
    gap = (merged["error"] - merged["predicted"]).abs()
    allowed = tol["tolerance"] + 2 * merged["error_se"]
    worst = int((gap - allowed).argmax())
    margins = [
        margin(g, -math.inf, a, s if s > 0 else 1e-12)
        for g, a, s in zip(gap, allowed, merged["error_se"], strict=True)
    ]
    return Claim(
        claim_id,
        statement,
        {
            "points": float(len(gap)),
            "largest_gap": float(gap.max()),
            "worst_M": float(merged["n_outputs"].iloc[worst]),
            "worst_dim": float(merged["dim"].iloc[worst]),
            "measured_there": float(merged["error"].iloc[worst]),
            "predicted_there": float(merged["predicted"].iloc[worst]),
        },
        bool((gap <= allowed).all()),
        tolerance=f"|measured − theory| ≤ {tol['tolerance']} + 2 s.e. at every point",
        margin_se=min(margins),
        margin_note="the worst point, in its s.e. over trials",
    )


def theory_curves(frame: pd.DataFrame, large_m: bool) -> pd.DataFrame:
    """The predicted error of q = p at infinite data at each (M, d) of the error-law frame's
    population rows at T = ∞, for their N, α and targets (predict.py at M = 5; the large-M
    quadrature at the others)."""
    chosen = [
        cfg for cfg in theory_configs(frame) if (cfg.n_outputs not in THEORY_OUTPUTS) == large_m
    ]
    return theory_frame(chosen, large_m=large_m)


def _error_vs_theory(frames: Any, large_m: bool) -> pd.DataFrame:
    curves = error_curves(frames.facts_errors)
    curves = curves[(curves["scheme"] == "population") & (curves["n_samples"] == math.inf)]
    return curves.merge(theory_curves(frames.facts_errors, large_m), on=["n_outputs", "dim"])


def table(ctx: Context) -> Table:
    """Per memory kind and d: N*, d²/(N* ln N*), the local slope from the kind's previous d, the
    theory's N at d, bits per parameter (trained, and counting E, U)."""
    summary = capacity_table(capacity_records(ctx.frames))
    rows = [
        [
            r["kind"],
            r["dim"],
            r["seeds"],
            f"{r['n_star']:g}",
            f"{r['constant']:.2f}",
            "—" if math.isnan(r["local_slope"]) else f"{r['local_slope']:.2f}",
            f"{r['theory_n']:.4g}",
            f"{r['bits_per_parameter']:.2f}±{2 * r['bits_per_parameter_se']:.2f}",
            f"{r['bits_per_parameter_with_embeddings']:.3f}",
        ]
        for _, r in summary.iterrows()
    ] + [[*row, ""] for row in earlier_rows(ctx.frames)]
    return Table(
        "Factual recall: capacity (top-1 ≥ 0.99, M = N, uniform facts) and bits per parameter",
        [
            "memory",
            "d",
            "seeds",
            "N* (median)",
            "d²/(N ln N)",
            "local slope",
            "theory N",
            "bits/param",
            "with E, U",
        ],
        rows,
        "Local slope: Δ ln N*/Δ ln d from the previous d (medians). Theory N: for a trained "
        "memory the sharp threshold of full recall, d² = 2·N ln N (computed by Giorlandino, "
        "Goldt and Maillard 2026 for a decoupled model of the linear memory; d²/(N ln N) = 2 "
        "there); for the outer product our extreme-value model at accuracy 0.99. Bits: the "
        "information of f* (log₂ N! for the permutation) less Fano's N·(h(ε) + ε·log₂(N − 1)) "
        "at N*, per trained parameter (d² linear and outer product, 2dh MLP with h = d/2; "
        "mean ± 2 s.e. over seeds) and with the fixed embeddings counted (+2Nd); trained "
        "language models store ≈ 2 bits per parameter by a loss-based measure after many "
        "exposures (Allen-Zhu and Li 2024)." + EARLIER_NOTE,
    )


def draw(ctx: Context) -> Figure:
    rows = capacity_records(ctx.frames)
    summary = capacity_table(rows)
    linear = summary[summary["kind"] == SIGN_ADAM_LINEAR].set_index("dim")["n_star"]
    errors = ctx.frames.facts_errors
    predicted = pd.concat(
        [theory_curves(errors, False), theory_curves(errors, True)], ignore_index=True
    )
    return facts_figure(
        summary,
        rows,
        capacity_theory(summary["dim"].unique(), linear if len(linear) else None),
        error_curves(ctx.frames.facts_errors),
        predicted,
        lambda cap, width: earlier_panels(cap, width, ctx.frames, letters=("f", "g")),
    )


FACTS = Experiment(
    name="beyond-facts",
    title="Beyond the paper: factual recall at M = N",
    caption="N facts with as many answers (M = N, f* a random permutation, uniform law). "
    "(a) The capacity N* at top-1 accuracy ≥ 0.99 of the outer-product memory and of trained "
    "linear and MLP memories (SGD, sign-Adam; medians over seeds, bars: their range); dashed "
    "black the sharp threshold of full recall d² = 2 N ln N (Giorlandino, Goldt and Maillard "
    "2026), dotted its finite-size form d² = 2N(ln N − ln ln N + c) with c fitted to the "
    "sign-Adam linear memory (our fit), dashed red our extreme-value model of the outer "
    "product; (b) d²/(N* ln N*) and (c) the local slopes Δ ln N*/Δ ln d between consecutive d, "
    "with the same lines; (d) bits per trained parameter at N* (the information of f* less "
    "Fano's term; mean ± 2 s.e.), the 2 bits per parameter of trained language models (a "
    "loss-based measure) beside it; (e) the error of q = p at infinite data under Zipf "
    "(α = 2, N = 1000) for growing M, with the M − 1-competitor theory (dashed; mean ± 2 s.e. "
    "over trials); (f) the edit capacity (ROME, C = I) of the threshold memory (medians, bars: "
    "quartiles) and (g) the error of H heads of width d/H over that of one memory of width d "
    "(the same scheme, largest H; 2 paired s.e.), at M = N against M = 5 under Zipf (α = 2; the "
    "editing and superposition studies' run kinds).",
    item="beyond",
    sweeps=sweeps,
    claims={
        "facts-1": claim_threshold,
        "facts-2": claim_advantage_trend,
        "facts-3": claim_bits,
        "facts-4": claim_slope,
        "facts-5": claim_error_theory,
        "facts-6": claim_error_theory_large_m,
        "facts-7": claim_edit_capacity,
        "facts-8": claim_equal_width,
    },
    draw=draw,
    table=table,
)

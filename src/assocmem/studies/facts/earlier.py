"""The earlier questions at M = N (docs: beyond/facts.md): the editing
study's edit capacity and the superposition study's equal-width comparison, closed form, with as
many answers as facts beside their M = 5 results (same N, d, Zipf law, embeddings' streams).

No science of those studies is copied or imported here (studies are independent): the shipped
specs ``facts-editing`` and ``facts-parallel`` name their run kinds, ``editing`` and
``superposition``, and this module reads the measured columns of their records. Both kinds
register when their study's experiment module loads;
:func:`~assocmem.studies.facts.earlier.earlier_kinds` checks they are there
(:func:`~assocmem.sweep.kinds.get_kind` loads every study's kinds first).

Both kinds take ``f*(x) = x mod M``: at M = N the identity. With i.i.d. output embeddings
(every permutation of the rows of U has the law of U) and edits' new targets uniform among the
others, every statistic has the law it has for a random permutation f*.
"""

import copy
import math
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.axes import Axes

from assocmem.analysis.edit_theory import predict_scheme_edits
from assocmem.experiments.experiment import RawSpec, shipped_sweep
from assocmem.experiments.measure import margin, median_se
from assocmem.experiments.tolerances import tolerances
from assocmem.figures.style import colors
from assocmem.ops.stats import mean_se
from assocmem.report import DETECTABLE_SE, Claim
from assocmem.studies.facts.figure import _dim_ticks
from assocmem.sweep.kinds import get_kind

SPECS = {"facts_editing": "facts-editing", "facts_parallel": "facts-parallel"}
KINDS = ("editing", "superposition")  # the run kinds the two specs name
QUICK_N = 500  # the quick scale's N (and M = N): N = 1000 costs ≈ 5 s per editing run at M = N
QUICK: dict[str, dict[str, Any]] = {
    "facts_editing": {"trials": 12, "max_dim": 128},
    "facts_parallel": {"trials": 16, "max_dim": 256},
}
THEORY_KEYS = ["memory", "alpha", "margin", "rise"]  # with N, M, d and the search: the theory's
METHOD = "rome"  # the edit capacity of ROME with C = I (the one with a theory; docs/beyond/editing)
WIDTH_LABELS = {"threshold:P=d/8": r"$q = 1\{x \leq d/8\}$", "population": "$q = p$"}


def earlier_kinds() -> None:
    """Raise a one-line ConfigError (``kind``) unless the ``editing`` and ``superposition`` run
    kinds are registered (their studies loaded): the specs of this module run them by name."""
    for name in KINDS:
        get_kind(name)


def earlier_sweeps(scale: str) -> dict[str, RawSpec]:
    """The two shipped specs at ``scale``: full as shipped; quick with N = M = 500, d cut and
    fewer trials (``QUICK``)."""
    earlier_kinds()
    out = {}
    for frame, spec in SPECS.items():
        raw = copy.deepcopy(shipped_sweep(spec))
        raw.pop("name", None)
        if scale == "quick":
            cut = QUICK[frame]
            raw["trials"] = cut["trials"]
            raw["base"]["n_inputs"] = QUICK_N
            raw["axes"]["n_outputs"] = [m for m in raw["axes"]["n_outputs"] if m < QUICK_N]
            raw["axes"]["n_outputs"].append(QUICK_N)
            if "max_edits" in raw["base"]:
                raw["base"]["max_edits"] = min(raw["base"]["max_edits"], QUICK_N)
            dims = "dim" if "dim" in raw["axes"] else "dims"
            table = raw["axes"] if dims == "dim" else raw["base"]
            table[dims] = [d for d in table[dims] if d <= cut["max_dim"]]
        out[frame] = raw
    return out


def _ok(frame: pd.DataFrame) -> pd.DataFrame:
    return frame[frame["status"] == "ok"] if "status" in frame else frame


def edit_capacities(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per editing run's searched ROME (C = I) edit sequence: ``n_inputs``,
    ``n_outputs``, ``dim``, ``trial``, ``capacity`` (edits until the other facts' error rose by
    ``rise``; capped at ``searched`` where it did not), ``reached``, ``base_error`` and the
    settings the theory needs (``THEORY_KEYS``)."""
    rows = _ok(frame)
    rows = rows[
        (rows["method"] == METHOD)
        & (rows["operation"] == "edit")
        & (rows["band"] == "all")
        & (rows["searched"] > 0)
    ].drop_duplicates("hash")
    columns = ["n_inputs", "n_outputs", "dim", "trial", "base_error", "searched", *THEORY_KEYS]
    out = rows[columns].copy()
    out["reached"] = rows["capacity"].notna().to_numpy()
    out["capacity"] = rows["capacity"].fillna(rows["searched"]).to_numpy(float)
    return out.reset_index(drop=True)


def capacity_summary(frame: pd.DataFrame) -> pd.DataFrame:
    """Per (N, M, d): the median edit capacity over trials (a capacity not reached counts as the
    search's length), its quartiles, the s.e. of its log
    (:func:`~assocmem.experiments.measure.median_se`), the share of trials that reached the rise,
    the mean error before the edits, the trials, and ``theory``: the interference theory's
    capacity at the runs' settings
    (:func:`~assocmem.analysis.edit_theory.predict_scheme_edits`; inf: not within the search).
    At M = N it runs the large-M quadrature (seconds a d)."""

    def one(part: pd.DataFrame) -> pd.Series:
        values = part["capacity"].to_numpy(float)
        q25, median, q75 = np.quantile(values, [0.25, 0.5, 0.75], method="inverted_cdf")
        return pd.Series(
            {
                "median": median, "q25": q25, "q75": q75,
                "log_se": median_se(np.maximum(values, 1.0), log=True),
                "reached": float(part["reached"].mean()), "searched": part["searched"].max(),
                "base_error": float(part["base_error"].mean()), "trials": float(len(values)),
            }
        )  # fmt: skip

    keys = ["n_inputs", "n_outputs", "dim"]
    caps = edit_capacities(frame)
    values = [c for c in caps.columns if c not in keys and c not in THEORY_KEYS]
    summary: pd.DataFrame = caps.groupby(keys)[values].apply(one).reset_index()
    settings = caps.groupby(keys)[THEORY_KEYS].first().reset_index()
    summary["theory"] = [
        predict_scheme_edits(
            str(r["memory"]), float(r["alpha"]), int(r["n_inputs"]), int(r["dim"]),
            int(r["n_outputs"]), margin=float(r["margin"]), ks=(1,), rise=float(r["rise"]),
            max_edits=int(searched),
        ).capacity
        for r, searched in zip(
            settings.to_dict("records"), summary["searched"].tolist(), strict=True
        )
    ]  # fmt: skip
    return summary


def width_gaps(frame: pd.DataFrame) -> pd.DataFrame:
    """Per (N, M, scheme, d, H ≥ 2) of the equal-width, same-scheme cells: the mean error of one
    memory of width d (``error_one``), of H heads of d/H (``error_heads``) and their paired
    difference over trials (``gap`` ± ``gap_se``), with the heads' width ``head_dim``."""
    rows = _ok(frame)
    rows = rows[(rows["budget"] == "width") & (rows["arrangement"] == "same")]
    out = []
    for key, part in rows.groupby(["n_inputs", "n_outputs", "scheme", "dim"]):
        errors = part.pivot_table(index="trial", columns="heads", values="error")  # (trials, H)
        head_dims = part.groupby("heads")["head_dim"].first()
        for heads in [h for h in errors.columns if int(h) > 1]:
            gap, se = mean_se((errors[heads] - errors[1]).to_numpy())
            out.append(
                dict(zip(["n_inputs", "n_outputs", "scheme", "dim"], key, strict=True))
                | {"heads": int(heads), "head_dim": int(head_dims[heads]),
                   "error_one": float(errors[1].mean()), "error_heads": float(errors[heads].mean()),
                   "gap": gap, "gap_se": se, "trials": float(errors[heads].notna().sum())}
            )  # fmt: skip
    return pd.DataFrame(out)


def _largest_m(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows at M = N (the largest M of each N)."""
    return frame[frame["n_outputs"] == frame["n_inputs"]]


def claim_edit_capacity(frames: Any, scale: str) -> Claim:
    """The edit capacity at M = N is at least ``min_ratio`` × the one at M = 5, at every d ≥
    ``min_dim`` (medians over trials; capped at the search's length, which can only lower the
    ratio)."""
    tol = tolerances("facts-7")
    statement = (
        f"With as many answers as facts (M = N, Zipf α = 2), the threshold memory absorbs at "
        f"least {tol['min_ratio']}× as many ROME edits (C = I) before the other facts' error "
        f"rises by 10 % as at M = 5 (same N, d, embeddings), at every d ≥ {tol['min_dim']}: "
        "each edit adds interference to one class of M"
    )
    table = capacity_summary(frames.facts_editing)
    table = table[table["dim"] >= tol["min_dim"]]
    many, five = _largest_m(table).set_index("dim"), table[table["n_outputs"] == 5].set_index("dim")
    dims = many.index.intersection(five.index)
    if dims.empty:
        return Claim("facts-7", statement, {}, None, tolerance="", note="no d with both M")
    ratio = many.loc[dims, "median"] / five.loc[dims, "median"]
    log_se = np.hypot(many.loc[dims, "log_se"], five.loc[dims, "log_se"]).clip(lower=1e-12)
    margins = [
        margin(math.log(r), math.log(tol["min_ratio"]), math.inf, s)
        for r, s in zip(ratio, log_se, strict=True)
    ]
    worst = int(np.argmin(margins))
    return Claim(
        "facts-7",
        statement,
        {"smallest_ratio": float(ratio.iloc[worst]), "at_dim": float(dims[worst]),
         "capacity_M_N": float(many.loc[dims[worst], "median"]),
         "capacity_M_5": float(five.loc[dims[worst], "median"]), "dims": float(len(dims))},
        bool((ratio >= tol["min_ratio"]).all()),
        tolerance=f"ratio of medians ≥ {tol['min_ratio']} at every d ≥ {tol['min_dim']}",
        margin_se=min(margins),
        margin_note="the worst d, in s.e. of the log ratio (order-statistic s.e. of each median)",
        detectable=float(DETECTABLE_SE * log_se.max()),
    )  # fmt: skip


def claim_equal_width(frames: Any, scale: str) -> Claim:
    """At M = N, H heads of d/H with the same scheme have the error of one memory of d, within
    ``relative`` · E₁ + 2 s.e. (paired) where d ≥ ``min_dim`` and d/H ≥ ``min_head_dim``."""
    tol = tolerances("facts-8")
    statement = (
        "With as many answers as facts (M = N, Zipf α = 2), H closed-form heads of width d/H "
        "storing the same scheme (scores summed) have the error of one memory of width d, as "
        f"at M = 5: for both schemes, every H, d ≥ {tol['min_dim']} and d/H ≥ "
        f"{tol['min_head_dim']}"
    )
    gaps = _largest_m(width_gaps(frames.facts_parallel))
    gaps = gaps[(gaps["dim"] >= tol["min_dim"]) & (gaps["head_dim"] >= tol["min_head_dim"])]
    if gaps.empty:
        return Claim("facts-8", statement, {}, None, tolerance="", note="no cell")
    allowed = tol["relative"] * gaps["error_one"] + 2 * gaps["gap_se"]
    se = gaps["gap_se"].clip(lower=1e-12)
    margins = [
        margin(abs(g), -math.inf, a, s) for g, a, s in zip(gaps["gap"], allowed, se, strict=True)
    ]
    worst = gaps.iloc[int(np.argmin(margins))]
    relative = gaps["gap"].abs() / gaps["error_one"]
    return Claim(
        "facts-8",
        statement,
        {"cells": float(len(gaps)), "cells_within": float((gaps["gap"].abs() <= allowed).sum()),
         "largest_relative_gap": float(relative.max()), "worst_dim": float(worst["dim"]),
         "worst_heads": float(worst["heads"])},
        bool((gaps["gap"].abs() <= allowed).all()),
        tolerance=f"|E_H − E_1| ≤ {tol['relative']}·E_1 + 2 s.e. in every cell",
        note=f"worst cell: {worst['scheme']}, d = {worst['dim']}, H = {worst['heads']}",
        margin_se=min(margins),
        margin_note="the worst cell, in its paired s.e. over trials",
        detectable=float(DETECTABLE_SE * (se / gaps["error_one"]).max()),
    )  # fmt: skip


def _outputs(m: Any, n: Any) -> str:
    """M as shown: ``N`` where M = N."""
    return "N" if m == n else f"{m:g}"


def earlier_rows(frames: Any) -> list[list[Any]]:
    """Rows for the facts table (its eight columns): per d, the median edit capacity at M = 5
    and M = N; per scheme and d, E₁ and the largest |E_H/E₁ − 1| at M = 5 and M = N."""
    rows: list[list[Any]] = []
    caps = capacity_summary(frames.facts_editing)
    for dim in sorted(int(d) for d in caps["dim"].unique()):
        part = caps[caps["dim"] == dim].sort_values("n_outputs")
        shown = " | ".join(_capacity_text(r) for _, r in part.iterrows())
        shown += " (theory " + " | ".join(_theory_text(r) for _, r in part.iterrows()) + ")"
        sizes = " | ".join(_outputs(r["n_outputs"], r["n_inputs"]) for _, r in part.iterrows())
        label = f"edit capacity (ROME, C = I), M = {sizes}"
        rows.append([label, dim, int(part["trials"].min()), shown, "", "", "", ""])
    gaps = width_gaps(frames.facts_parallel)
    cells = {(str(s), int(d)) for s, d in zip(gaps["scheme"], gaps["dim"], strict=True)}
    for scheme, dim in sorted(cells):
        part = gaps[(gaps["scheme"] == scheme) & (gaps["dim"] == dim)]
        texts: list[str] = []
        outputs: list[str] = []
        for (m, n), cell in part.groupby(["n_outputs", "n_inputs"]):
            worst = (cell["gap"].abs() / cell["error_one"]).max()
            texts.append(f"E₁ {cell['error_one'].iloc[0]:.3g}, ±{worst:.0%}")
            outputs.append(_outputs(m, n))
        label = f"H heads of d/H vs one of d ({scheme}), M = {' | '.join(outputs)}"
        rows.append([label, dim, int(part["trials"].min()), " | ".join(texts), "", "", "", ""])
    return rows


def _capacity_text(row: pd.Series) -> str:
    """A median capacity, with ``>`` where fewer than half of the trials reached the rise."""
    return f"{'>' if row['reached'] < 0.5 else ''}{row['median']:g}"


def _theory_text(row: pd.Series) -> str:
    """The predicted capacity, ``> searched`` where the theory's error does not rise within it."""
    return f"{row['theory']:g}" if math.isfinite(row["theory"]) else f">{row['searched']:g}"


EARLIER_NOTE = (
    " Earlier questions at M = N (Zipf α = 2, closed form): the median number of ROME edits "
    "(C = I) of the threshold memory until the other facts' error rises by 10 % (> : not reached "
    "in the search of N − 1 edits; in brackets the interference theory's), and for H heads of "
    "d/H (the same scheme, scores summed) the error E₁ of one memory of d with the largest "
    "relative change over H, at M = 5 | M = N."
)
STYLE: dict[str, Any] = {"marker": "o", "ms": 3, "lw": 1.2, "capsize": 2}


def earlier_panels(
    cap: Axes, width: Axes, frames: Any, letters: tuple[str, str] = ("d", "e")
) -> None:
    """(d) the median edit capacity against d at M = 5 and M = N (bars: quartiles; dashed: the
    interference theory, where it is reached; dotted: the N − 1 edits searched); (e) E_H/E₁
    of H heads of d/H against d at M = 5 and M = N, for the
    largest H (both schemes; bars: 2 paired s.e.); ``letters`` name the two panels."""
    caps = capacity_summary(frames.facts_editing)
    groups = list(caps.groupby(["n_outputs", "n_inputs"]))
    for ((m, n), part), color in zip(groups, colors(len(groups)), strict=True):
        part = part.sort_values("dim")
        bars = [part["median"] - part["q25"], part["q75"] - part["median"]]
        label = f"$M = {_outputs(m, n)}$"
        cap.errorbar(part["dim"], part["median"], yerr=bars, color=color, label=label, **STYLE)
        theory = part["theory"].where(np.isfinite(part["theory"]))
        cap.plot(part["dim"], theory, color=color, ls="--", lw=1, label=f"{label}: theory")
    cap.axhline(float(caps["searched"].max()), color="k", ls=":", lw=1, label="edits searched")
    cap.set(xscale="log", yscale="log", xlabel="$d$", ylabel="edits to +10 % error")
    cap.set_title(f"({letters[0]}) edit capacity, ROME $C = I$", fontsize=9)
    _dim_ticks(cap, sorted(int(d) for d in caps["dim"].unique()))
    gaps = width_gaps(frames.facts_parallel)
    heads = int(gaps["heads"].max())
    cells = list(gaps[gaps["heads"] == heads].groupby(["n_outputs", "n_inputs", "scheme"]))
    for ((m, n, scheme), part), color in zip(cells, colors(len(cells)), strict=True):
        part = part.sort_values("dim")
        ratio = part["error_heads"] / part["error_one"]
        band = 2 * part["gap_se"] / part["error_one"]
        label = f"$M = {_outputs(m, n)}$, {WIDTH_LABELS.get(str(scheme), str(scheme))}"
        width.errorbar(part["dim"], ratio, yerr=band, color=color, label=label, **STYLE)
    width.axhline(1.0, color="k", ls=":", lw=1, label="one memory of width $d$")
    width.set(xscale="log", xlabel="$d$", ylabel=f"error ratio $E_{{{heads}}} / E_1$")
    width.set_title(f"({letters[1]}) {heads} heads of width $d/{heads}$", fontsize=9)
    _dim_ticks(width, sorted(int(d) for d in gaps["dim"].unique()))

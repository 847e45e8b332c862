"""The in-context records summarised: error curves per memory, capacities per d, and the
hard-attention theory beside them (docs: beyond/incontext.md).

A *memory* is a rule with its parameters, labelled as the figure and the tables show it
(:func:`memory_label`). The records' rows are those of :class:`~assocmem.studies.incontext.kind.
InContextKind`: one per (run, d, T), a run being one trial of R contexts.
"""

import math

import numpy as np
import pandas as pd

from assocmem.laws.tokens import zipf_probabilities
from assocmem.studies.incontext.runs import make_rule
from assocmem.studies.incontext.theory import capacity_theory, error_theory

MEMORY = ["rule", "beta", "passes", "gate"]


def memory_label(rule: str, beta: float, passes: int, gate: float) -> str:
    """``"delta β=1 ×4"``, ``"softmax β=1"``, ``"hebbian γ=0.95"``: a rule and the parameters
    it takes (passes above 1, a gate below 1)."""
    parts = [rule]
    if hasattr(make_rule(rule), "beta"):
        parts.append(f"β={beta:g}")
    if passes > 1:
        parts.append(f"×{passes}")
    if gate < 1:
        parts.append(f"γ={gate:g}")
    return " ".join(parts)


def _ok(frame: pd.DataFrame) -> pd.DataFrame:
    rows = frame[frame["status"] == "ok"].copy()
    for name in ("predicted", "predicted_sd", "error_sd"):  # absent where no run has one
        if name not in rows:
            rows[name] = math.nan
    rows["memory"] = [
        memory_label(r, float(b), int(p), float(g))
        for r, b, p, g in rows[MEMORY].itertuples(index=False, name=None)
    ]
    return rows


def curves(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per (memory, α, d, T): the mean recall error over every context of every trial
    (``error``), its s.e. (``se``, from the spread over contexts), the theory's error
    (``predicted``: the Hebbian theory's mean over the contexts it was evaluated on, with its s.e.
    ``predicted_se``; hard attention's extreme-value prediction, exact), and the
    memory's state size (numbers held: d² for a linear state, T·d for a key cache)."""
    rows = _ok(frame).dropna(subset=["n_pairs"])
    out = []
    for key, g in rows.groupby(["memory", "alpha", "dim", "n_pairs"], sort=True):
        contexts = int(g["contexts"].iloc[0]) * len(g)
        theory = int(g["theory_contexts"].iloc[0]) * len(g)
        se = math.sqrt(float((g["error_sd"] ** 2).mean()) / contexts) if contexts > 1 else math.nan
        pred = float(g["predicted"].mean())
        pred_var = float((g["predicted_sd"] ** 2).mean()) if g["predicted_sd"].notna().any() else 0
        pred_se = math.sqrt(pred_var / theory) if theory > 0 and not math.isnan(pred) else math.nan
        rule = make_rule(*(g[name].iloc[0] for name in MEMORY))
        t, dim = float(g["n_pairs"].iloc[0]), int(g["dim"].iloc[0])
        size = rule.state_size(t, dim)
        if math.isnan(pred):  # a theory that needs no context (hard attention)
            probs = zipf_probabilities(int(g["n_keys"].iloc[0]), float(g["alpha"].iloc[0]))
            pred = error_theory(rule, probs.numpy(), int(g["n_values"].iloc[0]), dim, t)
        out.append([*key, float(g["error"].mean()), se, pred, pred_se, size, len(g)])
    columns = ["memory", "alpha", "dim", "n_pairs", "error", "se", "predicted", "predicted_se"]
    return pd.DataFrame(out, columns=[*columns, "state_size", "trials"])


def capacities(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per (memory, α, d): the capacity T*(d) over trials (``mean``, ``se``,
    ``log_mean`` and ``log_se`` of log(1 + T*)), whether a trial reached the search's ceiling
    (``capped``), the state's size (d² numbers for the linear states, T*·d for softmax
    attention's cache: ``state_size``) and the hard-attention theory's T* (``theory``, softmax
    at β = ∞ only)."""
    rows = _ok(frame).drop_duplicates(subset=["hash", "dim"])  # one row per (run, d)
    out = []
    for key, g in rows.groupby(["memory", "alpha", "dim"], sort=True):
        found = g["capacity"].to_numpy(float)
        logs = np.log1p(found)
        n = len(found)
        se = float(found.std(ddof=1) / math.sqrt(n)) if n > 1 else math.nan
        log_se = float(logs.std(ddof=1) / math.sqrt(n)) if n > 1 else math.nan
        first = g.iloc[0]
        dim = int(first["dim"])
        rule = make_rule(*(first[name] for name in MEMORY))
        probs = zipf_probabilities(int(first["n_keys"]), float(first["alpha"])).numpy()
        theory = capacity_theory(
            rule, probs, int(first["n_values"]), dim, float(first["tau"]),
            float(first["max_pairs"]),
        )  # fmt: skip
        mean = float(found.mean())
        size = rule.state_size(mean, dim)
        capped = bool((found >= int(first["max_pairs"])).any())
        out.append([*key, mean, se, float(logs.mean()), log_se, capped, size, theory, n])
    columns = ["memory", "alpha", "dim", "mean", "se", "log_mean", "log_se", "capped"]
    return pd.DataFrame(out, columns=[*columns, "state_size", "theory", "trials"])


def paired_log_ratio(frame: pd.DataFrame, better: str, worse: str, alpha: float) -> pd.DataFrame:
    """Per d: the mean over trials of log((1 + T*_better) / (1 + T*_worse)) and its s.e.; the
    two memories read the same contexts in each trial (same seed and trial index), so the
    difference is paired."""
    rows = _ok(frame).drop_duplicates(subset=["hash", "dim"])
    rows = rows[rows["alpha"] == alpha]
    wide = rows.pivot_table(index=["dim", "trial"], columns="memory", values="capacity")
    if better not in wide or worse not in wide:
        return pd.DataFrame(columns=["dim", "log_ratio", "se", "trials"])
    diff = (np.log1p(wide[better]) - np.log1p(wide[worse])).dropna()
    out = []
    for dim, g in diff.groupby(level="dim"):
        n = len(g)
        se = float(g.std(ddof=1) / math.sqrt(n)) if n > 1 else math.nan
        out.append([int(dim), float(g.mean()), se, n])
    return pd.DataFrame(out, columns=["dim", "log_ratio", "se", "trials"])


def local_slopes(table: pd.DataFrame, column: str = "mean") -> pd.DataFrame:
    """Per memory and α: the slope of log T* against log d between consecutive d (T* > 0)."""
    out = []
    for (memory, alpha), g in table.groupby(["memory", "alpha"], sort=True):
        g = g[g[column] > 0].sort_values("dim")
        d, t = g["dim"].to_numpy(float), g[column].to_numpy(float)
        for i in range(len(d) - 1):
            slope = math.log(t[i + 1] / t[i]) / math.log(d[i + 1] / d[i])
            out.append([memory, alpha, int(d[i]), int(d[i + 1]), slope])
    return pd.DataFrame(out, columns=["memory", "alpha", "d_low", "d_high", "slope"])


__all__ = ["capacities", "curves", "local_slopes", "memory_label", "paired_log_ratio"]

"""The factual-recall study's numbers from its stored rows: capacity per memory kind and d, its
local slopes and the theory beside it (:mod:`assocmem.studies.facts.theory`), bits per parameter
derived from each record's N*, accuracy and d, and the error law against M with the theory of
:mod:`assocmem.analysis.predict`."""

import functools
import math
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from assocmem import rng
from assocmem.analysis.large_m import predict_errors_large_m
from assocmem.analysis.predict import embedding_law, predict_config
from assocmem.closed_form.config import ClosedFormConfig
from assocmem.laws.tokens import random_targets, zipf_probabilities
from assocmem.ops.stats import mean_se
from assocmem.studies.facts import theory

KIND_NAMES = {
    ("closed_form", "none"): "outer product (closed form)",
    ("linear", "adam"): "linear, sign-Adam",
    ("linear", "sgd"): "linear, SGD",
    ("mlp", "adam"): "MLP, sign-Adam",
    ("mlp", "sgd"): "MLP, SGD",
}
OUTER = KIND_NAMES[("closed_form", "none")]  # the untrained memory every trained one is set against
SIGN_ADAM_LINEAR = KIND_NAMES[("linear", "adam")]


def capacity_rows(*frames: pd.DataFrame) -> pd.DataFrame:
    """The capacity searches of every frame, one row each, with a ``kind`` label (the bits as
    the run kind reads them: derived from each record's N*, accuracy and d)."""
    rows = pd.concat([f for f in frames if len(f)], ignore_index=True)
    rows = rows[rows["status"] == "ok"].copy()
    rows["kind"] = [
        KIND_NAMES[(m, o)] for m, o in zip(rows["memory"], rows["optimizer"], strict=True)
    ]
    return rows


def capacity_table(rows: pd.DataFrame) -> pd.DataFrame:
    """Per (kind, d): median N* over seeds, d²/(N* ln N*), the local slope Δ ln N*/Δ ln d from
    the kind's previous d (medians; NaN at its first), the theory's N at d (the sharp threshold
    d² = 2N ln N for a trained memory, the extreme-value model for the outer product), bits per
    trained parameter (mean ± s.e. over seeds) and with the embeddings counted."""
    out = []
    for (kind, dim_key), part in rows.groupby(["kind", "dim"], sort=True):
        dim = int(dim_key)  # type: ignore[call-overload]
        n = part["n_star"].to_numpy(float)
        bits, bits_se = mean_se(part["bits_per_parameter"])
        out.append(
            {
                "kind": kind,
                "dim": int(dim),
                "seeds": len(n),
                "n_star": float(np.median(n)),
                "constant": float(np.median(dim**2 / (n * np.log(n)))),
                "theory_n": theory_capacity(str(kind), dim),
                "bits_per_parameter": bits,
                "bits_per_parameter_se": bits_se,
                "bits_per_parameter_with_embeddings": float(
                    part["bits_per_parameter_with_embeddings"].mean()
                ),
            }
        )
    table = pd.DataFrame(out)
    table["local_slope"] = math.nan  # from the kind's previous d, drawn at their geometric mean
    table["slope_at"] = math.nan
    for _, part in table.groupby("kind"):
        slopes = theory.local_slopes(part["dim"], part["n_star"])
        table.loc[part.index[1:], "local_slope"] = slopes
        dims = part["dim"].to_numpy(float)
        table.loc[part.index[1:], "slope_at"] = np.sqrt(dims[1:] * dims[:-1])
    return table


def theory_capacity(kind: str, dim: int, tau: float = 0.99) -> float:
    """The theory's N at d for ``kind``: the outer product's extreme-value N*(d) at τ, or the
    sharp threshold of the linear memory (d² = 2N ln N, full recall) for a trained kind."""
    if kind == OUTER:
        return _outer_capacity(dim, tau)
    return theory.sharp_threshold(dim)


@functools.cache
def _outer_capacity(dim: int, tau: float) -> float:
    return theory.outer_product_capacity(dim, tau)


def capacity_theory(dims: Any, n_star_linear: pd.Series | None, tau: float = 0.99) -> pd.DataFrame:
    """The theory lines from the smallest to the largest of ``dims``, two points an octave: N of
    the sharp threshold (``sharp``), of the finite-size form with c fitted to the sign-Adam
    linear memory's medians (``finite_size``; ``n_star_linear`` indexed by d, N* ≥ 16; NaN
    without them) and of the outer product's extreme-value model at τ (``outer``); each with
    its d²/(N ln N) (``*_constant``) and local slope d ln N / d ln d (``*_slope``), and the
    fitted ``c``."""
    low, high = float(min(dims)), float(max(dims))
    grid = sorted(
        {int(round(d)) for d in np.geomspace(low, high, 1 + round(2 * np.log2(high / low)))}
    )
    c = math.nan
    if n_star_linear is not None:
        fit = n_star_linear[n_star_linear >= 16]
        if len(fit):
            c = theory.fit_finite_size_constant(list(fit.index), list(fit.to_numpy(float)))
    lines = {
        "sharp": [theory.sharp_threshold(d) for d in grid],
        "finite_size": [
            theory.finite_size_capacity(d, c) if math.isfinite(c) else math.nan for d in grid
        ],  # fmt: skip
        "outer": [_outer_capacity(d, tau) for d in grid],
    }
    frame = pd.DataFrame({"dim": grid, **lines, "c": c})
    dims = np.asarray(grid, float)
    for name, values in lines.items():
        logs = np.log(np.asarray(values, float))
        frame[f"{name}_constant"] = dims**2 / (np.asarray(values, float) * logs)
        frame[f"{name}_slope"] = np.gradient(logs, np.log(dims)) if len(grid) > 1 else math.nan
    return frame


def error_curves(frame: pd.DataFrame) -> pd.DataFrame:
    """Mean error ± s.e. over trials per (M, scheme, T, d) of the error-law sweep."""
    ok = frame[frame["status"] == "ok"]
    keys = ["n_outputs", "scheme", "n_samples", "dim"]
    stats = ok.groupby(keys)["error"].agg(["mean", "sem", "count"]).reset_index()
    return stats.rename(columns={"mean": "error", "sem": "error_se", "count": "trials"})


def predicted_errors(cfg: ClosedFormConfig, n_draws: int = 2) -> pd.DataFrame:
    """predict.py's error of q = p at infinite data for one point of the error-law sweep."""
    base = replace(cfg, schemes=("population",), n_samples=(None,))
    rows = predict_config(base, n_draws=n_draws)
    return pd.DataFrame(
        [{"n_outputs": cfg.n_outputs, "dim": r["dim"], "predicted": r["predicted"]} for r in rows]
    )


def predicted_errors_large_m(cfg: ClosedFormConfig, n_draws: int = 2) -> pd.DataFrame:
    """The same prediction by the large-M quadrature (:mod:`assocmem.analysis.large_m`),
    averaged over the random targets of the first ``n_draws`` trials (the engine's streams)."""
    probs = zipf_probabilities(cfg.n_inputs, cfg.alpha).numpy()
    dims = sorted(set(cfg.dims))
    total = np.zeros(len(dims))
    for trial in range(n_draws):
        gen = rng.generator(cfg.seed, "targets", trial)
        targets = random_targets(cfg.n_inputs, cfg.n_outputs, gen).numpy()
        total += predict_errors_large_m(
            probs, targets, probs, dims, cfg.n_outputs, embedding_law(cfg)
        )
    return pd.DataFrame(
        {"n_outputs": cfg.n_outputs, "dim": dims, "predicted": total / n_draws, "method": "large-M"}
    )


# What the theory of q = p at infinite data reads from a stored run (the rest is the spec's law)
THEORY_FIELDS = (
    "n_inputs", "n_outputs", "alpha", "target", "seed", "embedding", "output_embedding", "nested",
)  # fmt: skip


def theory_configs(frame: pd.DataFrame) -> list[ClosedFormConfig]:
    """One configuration per M of the error-law frame's population rows at T = ∞ (status ok):
    the stored N, α, targets' seed, embeddings and nested-d convention, at the d those rows hold
    (so the theory is predicted where, and as, the runs were made).

    Raises
    ------
    ValueError
        If the rows of one M come from two configurations (one theory curve per M is drawn).
    """
    rows = frame[
        (frame["status"] == "ok")
        & (frame["scheme"] == "population")
        & (frame["n_samples"] == np.inf)
    ]
    configs = []
    for key, part in rows.groupby(list(THEORY_FIELDS), sort=True):
        values = (v.item() if isinstance(v, np.generic) else v for v in key)  # numpy → Python
        fields: dict[str, Any] = dict(zip(THEORY_FIELDS, values, strict=True))
        dims = tuple(sorted(int(d) for d in part["dim"].unique()))
        configs.append(
            ClosedFormConfig(**fields, schemes=("population",), dims=dims, n_samples=(None,))
        )
    outputs = [cfg.n_outputs for cfg in configs]
    if len(set(outputs)) < len(outputs):
        raise ValueError(f"the error-law rows mix configurations at one M: {configs}")
    return configs


def theory_frame(configs: list[ClosedFormConfig], large_m: bool = False) -> pd.DataFrame:
    """The predictions of each configuration (:func:`theory_configs`), columns ``n_outputs``,
    ``dim``, ``predicted``: predict.py's quadrature, or the large-M one. Each is computed once a
    process (cached on the configuration, which holds all it depends on)."""
    parts = [_predicted(cfg, large_m) for cfg in configs]
    if not parts:
        return pd.DataFrame(columns=["n_outputs", "dim", "predicted"])
    return pd.concat(parts, ignore_index=True)


@functools.cache
def _predicted(cfg: ClosedFormConfig, large_m: bool) -> pd.DataFrame:
    return (predicted_errors_large_m if large_m else predicted_errors)(cfg)

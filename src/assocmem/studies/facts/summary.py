"""The factual-recall study's numbers from its stored rows: capacity per memory kind and d,
the exponent of N* ∝ d^β with its bootstrap interval, bits per parameter, and the error law
against M with the theory of :mod:`assocmem.analysis.predict`."""

from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from assocmem import rng
from assocmem.analysis.predict import embedding_law, predict_config
from assocmem.closed_form.config import ClosedFormConfig
from assocmem.laws.tokens import random_targets, zipf_probabilities
from assocmem.ops.stats import mean_se
from assocmem.studies.facts.capacity import capacity_exponent
from assocmem.studies.facts.theory import predict_errors_large_m

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
    """The capacity searches of every frame, one row each, with a ``kind`` label."""
    rows = pd.concat([f for f in frames if len(f)], ignore_index=True)
    rows = rows[rows["status"] == "ok"].copy()
    rows["kind"] = [
        KIND_NAMES[(m, o)] for m, o in zip(rows["memory"], rows["optimizer"], strict=True)
    ]
    return rows


def capacity_table(rows: pd.DataFrame) -> pd.DataFrame:
    """Per (kind, d): median N* over seeds, d²/(N* ln N*), bits per trained parameter (mean ± s.e.
    over seeds) and with the embeddings counted."""
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
                "bits_per_parameter": bits,
                "bits_per_parameter_se": bits_se,
                "bits_per_parameter_with_embeddings": float(
                    part["bits_per_parameter_with_embeddings"].mean()
                ),
            }
        )
    return pd.DataFrame(out)


def exponents(rows: pd.DataFrame) -> dict[str, dict[str, float]]:
    """β of N* ∝ d^β per kind (≥ 2 dims), with the seeds as the bootstrap's trials."""
    found = {}
    for kind, part in rows.groupby("kind"):
        wide = part.pivot_table(index="seed", columns="dim", values="n_star").dropna()
        if wide.shape[1] >= 2 and wide.shape[0] >= 2:
            dims = [int(d) for d in wide.columns]
            found[str(kind)] = capacity_exponent(dims, wide.to_numpy(float))
    return found


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
    """The same prediction by the large-M quadrature (:mod:`assocmem.studies.facts.theory`),
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


def theory_frame(
    points: list[Any], outputs: tuple[int, ...], large_m: bool = False
) -> pd.DataFrame:
    """The predictions at each M of ``outputs`` (the error-law sweep's points): predict.py's
    quadrature, or the large-M one."""
    chosen = {cfg.n_outputs: cfg for cfg in points if cfg.n_outputs in outputs}
    predict = predicted_errors_large_m if large_m else predicted_errors
    parts = [predict(cfg) for _, cfg in sorted(chosen.items())]
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()

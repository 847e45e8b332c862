"""The factual-recall study's numbers from its stored rows: capacity per memory kind and d,
the exponent of N* ∝ d^β with its bootstrap interval, bits per parameter, and the error law
against M with the theory of :mod:`assocmem.analysis.predict`."""

import functools
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
from assocmem.studies.facts.capacity import capacity_exponent

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

"""Beyond the paper (issue 7): trained memories under label noise, on a real word law against
Zipf, and the capacity frontiers of Hebbian and trained memories."""

import functools
from collections.abc import Sequence
from typing import Any

import pandas as pd
from matplotlib.figure import Figure

from assocmem.analysis.capacity import FrontierPoint, fit_frontier
from assocmem.config.errors import ConfigError
from assocmem.experiments.experiment import Context, Experiment, RawSpec, training_sweep
from assocmem.experiments.findings import LRS
from assocmem.figures.beyond import capacity_figure, frontier_frame, laws_figure, noise_figure
from assocmem.laws.words import word_distribution
from assocmem.report import Table

# Trained memories: sign-like Adam, B = 256, T = 10240.
BASE = {"optimizer": "adam", "batch_size": 256, "n_samples": 10240}
LRS_BY_SCALE = {"quick": [1.0, 10.0], "full": LRS}
LANGUAGE = "en"  # real word law of the laws panel, against Zipf at its fitted α̂
# Capacity frontiers: (memory, M or None for M = N) → dims, trials, repeats per scale.
CAPACITY = {
    "quick": {"dims": [16, 32, 64], "hebbian": (3, 3), "trained": (1, 2)},
    "full": {"dims": [16, 32, 64, 128], "hebbian": (5, 5), "trained": (2, 3)},
}
OUTPUTS = ["N", 5]  # each input its own output (M = N), and M = 5


def noise_sweeps(scale: str) -> dict[str, RawSpec]:
    """Label noise ε ∈ {0, 0.1, 0.3} at N = 100."""
    axes = {"label_noise": [0.0, 0.1, 0.3], "lr": LRS_BY_SCALE[scale]}
    return {"noise": training_sweep({"base": BASE, "axes": axes}, scale)}


@functools.cache
def zipf_fit(language: str) -> float:
    """The KL-fitted Zipf exponent α̂ of a real word law (N = 1000)."""
    try:
        return word_distribution(language, 1000).alpha_kl
    except ConfigError as error:  # wordfreq is an optional extra
        raise ConfigError("only", f"beyond needs real word laws: {error}") from None


def laws_sweeps(scale: str) -> dict[str, RawSpec]:
    """The word law of :data:`LANGUAGE` against Zipf at its KL-fitted α̂ (N = 1000)."""
    laws, axes = {**BASE, "n_inputs": 1000}, {"lr": LRS_BY_SCALE[scale]}
    zipf = {**laws, "alpha": round(zipf_fit(LANGUAGE), 6)}
    return {
        "laws_words": training_sweep({"base": {**laws, "words": LANGUAGE}, "axes": axes}, scale),
        "laws_zipf": training_sweep({"base": zipf, "axes": axes}, scale),
    }


def capacity_sweeps(scale: str) -> dict[str, RawSpec]:
    """One capacity run (a frontier search over the dims) per memory and M, in the store."""
    plan = CAPACITY[scale]
    memories = ("hebbian", "trained")
    return {
        "capacity": {
            "kind": "capacity",
            "base": {"dims": plan["dims"]},
            "axes": {"n_outputs": OUTPUTS},
            "zip": {
                "memory": list(memories),
                "trials": [plan[memory][0] for memory in memories],
                "repeats": [plan[memory][1] for memory in memories],
            },
        }
    }


def capacity_payloads(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """The stored capacity searches (:meth:`CapacityKind.rows` frame) as ``assocmem capacity``
    JSON payloads: Hebbian then trained, M = N then M = 5, points in increasing d."""
    payloads = []
    for memory in ("hebbian", "trained"):
        for outputs in OUTPUTS:
            rows = frame[(frame["memory"] == memory) & (frame["n_outputs"] == outputs)]
            if rows.empty or (rows["status"] != "ok").any():
                raise ConfigError("capacity", f"no stored {memory} search with M = {outputs}")
            found: dict[int, list[int]] = {}
            ordered = rows.sort_values(["dim", "repeat"])
            for dim, n_star in zip(ordered["dim"], ordered["n_star"], strict=True):
                found.setdefault(int(dim), []).append(int(n_star))
            first = rows.iloc[0]
            settings = {
                "n_outputs": None if outputs == "N" else outputs,
                "trials": int(first["trials"]),
                "repeats": int(first["repeats"]),
            }
            points = [{"dim": dim, "n_star": n_star} for dim, n_star in sorted(found.items())]
            payloads.append({"memory": memory, "settings": settings, "points": points})
    return payloads


def _capacity_row(payload: dict[str, Any]) -> list[str]:
    points = [FrontierPoint(p["dim"], tuple(p["n_star"])) for p in payload["points"]]
    fit, last = fit_frontier(points), len(points) - 1
    m = payload["settings"]["n_outputs"]
    low, high = fit.constant_ci[last] if m is None else fit.d_over_n_ci[last]
    value = fit.constant[last] if m is None else fit.d_over_n[last]
    return [
        payload["memory"],
        "N" if m is None else str(m),
        f"{fit.dims[last]}",
        f"{fit.n_star[last]:g}",
        ("d²/(N log N) = " if m is None else "d/N = ") + f"{value:.3g}",
        f"[{low:.3g}, {high:.3g}]",
        f"{fit.exponent:.2f} [{fit.exponent_ci[0]:.2f}, {fit.exponent_ci[1]:.2f}]",
    ]


def capacity_table(payloads: Sequence[dict[str, Any]]) -> Table:
    """Measured frontier constants at the largest d, with 95 % intervals over repeats."""
    return Table(
        "Capacity frontier: the largest N stored with top-1 accuracy ≥ 0.99",
        ["memory", "M", "largest d", "N* (median)", "constant", "95% CI", "N* ∝ d^k: k"],
        [_capacity_row(payload) for payload in payloads],
        "References for M = N: trained linear memories reach d² ≈ 1.3·N·log N (Nichani, Lee, "
        "Bietti 2025); the sharp threshold is conjectured at d² ≈ 2·N·log N (Barnfield et al. "
        "2026). With a small M the logits depend on W only through U W (M·d numbers): N* grows "
        "like d.",
    )


def draw_laws(ctx: Context) -> Figure:
    return laws_figure(pd.concat([ctx.frames.laws_words, ctx.frames.laws_zipf]))


NOISE = Experiment(
    name="beyond-noise",
    title="Beyond the paper: noisy associations (trained)",
    caption="Trained matrix memories (N = 100, M = 5, α = 2, sign-like Adam, B = 256, T = 10240, "
    "best seed-averaged lr) when a sample's label is f*(x) with probability 1 − ε, else one "
    "of the other outputs. Left: excess error over the Bayes error ε; right: error against "
    "the noisy labels, dashed the Bayes floors.",
    item="beyond",
    sweeps=noise_sweeps,
    draw=lambda ctx: noise_figure(ctx.frames.noise),
)
LAWS = Experiment(
    name="beyond-laws",
    title="Beyond the paper: a real word law against Zipf (trained)",
    caption=f"Trained matrix memories on the {LANGUAGE} word-frequency law of the 1000 most "
    "frequent words (wordfreq; credits in the README) and on the Zipf law at its KL-fitted "
    "α̂ (M = 5, sign-like Adam, B = 256, T = 10240, best seed-averaged lr).",
    item="beyond",
    sweeps=laws_sweeps,
    draw=draw_laws,
)
CAPACITY_FRONTIER = Experiment(
    name="beyond-capacity",
    title="Beyond the paper: capacity frontier",
    caption="Capacity frontier: the largest N whose associations are all retrieved with top-1 "
    "accuracy ≥ 0.99 (uniform over the N inputs, Gaussian E and U), for the outer-product "
    "memory and for W trained by full-batch Adam; each input its own output (M = N, d² vs "
    "N log N) and M = 5 (N* vs d). Each search is one run of the results database.",
    item="beyond",
    sweeps=capacity_sweeps,
    draw=lambda ctx: capacity_figure(frontier_frame(capacity_payloads(ctx.frames.capacity))),
    table=lambda ctx: capacity_table(capacity_payloads(ctx.frames.capacity)),
    settings=lambda ctx: CAPACITY[ctx.scale],
)

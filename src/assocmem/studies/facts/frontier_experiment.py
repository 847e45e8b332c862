"""The capacity frontiers of Hebbian and trained memories, the experiment
``beyond-capacity`` of ``reproduce --beyond``: one capacity run (a frontier search over the
dims, :mod:`assocmem.studies.facts.frontier_kind`) per memory and M, its table and figure from
the stored runs. The facts study (:mod:`assocmem.studies.facts.experiment`) extends it to
trained MLP memories, the optimiser registry and bits per parameter."""

from collections.abc import Sequence
from typing import Any

import pandas as pd

from assocmem.analysis.frontier import FrontierPoint, fit_frontier
from assocmem.config.errors import ConfigError
from assocmem.experiments.experiment import Experiment, RawSpec
from assocmem.report import Table
from assocmem.studies.facts.frontier_figure import capacity_figure, frontier_frame
from assocmem.studies.facts.frontier_kind import CapacityKind
from assocmem.sweep.kinds import register_kind

register_kind(CapacityKind())

# Capacity frontiers: (memory, M or None for M = N) → dims, trials, repeats per scale.
CAPACITY = {
    "quick": {"dims": [16, 32, 64], "hebbian": (3, 3), "trained": (1, 2)},
    "full": {"dims": [16, 32, 64, 128], "hebbian": (5, 5), "trained": (2, 3)},
}
OUTPUTS = ["N", 5]  # each input its own output (M = N), and M = 5


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
        "References for M = N: the sharp threshold d² ≈ 2·N·log N (Giorlandino, Goldt and "
        "Maillard 2026, for a decoupled model; conjectured by Barnfield et al. "
        "2026). With a small M the logits depend on W only through U W (M·d numbers): N* grows "
        "like d.",
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

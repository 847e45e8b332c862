"""Capacity-frontier runs: one run is one frontier search of one memory over its dims.

The science is :mod:`assocmem.studies.facts.frontier_search` (``hebbian_frontier``,
``trained_frontier``): this kind only builds its config from a spec, executes it and reads the
stored record back as tidy rows.

Why a whole search over ``dims`` is one run: the trained search starts each d from the N* found
at the d before (and each repeat from the repeat before), so the points of one search are not
independent computations; splitting them would change the numbers or recompute the prefix. The
Hebbian searches are independent per d, so a spec may give ``dims`` as an axis of one-element
lists (``dims = [[16], [32]]``) to store each d as its own run (the same numbers).

A spec::

    kind = "capacity"
    [base]
    dims = [16, 32, 64]
    tau = 0.99
    [axes]
    n_outputs = ["N", 5]        # "N": each input its own output (M = N)
    [zip]
    memory = ["hebbian", "trained"]
    trials = [3, 1]             # draws averaged per accuracy
    repeats = [3, 2]            # independent searches per d
"""

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

from assocmem.config.checks import int_at_least, is_int
from assocmem.config.errors import ConfigError, unknown_name
from assocmem.studies.facts.frontier_search import MEMORIES, REPLICATES
from assocmem.sweep.kinds.base import Outcome, RunKind, as_float, base_row, config_columns

ALL_OUTPUTS = "N"  # the spec's spelling of n_outputs = None: each input its own output


@dataclass(frozen=True)
class CapacityConfig:
    """One frontier search: N*(d) for each d of ``dims``, ``repeats`` independent searches,
    each accuracy the mean over ``trials`` draws (see
    :mod:`assocmem.studies.facts.frontier_search`). ``trials`` and ``repeats`` default to the
    memory's (:data:`REPLICATES`)."""

    memory: str = "hebbian"  # hebbian (outer product, closed form) | trained (W by Adam)
    dims: tuple[int, ...] = (16, 32, 64, 128, 256)  # increasing d values
    n_outputs: int | None = None  # M; None (spelled "N" in a spec): M = N
    trials: int = REPLICATES["hebbian"][0]
    repeats: int = REPLICATES["hebbian"][1]
    tau: float = 0.99  # the accuracy threshold τ
    seed: int = 0
    # The trained memory's settings (at these defaults in every Hebbian config):
    lr: float = 1.0  # trained only: Adam's learning rate
    max_steps: int = 1000  # trained only: the step budget of one memorisation
    rel_tol: float = 0.02  # trained only: relative precision of N*
    factor: float = 1.25  # trained only: the bracketing step of the search
    device: str = "cpu"


TRAINED_ONLY = ("lr", "max_steps", "rel_tol", "factor")
_DEFAULTS = {f.name: f.default for f in fields(CapacityConfig)}


def _number(name: str, value: Any, low: float, high: float = math.inf) -> float:
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    if not ok or not low < value < high:
        raise ConfigError(name, f"must be a number in ({low:g}, {high:g}), got {value!r}")
    return float(value)


def _dims(value: Any) -> tuple[int, ...]:
    if not isinstance(value, list | tuple) or not value:
        raise ConfigError("dims", f"must be a non-empty list of integers, got {value!r}")
    dims = tuple(int_at_least("dims", d, 1) for d in value)
    if any(b <= a for a, b in zip(dims, dims[1:], strict=False)):
        raise ConfigError("dims", f"must be increasing, got {list(dims)}")
    return dims


def _outputs(value: Any) -> int | None:
    if value == ALL_OUTPUTS or value is None:
        return None
    if not is_int(value) or value < 2:
        raise ConfigError("n_outputs", f'must be "N" or an integer ≥ 2, got {value!r}')
    return value


def build_capacity(values: Mapping[str, Any]) -> CapacityConfig:
    """A capacity config from plain TOML values (lists for ``dims``, ``"N"`` for M = N).

    Raises
    ------
    ConfigError
        Naming the first field at fault.
    """
    unknown = sorted(set(values) - set(_DEFAULTS))
    if unknown:
        raise unknown_name(unknown[0], "key", unknown[0], _DEFAULTS)
    merged = {**_DEFAULTS, **values}
    memory = merged["memory"]
    if memory not in MEMORIES:
        raise unknown_name("memory", "value", memory, MEMORIES)
    trials, repeats = REPLICATES[memory]
    merged["trials"], merged["repeats"] = (
        values.get("trials", trials),
        values.get("repeats", repeats),
    )
    if memory != "trained":  # no optimiser: its settings never enter a Hebbian run's identity
        merged.update({name: _DEFAULTS[name] for name in TRAINED_ONLY})
    if merged["device"] not in ("cpu", "cuda"):
        raise ConfigError("device", f"must be cpu or cuda, got {merged['device']!r}")
    return CapacityConfig(
        memory=memory,
        dims=_dims(merged["dims"]),
        trials=int_at_least("trials", merged["trials"], 1),
        repeats=int_at_least("repeats", merged["repeats"], 1),
        n_outputs=_outputs(merged["n_outputs"]),
        tau=_number("tau", merged["tau"], 0.0, 1.0),
        seed=int_at_least("seed", merged["seed"], 0),
        lr=_number("lr", merged["lr"], 0.0),
        max_steps=int_at_least("max_steps", merged["max_steps"], 1),
        rel_tol=_number("rel_tol", merged["rel_tol"], 0.0, 1.0),
        factor=_number("factor", merged["factor"], 1.0),
        device=merged["device"],
    )


def search(cfg: CapacityConfig) -> list[Any]:
    """The frontier points of one search: ``capacity_frontier`` of ``cfg.memory``
    (:mod:`assocmem.studies.facts.frontier_search`), as ``assocmem capacity`` runs it."""
    from assocmem.studies.facts.frontier_search import capacity_frontier

    return capacity_frontier(
        cfg.memory, cfg.dims, tau=cfg.tau, n_outputs=cfg.n_outputs, trials=cfg.trials,
        repeats=cfg.repeats, seed=cfg.seed, lr=cfg.lr, max_steps=cfg.max_steps,
        rel_tol=cfg.rel_tol, factor=cfg.factor, device=cfg.device,
    )  # fmt: skip


class CapacityKind(RunKind):
    """One frontier search per point (its seed a field of the point); each its own batch."""

    name = "capacity"

    def build(self, values: Mapping[str, Any]) -> CapacityConfig:
        return build_capacity(values)

    def execute(self, configs: Sequence[Any], trials: Sequence[int | None]) -> list[Outcome]:
        """Each search in turn: metrics ``points``, one ``{dim, n_star}`` per d (N* of every
        repeat, in order)."""
        out: list[Outcome] = []
        for cfg in configs:
            points = search(cfg)
            found = [{"dim": p.dim, "n_star": list(p.n_star)} for p in points]
            out.append(({"points": found}, "ok"))
        return out

    def rows(self, row: Mapping[str, Any]) -> list[dict[str, Any]]:
        """One row per (d, repeat): the config fields (``n_outputs`` "N" for M = N), ``dim``,
        ``repeat`` and ``n_star``; a failed run gives one row of NaN."""
        common = {**base_row(row), **config_columns(row, ("dims", "n_outputs"))}
        outputs = row["config"]["n_outputs"]
        common["n_outputs"] = ALL_OUTPUTS if outputs is None else outputs
        metrics = row["metrics"]
        if metrics is None:
            return [{**common, "dim": None, "repeat": None, "n_star": math.nan}]
        return [
            {**common, "dim": point["dim"], "repeat": repeat, "n_star": as_float(n_star)}
            for point in metrics["points"]
            for repeat, n_star in enumerate(point["n_star"])
        ]

    def work(self, config: Any) -> float:
        r"""About :math:`\log_2 N^*` accuracy evaluations per (d, repeat), each ~``N* d M`` per
        trial (Hebbian) or a few hundred Adam steps of :math:`M d^2 + N M d` (trained), N* from
        theory."""
        from assocmem.analysis.frontier import frontier_guess

        total = 0.0
        for dim in config.dims:
            n = frontier_guess(dim, config.n_outputs)
            m = n if config.n_outputs is None else config.n_outputs
            step = n * dim * m if config.memory == "hebbian" else 300 * (m * dim**2 + n * m * dim)
            total += config.repeats * config.trials * math.log2(max(n, 2)) * step
        return total

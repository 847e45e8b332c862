"""Parallel memories (docs: beyond/superposition.md): the ``superposition`` run kind.

A run is one trial of closed-form heads, every (budget, H, d, scheme, arrangement) of the
point, on that trial's embeddings (common random numbers across all of them). The science is
:mod:`assocmem.studies.superposition.memory`; the budgets are
:mod:`assocmem.studies.superposition.theory`. Heads trained jointly are the ``superposition_train``
kind (:mod:`assocmem.studies.superposition.kind_train`).

A spec::

    kind = "superposition"
    trials = 20
    [base]
    dims = [16, 32, 64]
    heads = [1, 2, 4, 8]
    budgets = ["width", "matrix", "total"]
    schemes = ["threshold:P=d/8", "population"]
    [axes]
    alpha = [2.0, 1.5]
"""

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any, ClassVar

from assocmem.config.checks import int_at_least, positive_number
from assocmem.config.errors import ConfigError, unknown_name
from assocmem.config.memory import DEFAULT_MEMORY_GB, check_budget, check_memory_gb
from assocmem.config.problem import problem_field
from assocmem.sweep.kinds.base import (
    Outcome,
    RunKind,
    as_float,
    base_row,
    config_columns,
    config_fields,
)

ARRANGEMENTS = ("same", "band", "random", "band-gated", "random-gated")  # as closed_form's
BUDGETS = ("width", "matrix", "total")  # as analysis.superposition.BUDGETS (checked in tests)
SAMPLE_FREE = ("population", "uniform", "threshold")  # schemes without data (infinite T)


@dataclass(frozen=True)
class SuperpositionConfig:
    """One closed-form point: every (budget, H, d) of H heads against one memory of width d,
    for each scheme and arrangement (a run is one trial of all of them)."""

    n_inputs: int = problem_field("n_inputs")
    n_outputs: int = problem_field("n_outputs")
    alpha: float = problem_field("alpha")
    dims: tuple[int, ...] = (16, 32, 64, 128, 256, 512)  # d of the single memory compared with
    heads: tuple[int, ...] = (1, 2, 4, 8)  # H
    budgets: tuple[str, ...] = BUDGETS  # width: H·d_h = d; matrix: H·d_h² = d²; total
    schemes: tuple[str, ...] = ("threshold:P=d/8", "population")  # q at d = H·d_h
    arrangements: tuple[str, ...] = ARRANGEMENTS
    seed: int = 0
    dtype: str = "float32"
    device: str = "cpu"
    memory_gb: float = DEFAULT_MEMORY_GB


def _ints(name: str, value: Any) -> tuple[int, ...]:
    if not isinstance(value, list | tuple) or not value:
        raise ConfigError(name, f"must be a non-empty list of integers, got {value!r}")
    out = tuple(int_at_least(name, v, 1) for v in value)
    if len(set(out)) != len(out):
        raise ConfigError(name, f"values must be distinct, got {list(out)}")
    return tuple(sorted(out))


def one_of(name: str, value: Any, allowed: Sequence[str]) -> str:
    """``value`` if it is one of ``allowed``, else a ConfigError listing them."""
    if value not in allowed:
        raise unknown_name(name, "value", value, allowed)
    return str(value)


def some_of(name: str, value: Any, allowed: Sequence[str]) -> tuple[str, ...]:
    """A non-empty list of distinct values of ``allowed`` (a single string: a list of one)."""
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list | tuple) or not value:
        raise ConfigError(name, f"must be a non-empty list, allowed: {', '.join(allowed)}")
    for item in value:
        if item not in allowed:
            raise unknown_name(name, "value", item, allowed)
    if len(set(value)) != len(value):
        raise ConfigError(name, f"values must be distinct, got {list(value)}")
    return tuple(value)


def _schemes(value: Any, n_inputs: int) -> tuple[str, ...]:
    from assocmem.schemes import parse_scheme

    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list | tuple) or not value:
        raise ConfigError("schemes", f"must be a non-empty list of scheme specs, got {value!r}")
    specs = []
    for text in value:
        scheme = parse_scheme(str(text))
        if scheme.name not in SAMPLE_FREE:
            raise ConfigError(
                "schemes", f"{scheme.name}: only {', '.join(SAMPLE_FREE)} (infinite data)"
            )
        scheme.validate(n_inputs)  # e.g. a fixed P between 1 and N
        specs.append(scheme.spec)
    if len(set(specs)) != len(specs):
        raise ConfigError("schemes", f"values must be distinct, got {specs}")
    return tuple(specs)


def common_fields(merged: dict[str, Any]) -> dict[str, Any]:
    """The fields both kinds check alike. Both compute on the CPU (small problems); ``device``
    is accepted as every sweep's is, and ignored."""
    if merged["device"] not in ("cpu", "cuda"):
        raise ConfigError("device", f"must be cpu or cuda, got {merged['device']!r}")
    return {
        "n_inputs": int_at_least("n_inputs", merged["n_inputs"], 2),
        "n_outputs": int_at_least("n_outputs", merged["n_outputs"], 2),
        "alpha": positive_number("alpha", merged["alpha"]),
        "seed": int_at_least("seed", merged["seed"], 0),
        "device": merged["device"],
    }


def merged_values(cls: type, values: Mapping[str, Any]) -> dict[str, Any]:
    """The dataclass ``cls``'s defaults updated by ``values``; a ConfigError for an unknown key."""
    defaults = {f.name: f.default for f in fields(cls)}
    return {**defaults, **config_fields(cls, values)}


def build_superposition(values: Mapping[str, Any]) -> SuperpositionConfig:
    """A closed-form superposition point from plain TOML values; trials are the sweep's.

    Raises
    ------
    ConfigError
        Naming the first field at fault, or a point whose working set exceeds ``memory_gb``.
    """
    if "trials" in values:
        raise ConfigError("trials", "set trials at the top level of a sweep spec")
    merged = merged_values(SuperpositionConfig, values)
    if merged["dtype"] not in ("float32", "float64"):
        raise ConfigError("dtype", f"must be float32 or float64, got {merged['dtype']!r}")
    common = common_fields(merged)
    cfg = SuperpositionConfig(
        **common,
        dims=_ints("dims", merged["dims"]),
        heads=_ints("heads", merged["heads"]),
        budgets=some_of("budgets", merged["budgets"], BUDGETS),
        schemes=_schemes(merged["schemes"], common["n_inputs"]),
        arrangements=some_of("arrangements", merged["arrangements"], ARRANGEMENTS),
        dtype=merged["dtype"],
        memory_gb=check_memory_gb(merged["memory_gb"]),
    )
    need = trial_bytes(cfg)
    check_budget(need, cfg.memory_gb, "one trial of this point", "lower dims or heads")
    return cfg


def cells(cfg: SuperpositionConfig) -> list[tuple[str, int, int, int]]:
    """Every ``(budget, H, d, d_h)`` of a point, in (budget, H, d) order."""
    from assocmem.studies.superposition.theory import budget_head_dim

    n, m = cfg.n_inputs, cfg.n_outputs
    return [
        (budget, heads, dim, budget_head_dim(dim, heads, budget, n, m))
        for budget in cfg.budgets
        for heads in cfg.heads
        for dim in cfg.dims
    ]


def layouts(cfg: SuperpositionConfig) -> list[tuple[int, int]]:
    """The distinct ``(H, d_h)`` of a point, sorted (H = 1 is the same under every budget)."""
    return sorted({(heads, d_h) for _, heads, _, d_h in cells(cfg)})


def trial_bytes(cfg: SuperpositionConfig) -> int:
    """About the bytes one trial holds (:func:`~assocmem.studies.superposition.memory.
    working_set_bytes`), at the config's precision."""
    from assocmem.studies.superposition.memory import HeadsLayout, working_set_bytes

    shapes = [HeadsLayout(h, d) for h, d in layouts(cfg)]
    columns, read = 3 * len(cfg.schemes), len(cfg.schemes) * len(cfg.arrangements)
    size = 2 if cfg.dtype == "float64" else 1
    return size * working_set_bytes(cfg.n_inputs, cfg.n_outputs, shapes, columns, read)


class SuperpositionKind(RunKind):
    """:class:`SuperpositionConfig` runs, one per trial index (a trial's numbers depend only on
    its config, seed and index)."""

    name = "superposition"
    operational: ClassVar[tuple[str, ...]] = ("device", "memory_gb")
    has_trials = True
    default_runs_per_batch = 10

    def build(self, values: Mapping[str, Any]) -> SuperpositionConfig:
        return build_superposition(values)

    def device(self, config: Any) -> str:
        return "cpu"  # computed on the CPU whatever the sweep's device (see _common)

    def execute(self, configs: Sequence[Any], trials: Sequence[int | None]) -> list[Outcome]:
        """Each trial in turn (one intra-op thread: skinny products, a shared machine)."""
        import torch

        from assocmem.laws.tokens import mod_targets, zipf_probabilities
        from assocmem.runtime import intra_op_threads
        from assocmem.studies.superposition.memory import (
            HeadsLayout,
            HeadsTrial,
            superposition_errors,
        )

        out: list[Outcome] = []
        for cfg, trial in zip(configs, trials, strict=True):
            assert trial is not None
            shapes = layouts(cfg)
            inputs = HeadsTrial(
                probs=zipf_probabilities(cfg.n_inputs, cfg.alpha),
                targets=mod_targets(cfg.n_inputs, cfg.n_outputs),
                n_outputs=cfg.n_outputs,
                schemes=cfg.schemes,
                arrangements=cfg.arrangements,
                seed=cfg.seed,
                trial=trial,
                dtype=getattr(torch, cfg.dtype),
            )
            with intra_op_threads(1), torch.inference_mode():
                errors, head = superposition_errors(inputs, [HeadsLayout(*s) for s in shapes])
            finite = bool(torch.isfinite(errors).all())
            metrics = {
                "layouts": [list(s) for s in shapes],
                "cells": [[b, h, d, shapes.index((h, dh))] for b, h, d, dh in cells(cfg)],
                "errors": errors.tolist(),  # (layout, scheme, arrangement)
                "head": head.tolist(),
            }
            out.append((metrics, "ok" if finite else "diverged"))
        return out

    def rows(self, row: Mapping[str, Any]) -> list[dict[str, Any]]:
        """One row per (budget, H, d, scheme, arrangement): ``head_dim``, the actual ``width``,
        ``matrix_params`` and ``total_params``, ``error``, ``head_error``, ``tail_error``."""
        from assocmem.studies.superposition.theory import heads_parameter_counts

        config = row["config"]
        skip = ("dims", "heads", "budgets", "schemes", "arrangements", "trial")
        common = {**base_row(row), **config_columns(row, skip), "trial": config["trial"]}
        metrics = row["metrics"]
        if metrics is None:
            return [{**common, "scheme": None, "dim": None, "error": math.nan}]
        n, m = config["n_inputs"], config["n_outputs"]
        out = []
        for budget, heads, dim, index in metrics["cells"]:
            d_h = metrics["layouts"][index][1]
            counts = heads_parameter_counts(heads, d_h, n, m)
            cell = {**common, "budget": budget, "heads": heads, "dim": dim, "head_dim": d_h,
                    "width": counts.width, "matrix_params": counts.matrix,
                    "total_params": counts.total}  # fmt: skip
            for s, scheme in enumerate(config["schemes"]):
                for a, arrangement in enumerate(config["arrangements"]):
                    error = as_float(metrics["errors"][index][s][a])
                    head = as_float(metrics["head"][index][s][a])
                    out.append({**cell, "scheme": scheme, "arrangement": arrangement,
                                "error": error, "head_error": head,
                                "tail_error": error - head})  # fmt: skip
        return out

    def work(self, config: Any) -> float:
        r"""About :math:`2\cdot N\cdot H\cdot d_h\cdot 3S\cdot M` multiply-adds per layout (the two
        products of each head)."""
        n, m, columns = config.n_inputs, config.n_outputs, 3 * len(config.schemes)
        return float(sum(2 * n * h * d * columns * m for h, d in layouts(config)))

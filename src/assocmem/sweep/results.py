"""Reading a results database as pandas DataFrames: per run, aggregated over seeds, honest lr
selection, and export to CSV, JSON lines and Parquet.

Rows: a training run is one row (config fields, then ``error``, ``head_error``, ``tail_error``,
``cross_entropy``, ``p_correct``, ``noisy_error``, ``bayes_error``, ``excess_error``; NaN in
records stored before these existed); a closed-form run (one trial) becomes one row per
(scheme, d, T) with
``scheme``, ``dim``, ``n_samples`` (``inf`` = infinite data), ``error``, ``head_error``,
``tail_error``. Every row keeps ``hash``, ``sweep``, ``status``, ``message`` and the run's
``wall_seconds``, ``host`` and ``git``.
"""

import math
from pathlib import Path
from typing import Any, TextIO

import pandas as pd

from assocmem.analysis.lr_selection import select_lr
from assocmem.analysis.stats import METRICS, aggregate
from assocmem.config.errors import ConfigError
from assocmem.sweep.store import read_rows

FORMATS = ("table", "json", "csv", "jsonl", "parquet")
_CLOSED_FORM_VECTORS = ("dims", "schemes", "n_samples", "trial")


def _hashable(value: Any) -> Any:
    return tuple(_hashable(v) for v in value) if isinstance(value, list) else value


def _base_row(row: dict[str, Any]) -> dict[str, Any]:
    prov = row["provenance"]
    return {
        "hash": row["hash"],
        "sweep": row["sweep"],
        "status": row["status"],
        "message": row["message"],
        "wall_seconds": prov.get("wall_seconds"),
        "host": prov.get("host"),
        "git": prov.get("git"),
        "created": row["created"],
    }


def _train_rows(row: dict[str, Any]) -> list[dict[str, Any]]:
    out = _base_row(row)
    out.update({k: _hashable(v) for k, v in row["config"].items()})
    metrics = row["metrics"] or {}
    out.update({name: _float(metrics.get(name)) for name in METRICS})
    return [out]


def _closed_form_rows(row: dict[str, Any]) -> list[dict[str, Any]]:
    config = {k: _hashable(v) for k, v in row["config"].items() if k not in _CLOSED_FORM_VECTORS}
    common = {**_base_row(row), **config, "trial": row["config"]["trial"]}
    metrics = row["metrics"]
    if metrics is None:  # a failed run: no numbers
        return [{**common, "scheme": None, "dim": None, "n_samples": None, "error": math.nan}]
    out = []
    for c, (scheme, n_samples) in enumerate(metrics["columns"]):
        for i, dim in enumerate(metrics["dims"]):
            error, head = _float(metrics["errors"][c][i]), _float(metrics["head"][c][i])
            out.append(
                {
                    **common,
                    "scheme": scheme,
                    "dim": dim,
                    "n_samples": math.inf if n_samples is None else n_samples,
                    "error": error,
                    "head_error": head,
                    "tail_error": error - head,
                }
            )
    return out


def _float(value: Any) -> float:
    return math.nan if value is None else float(value)


def load_results(
    db: str | Path, *, sweep: str | None = None, kind: str | None = None
) -> pd.DataFrame:
    """Every stored run (or those of one sweep / kind) as a DataFrame (see the module doc)."""
    rows: list[dict[str, Any]] = []
    for row in read_rows(db, sweep=sweep):
        if kind is not None and row["kind"] != kind:
            continue
        expand = _closed_form_rows if row["kind"] == "closed_form" else _train_rows
        rows += [{"kind": row["kind"], **r} for r in expand(row)]
    return pd.DataFrame(rows)


def load_curves(db: str | Path, *, sweep: str | None = None) -> pd.DataFrame:
    """The error along training of every stored training run that recorded one (``eval_every``):
    one row per (run, evaluated step), the run's config columns then ``step`` and ``error``."""
    rows: list[dict[str, Any]] = []
    for row in read_rows(db, sweep=sweep):
        curve = (row["metrics"] or {}).get("curve") if row["kind"] == "train" else None
        if curve:
            run = {**_base_row(row), **{k: _hashable(v) for k, v in row["config"].items()}}
            rows += [{**run, "step": int(step), "error": float(error)} for step, error in curve]
    return pd.DataFrame(rows)


def export(df: pd.DataFrame, path: str | Path | TextIO, fmt: str) -> None:
    """Write ``df`` as csv, jsonl (JSON lines), json (one array) or parquet (needs pyarrow)."""
    if fmt == "csv":
        df.to_csv(path, index=False)
    elif fmt == "jsonl":
        df.to_json(path, orient="records", lines=True)
    elif fmt == "json":
        df.to_json(path, orient="records")
    elif fmt == "parquet":
        require_parquet()
        _parquet_ready(df).to_parquet(path, index=False)
    else:
        raise ConfigError("format", f"unknown format {fmt!r}; allowed: csv, jsonl, json, parquet")


def require_parquet() -> None:
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        raise ConfigError(
            "format", "parquet needs the optional dependency: pip install 'assocmem[parquet]'"
        ) from None


def _parquet_ready(df: pd.DataFrame) -> pd.DataFrame:
    """Tuples become lists (Arrow list columns); all-None object columns become strings."""
    out = df.copy()
    for column in out.columns:
        if out[column].dtype == object:
            out[column] = out[column].map(lambda v: list(v) if isinstance(v, tuple) else v)
    return out


__all__ = [  # aggregate and select_lr live in assocmem.analysis; the sweep CLI reads them here
    "FORMATS",
    "aggregate",
    "export",
    "load_curves",
    "load_results",
    "require_parquet",
    "select_lr",
]

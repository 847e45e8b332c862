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

from pathlib import Path
from typing import Any, TextIO

import pandas as pd

from assocmem.analysis.lr_selection import select_lr
from assocmem.analysis.stats import aggregate
from assocmem.config.errors import ConfigError, unknown_name
from assocmem.sweep.kinds import get_kind
from assocmem.sweep.store import read_rows, stored_values

FORMATS = ("table", "json", "csv", "jsonl", "parquet")


def load_results(
    db: str | Path, *, sweep: str | None = None, kind: str | None = None
) -> pd.DataFrame:
    """Every stored run of a results database as a tidy DataFrame.

    Parameters
    ----------
    db : str or pathlib.Path
        The SQLite database written by :func:`run_sweep`.
    sweep : str, optional
        Only this sweep's runs.
    kind : str, optional
        Only runs of this kind (``"closed_form"``, ``"train"``, ...).

    Returns
    -------
    pandas.DataFrame
        One row per observation, snake_case columns. A training run is one row: ``kind``, its
        config fields (``n_inputs``, ``dim``, ``optimizer``, ``lr``, ``seed``, ...), then
        ``error``, ``head_error``, ``tail_error``, ``cross_entropy``, ``p_correct``,
        ``noisy_error``, ``bayes_error``, ``excess_error`` (float; NaN in older records). A
        closed-form run (one trial) is one row per (scheme, d, T): ``scheme``, ``dim``,
        ``n_samples`` (float, ``inf`` for infinite data), ``trial``, ``error``, ``head_error``,
        ``tail_error``. Every row keeps ``hash``, ``sweep``, ``status`` (``"ok"``,
        ``"diverged"``, ``"failed"``), ``message``, ``wall_seconds``, ``host`` and ``git``.

    Raises
    ------
    ConfigError
        For a ``sweep`` or ``kind`` the database holds no run of (naming the stored ones).

    Notes
    -----
    Aggregate over seeds and trials with :func:`aggregate`; pick learning rates with
    :func:`select_lr`; plot with the figure functions.
    """
    return pd.DataFrame(result_rows(db, sweep=sweep, kind=kind))


def _check_names(db: str | Path, sweep: str | None, kind: str | None) -> None:
    """A sweep or run kind the database does not hold is a wrong name, not an empty result."""
    for field, name in (("sweep", sweep), ("kind", kind)):
        if name is None:
            continue
        stored = stored_values(db, field)
        if name not in stored:
            raise unknown_name(field, field, name, stored, listed=f"stored in {db}")


def result_rows(
    db: str | Path, *, sweep: str | None = None, kind: str | None = None
) -> list[dict[str, Any]]:
    """The rows of :func:`load_results` as plain dicts (each run kind's own fields and types:
    a frame built from one kind's rows keeps its integer columns integers)."""
    _check_names(db, sweep, kind)
    rows: list[dict[str, Any]] = []
    for row in read_rows(db, sweep=sweep):
        if kind is not None and row["kind"] != kind:
            continue
        rows += [{"kind": row["kind"], **r} for r in get_kind(row["kind"]).rows(row)]
    return rows


def load_curves(db: str | Path, *, sweep: str | None = None) -> pd.DataFrame:
    """The error along training of every stored training run that recorded one.

    Parameters
    ----------
    db : str or pathlib.Path
        The results database.
    sweep : str, optional
        Only this sweep's runs.

    Returns
    -------
    pandas.DataFrame
        One row per (run, evaluated step): the run's config columns, then ``step`` (int) and
        ``error`` (float). Runs without ``eval_every`` have no rows.
    """
    _check_names(db, sweep, None)
    rows: list[dict[str, Any]] = []
    for row in read_rows(db, sweep=sweep):
        rows += get_kind(row["kind"]).curves(row)
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
        if not isinstance(path, (str, Path)):
            raise ConfigError("format", "parquet is binary: give a file path, not a text stream")
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

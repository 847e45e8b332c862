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

from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

import pandas as pd

from assocmem.config.errors import ConfigError
from assocmem.sweep.kinds import get_kind
from assocmem.sweep.store import read_rows

REPLICATES = ("seed", "trial")  # what aggregation averages over
METRICS = (
    "error", "head_error", "tail_error", "cross_entropy",
    "p_correct", "noisy_error", "bayes_error", "excess_error",
)  # fmt: skip
BOOKKEEPING = ("hash", "sweep", "status", "message", "wall_seconds", "host", "git", "created")
COUNTS = ("n", "n_diverged", "n_failed")
FORMATS = ("table", "json", "csv", "jsonl", "parquet")
LR_METHODS = {
    "mean": "best lr of the seed-averaged error",
    "heldout": "lr chosen on held-out seeds, error reported on the other seeds",
    "per_seed_oracle": "best lr per seed (optimistic oracle, as in the paper's code)",
}


def load_results(
    db: str | Path, *, sweep: str | None = None, kind: str | None = None
) -> pd.DataFrame:
    """Every stored run (or those of one sweep / kind) as a DataFrame: each run's rows as its
    kind gives them (:meth:`~assocmem.sweep.kinds.RunKind.rows`, see the module doc)."""
    rows: list[dict[str, Any]] = []
    for row in read_rows(db, sweep=sweep):
        if kind is not None and row["kind"] != kind:
            continue
        rows += [{"kind": row["kind"], **r} for r in get_kind(row["kind"]).rows(row)]
    return pd.DataFrame(rows)


def load_curves(db: str | Path, *, sweep: str | None = None) -> pd.DataFrame:
    """The error along training of every stored training run that recorded one (``eval_every``):
    one row per (run, evaluated step), the run's config columns then ``step`` and ``error``."""
    rows: list[dict[str, Any]] = []
    for row in read_rows(db, sweep=sweep):
        rows += get_kind(row["kind"]).curves(row)
    return pd.DataFrame(rows)


def group_columns(df: pd.DataFrame, exclude: Sequence[str] = ()) -> list[str]:
    """The columns that identify a point: all but replicates, metrics and bookkeeping."""
    skip = {*REPLICATES, *METRICS, *BOOKKEEPING, *COUNTS, *exclude}
    return [c for c in df.columns if c not in skip and not c.endswith(("_mean", "_std", "_sem"))]


def aggregate(df: pd.DataFrame, over: Sequence[str] = REPLICATES) -> pd.DataFrame:
    """Mean, std and standard error of every metric over ``over`` (seeds and trials).

    ``n`` counts runs; ``n_diverged`` and ``n_failed`` count those statuses (diverged runs keep
    their error, in which non-finite tokens count as wrong; failed runs have no numbers).
    """
    if df.empty:
        return df.copy()
    keys = group_columns(df, exclude=over)
    metrics = [m for m in METRICS if m in df.columns]
    frame = df.assign(
        _diverged=(df["status"] == "diverged").astype(int),
        _failed=(df["status"] == "failed").astype(int),
    )
    grouped = frame.groupby(keys, dropna=False, sort=True)
    out = grouped.agg(
        n=("status", "size"), n_diverged=("_diverged", "sum"), n_failed=("_failed", "sum")
    )
    for metric in metrics:
        values = grouped[metric]
        count = values.count()
        out[f"{metric}_mean"] = values.mean()
        out[f"{metric}_std"] = values.std(ddof=1)
        out[f"{metric}_sem"] = out[f"{metric}_std"] / count.pow(0.5)
    return out.reset_index()


def select_lr(
    df: pd.DataFrame,
    method: str = "mean",
    *,
    metric: str = "error",
    selection_seeds: Sequence[int] | None = None,
) -> pd.DataFrame:
    """One row per point (all but ``lr`` and the seed), at the selected learning rate.

    ``mean``: the lr of lowest seed-averaged error. ``heldout``: the lr is chosen on
    ``selection_seeds`` (default: the first half of the seeds) and the error reported is the
    mean over the *other* seeds. ``per_seed_oracle``: each seed's best lr, then averaged — an
    optimistic estimate, only when asked for by name. The ``lr_selection`` column says which.
    """
    if method not in LR_METHODS:
        raise ConfigError(
            "select_lr", f"unknown method {method!r}; allowed: {', '.join(LR_METHODS)}"
        )
    if "lr" not in df.columns or "seed" not in df.columns:
        raise ConfigError("select_lr", "needs runs with an lr and a seed (training sweeps)")
    if method == "mean":
        out = _best(aggregate(df), f"{metric}_mean")
    elif method == "heldout":
        out = _heldout(df, metric, selection_seeds)
    else:  # each seed at its own best lr, then averaged over seeds (the lr column is dropped)
        out = aggregate(_best(df, metric, extra=["seed"]).drop(columns=["lr"]))
    return out.assign(lr_selection=LR_METHODS[method]).reset_index(drop=True)


def _best(df: pd.DataFrame, column: str, extra: Sequence[str] = ()) -> pd.DataFrame:
    """The row of lowest ``column`` within each point (and each value of ``extra``)."""
    keys = [*group_columns(df, exclude=["lr", *extra]), *extra]
    order = df.sort_values(column, kind="stable", na_position="last")
    return order.groupby(keys, dropna=False, sort=True).head(1).sort_index()


def _heldout(df: pd.DataFrame, metric: str, selection_seeds: Sequence[int] | None) -> pd.DataFrame:
    seeds = sorted(df["seed"].unique())
    chosen = list(selection_seeds) if selection_seeds is not None else seeds[: len(seeds) // 2]
    if not chosen or set(chosen) >= set(seeds):
        raise ConfigError("selection_seeds", "need some seeds for selection and some for testing")
    selection = aggregate(df[df["seed"].isin(chosen)])
    best = _best(selection, f"{metric}_mean")
    keys = group_columns(selection)  # the point and its chosen lr
    test = aggregate(df[~df["seed"].isin(chosen)])
    return test.merge(best[keys], on=keys, how="inner")


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

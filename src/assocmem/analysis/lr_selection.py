"""Learning-rate selection for trained memories, written once.

Every "tuned lr" in the package is the lr of lowest *seed-averaged* error at each point (the
point: every setting but the lr and the seed), unless asked otherwise. Three methods (the
``lr_selection`` column of :func:`select_lr` says which was used):

- ``mean``: the lr of lowest seed-averaged error (honest: one lr per point);
- ``heldout``: the lr chosen on some seeds, the error reported on the others;
- ``per_seed_oracle``: each seed at its own best lr, then averaged (optimistic; what the
  paper's code does).

Ties go to the first candidate in table order (for sorted tables, the smallest lr). The rule
itself, and the selection the studies use, is :mod:`assocmem.ops.lr_selection`.
"""

from collections.abc import Sequence

import pandas as pd

from assocmem.analysis.stats import aggregate, group_columns, seed_summary
from assocmem.config.errors import ConfigError, unknown_name
from assocmem.ops.lr_selection import lowest

LR_METHODS = {
    "mean": "best lr of the seed-averaged error",
    "heldout": "lr chosen on held-out seeds, error reported on the other seeds",
    "per_seed_oracle": "best lr per seed (optimistic oracle, as in the paper's code)",
}


def select_lr(
    df: pd.DataFrame,
    method: str = "mean",
    *,
    metric: str = "error",
    selection_seeds: Sequence[int] | None = None,
) -> pd.DataFrame:
    """One row per point (all columns but ``lr`` and the seed), at the selected learning rate.

    Parameters
    ----------
    df : pandas.DataFrame
        Training results, one row per run (:func:`load_results`): config columns, ``seed``,
        ``lr``, the metrics and ``status``.
    method : {"mean", "heldout", "per_seed_oracle"}, default "mean"
        ``"mean"``: the lr of lowest seed-averaged ``metric``. ``"heldout"``: the lr chosen on
        ``selection_seeds``, the error reported the mean over the *other* seeds.
        ``"per_seed_oracle"``: each seed's best lr, then averaged (an optimistic estimate, as in
        the authors' code; only when asked for by name).
    metric : str, default "error"
        The metric minimised.
    selection_seeds : sequence of int, optional
        The seeds that choose the lr under ``"heldout"`` (default: the first half).

    Returns
    -------
    pandas.DataFrame
        The :func:`aggregate` columns of each point at its chosen ``lr`` (``error_mean``,
        ``error_sem``, ..., ``n``), plus ``lr_selection`` naming the method.

    Raises
    ------
    ConfigError
        For an unknown method or too few seeds for ``"heldout"``.

    Notes
    -----
    "Tuned lr" in Cabannes et al. (2024), Section 4; see the docs: science/optimisation.md.
    """
    if method not in LR_METHODS:
        raise unknown_name("select_lr", "method", method, LR_METHODS)
    if "lr" not in df.columns or "seed" not in df.columns:
        raise ConfigError("select_lr", "needs runs with an lr and a seed (training sweeps)")
    if method == "mean":
        out = best_lr_of(aggregate(df), f"{metric}_mean")
    elif method == "heldout":
        out = _heldout(df, metric, selection_seeds)
    else:  # each seed at its own best lr, then averaged over seeds (the lr column is dropped)
        out = aggregate(best_lr_of(df, metric, extra=["seed"]).drop(columns=["lr"]))
    return out.assign(lr_selection=LR_METHODS[method]).reset_index(drop=True)


def best_lr_of(df: pd.DataFrame, column: str, extra: Sequence[str] = ()) -> pd.DataFrame:
    """The row of lowest ``column`` within each point (and each value of ``extra``)."""
    return lowest(df, [*group_columns(df, exclude=["lr", *extra]), *extra], column)


def _heldout(df: pd.DataFrame, metric: str, selection_seeds: Sequence[int] | None) -> pd.DataFrame:
    seeds = sorted(df["seed"].unique())
    chosen = list(selection_seeds) if selection_seeds is not None else seeds[: len(seeds) // 2]
    if not chosen or set(chosen) >= set(seeds):
        raise ConfigError("selection_seeds", "need some seeds for selection and some for testing")
    selection = aggregate(df[df["seed"].isin(chosen)])
    best = best_lr_of(selection, f"{metric}_mean")
    keys = group_columns(selection)  # the point and its chosen lr
    test = aggregate(df[~df["seed"].isin(chosen)])
    return test.merge(best[keys], on=keys, how="inner")


def tuned(frame: pd.DataFrame, keys: Sequence[str], value: str = "error") -> pd.DataFrame:
    """Per (keys, dim): ``mean``, ``sem`` and ``count`` over seeds of ``value`` at the ``lr`` of
    lowest seed-averaged error (method ``mean`` on the columns ``keys``, ``dim``, ``lr``)."""
    stats = seed_summary(frame, [*keys, "dim", "lr"])
    best = lowest(stats, [*keys, "dim"], "mean").reset_index(drop=True)
    if value == "error":
        return best
    kept = frame.merge(best[[*keys, "dim", "lr"]], on=[*keys, "dim", "lr"])
    return seed_summary(kept, [*keys, "dim"], value)


def per_seed_oracle(frame: pd.DataFrame, metric: str = "error") -> float:
    """The paper's "tuned lr" of one point: each seed's own best lr, then the mean over seeds."""
    best = lowest(frame, ["seed"], metric).sort_values("seed", kind="stable")
    return float(best[metric].mean())

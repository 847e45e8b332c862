"""One lr selection (assocmem.ops.lr_selection, and the methods of
assocmem.analysis.lr_selection) gives what each former copy gave."""

import statistics

import numpy as np
import pandas as pd
import pytest

from assocmem.analysis.lr_selection import per_seed_oracle, select_lr, tuned
from assocmem.ops.lr_selection import best_lr_records, best_lr_rows


def _runs(seed: int = 0) -> pd.DataFrame:
    """Training-like runs: optimizer × dim × lr × seed, errors on a coarse grid (many ties)."""
    rng = np.random.default_rng(seed)
    rows = [
        {"optimizer": opt, "dim": d, "lr": lr, "seed": s, "status": "ok",
         "error": float(rng.integers(0, 6)) / 8}
        for opt in ("adam", "sgd") for d in (4, 8, 16) for lr in (0.1, 1.0, 10.0)
        for s in range(4)
    ]  # fmt: skip
    return pd.DataFrame(rows).sample(frac=1.0, random_state=seed).reset_index(drop=True)


def _old_tuned(frame: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    grouped = frame.groupby([*keys, "dim", "lr"], sort=True)["error"]
    stats = grouped.agg(["mean", "sem", "count"]).reset_index()
    stats["sem"] = stats["sem"].fillna(0.0)
    return stats.loc[stats.groupby([*keys, "dim"])["mean"].idxmin()].reset_index(drop=True)


@pytest.mark.parametrize("seed", range(5))
def test_tuned_matches_the_figures_idxmin(seed):
    frame = _runs(seed)
    pd.testing.assert_frame_equal(tuned(frame, ["optimizer"]), _old_tuned(frame, ["optimizer"]))


@pytest.mark.parametrize("seed", range(5))
def test_per_seed_oracle_is_each_seeds_best_then_the_mean(seed):
    rows = _runs(seed)
    rows = rows[(rows["optimizer"] == "adam") & (rows["dim"] == 8)]
    assert per_seed_oracle(rows) == float(rows.groupby("seed")["error"].min().mean())


def _old_best_lr(records, group):
    by_setting: dict = {}
    for record in records:
        key = (record[group], record["dim"])
        by_setting.setdefault(key, {}).setdefault(record["lr"], []).append(record)
    kept = []
    for lrs in by_setting.values():
        lr = min(lrs, key=lambda value: statistics.fmean(r["error"] for r in lrs[value]))
        kept += lrs[lr]
    return kept


def _old_best_lr_rows(rows, columns):
    best: dict = {}
    for row in rows:
        key = tuple(value for name, value in row.items() if name in columns)
        if key not in best or row["error"] < best[key]["error"]:
            best[key] = row
    return list(best.values())


@pytest.mark.parametrize("seed", range(5))
def test_records_selection_matches_the_former_loops(seed):
    records = _runs(seed).to_dict("records")
    assert best_lr_records(records, ["optimizer", "dim"]) == _old_best_lr(records, "optimizer")
    averaged = tuned(_runs(seed), ["optimizer"]).to_dict("records")  # one row per point
    summary = [dict(r, lr=lr, error=r["mean"]) for r in averaged for lr in (r["lr"], r["lr"] * 3)]
    assert best_lr_records(summary, ["optimizer", "dim"]) == _old_best_lr_rows(
        summary, ("optimizer", "dim")
    )


def test_select_lr_methods_label_their_rows():
    frame = _runs(1)
    for method in ("mean", "heldout", "per_seed_oracle"):
        out = select_lr(frame, method)
        assert out["lr_selection"].nunique() == 1 and len(out) == 6
    mean = select_lr(frame, "mean").sort_values(["optimizer", "dim"])
    expected = _old_tuned(frame, ["optimizer"]).sort_values(["optimizer", "dim"])
    np.testing.assert_array_equal(mean["lr"], expected["lr"])
    np.testing.assert_array_equal(mean["error_mean"], expected["mean"])


def _old_superposition_best_lr(frame: pd.DataFrame) -> pd.DataFrame:
    ok = frame[frame["status"] != "failed"]
    means = ok.groupby(["heads", "optimizer", "lr"])["error"].mean().reset_index()
    best = means.loc[means.groupby(["heads", "optimizer"])["error"].idxmin()]
    return ok.merge(best[["heads", "optimizer", "lr"]], on=["heads", "optimizer", "lr"])


def _old_hierarchy_lr(group: pd.DataFrame) -> float:
    means = group.groupby("lr")["error"].mean()
    return float(means.sort_values(kind="stable").index[0])


@pytest.mark.parametrize("seed", range(5))
def test_study_selections_match_their_former_copies(seed):
    """The superposition study's idxmin and the hierarchy study's stable sort (ties: the
    smallest lr), on shuffled runs with many ties."""
    frame = _runs(seed).rename(columns={"dim": "heads"})
    pd.testing.assert_frame_equal(
        best_lr_rows(frame, ["heads", "optimizer"]), _old_superposition_best_lr(frame)
    )
    for _, group in frame.groupby(["heads", "optimizer"]):
        assert best_lr_rows(group, [])["lr"].iloc[0] == _old_hierarchy_lr(group)

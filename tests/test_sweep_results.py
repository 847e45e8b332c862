"""Reading results: DataFrames, aggregation over seeds, honest lr selection, exports, CLI."""

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from assocmem.cli import main
from assocmem.closed_form import run_closed_form
from assocmem.closed_form.config import config_from_mapping
from assocmem.config.errors import ConfigError
from assocmem.sweep.execute import run_sweep
from assocmem.sweep.results import aggregate, export, load_results, select_lr

SPEC = """
name = "results"
kind = "closed_form"
trials = 4
seeds = 2
[base]
n_inputs = 60
schemes = ["uniform", "empirical"]
dims = [4, 16]
n_samples = [10, "inf"]
"""


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("results")
    spec = folder / "spec.toml"
    spec.write_text(SPEC)
    path = folder / "r.db"
    run_sweep(spec, path)
    return path


def test_closed_form_rows_match_the_engine(db: Path) -> None:
    df = load_results(db)
    # 2 seeds × 4 trials × (uniform: 1 column + empirical: 2 sample sizes) × 2 dims
    assert len(df) == 2 * 4 * 3 * 2
    assert set(df["n_samples"]) == {10, math.inf}
    cfg = config_from_mapping(
        {"n_inputs": 60, "schemes": ["uniform", "empirical"], "dims": [4, 16],
         "n_samples": [10, "inf"], "seed": 1, "trials": 4}
    )  # fmt: skip
    direct = run_closed_form(cfg)
    for record in direct.records:
        t = math.inf if record["n_samples"] is None else record["n_samples"]
        cell = df[(df.seed == 1) & (df.scheme == record["scheme"]) & (df.dim == record["dim"])]
        cell = cell[cell.n_samples == t].sort_values("trial")
        assert np.array_equal(cell["error"].to_numpy(), np.array(record["errors"]))


def test_aggregate_over_seeds_and_trials(db: Path) -> None:
    df = load_results(db)
    agg = aggregate(df)
    assert len(agg) == 3 * 2 and set(agg["n"]) == {8}
    row = agg[(agg.scheme == "uniform") & (agg.dim == 16)].iloc[0]
    values = df[(df.scheme == "uniform") & (df.dim == 16)]["error"]
    assert row["error_mean"] == pytest.approx(values.mean())
    assert row["error_std"] == pytest.approx(values.std(ddof=1))
    assert row["error_sem"] == pytest.approx(values.std(ddof=1) / math.sqrt(8))
    assert "seed" not in agg.columns and "trial" not in agg.columns


def training_frame() -> pd.DataFrame:
    """Two lrs, four seeds: lr 1 is steady, lr 10 is lucky on even seeds only."""
    rows = []
    for lr, errors in ((1.0, [0.2, 0.2, 0.2, 0.2]), (10.0, [0.0, 0.5, 0.0, 0.5])):
        for seed, error in enumerate(errors):
            rows.append(
                {"kind": "train", "hash": f"{lr}-{seed}", "status": "ok", "model": "matrix",
                 "dim": 10, "lr": lr, "seed": seed, "error": error}
            )  # fmt: skip
    return pd.DataFrame(rows)


def test_lr_selection_is_honest_unless_the_oracle_is_asked_for() -> None:
    df = training_frame()
    mean = select_lr(df, "mean")
    assert mean["lr"].tolist() == [1.0] and mean["error_mean"].tolist() == [pytest.approx(0.2)]
    assert mean["lr_selection"].iloc[0].startswith("best lr of the seed-averaged")
    oracle = select_lr(df, "per_seed_oracle")
    assert oracle["error_mean"].tolist() == [pytest.approx(0.1)]  # optimistic
    assert "oracle" in oracle["lr_selection"].iloc[0]
    heldout = select_lr(df, "heldout", selection_seeds=[0, 2])  # lucky seeds pick lr 10 ...
    assert heldout["lr"].tolist() == [10.0]
    assert heldout["error_mean"].tolist() == [pytest.approx(0.5)]  # ... and the others show it
    assert heldout["n"].tolist() == [2]
    with pytest.raises(ConfigError):
        select_lr(df, "best_per_seed")
    with pytest.raises(ConfigError):
        select_lr(df, "heldout", selection_seeds=[0, 1, 2, 3])


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "json", "parquet"])
def test_export_round_trip(db: Path, tmp_path: Path, fmt: str) -> None:
    df = load_results(db)
    path = tmp_path / f"out.{fmt}"
    export(df, path, fmt)
    if fmt == "csv":
        back = pd.read_csv(path)
    elif fmt == "parquet":
        back = pd.read_parquet(path)
    else:
        back = pd.read_json(path, lines=fmt == "jsonl")
    assert len(back) == len(df)
    assert np.allclose(back["error"].to_numpy(), df["error"].to_numpy())


def test_cli_results_formats(db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sweep", "results", "--db", str(db), "--aggregate"]) == 0
    table = capsys.readouterr().out
    assert "error_mean" in table and "empirical" in table
    assert main(["sweep", "results", "--db", str(db), "--format", "json", "--aggregate"]) == 0
    records = json.loads(capsys.readouterr().out)
    assert len(records) == 6 and {"error_mean", "error_sem", "n"} <= set(records[0])
    assert main(["sweep", "results", "--db", str(db), "--format", "jsonl"]) == 0
    assert len(capsys.readouterr().out.strip().splitlines()) == 48
    out = tmp_path / "r.parquet"
    assert (
        main(["sweep", "results", "--db", str(db), "--format", "parquet", "--out", str(out)]) == 0
    )
    assert len(pd.read_parquet(out)) == 48


def test_cli_results_errors(tmp_path: Path, db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sweep", "results", "--db", str(tmp_path / "none.db")]) == 2
    assert "db: no results database" in capsys.readouterr().err
    assert not (tmp_path / "none.db").exists()
    assert main(["sweep", "results", "--db", str(db), "--format", "parquet"]) == 2
    assert "parquet output needs --out" in capsys.readouterr().err
    assert main(["sweep", "results", "--db", str(db), "--select-lr", "mean"]) == 2
    assert "needs runs with an lr" in capsys.readouterr().err


def test_cli_specs_lists_the_shipped_specs(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sweep", "specs"]) == 0
    out = capsys.readouterr().out
    assert "paper_training_grid" in out and "40320" in out and "figure4" in out

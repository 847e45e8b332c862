"""The run-kind registry: a database written before it resumes unchanged; a new kind plugs in
with one class and one ``register_kind`` call; the sweep modules dispatch on no kind name."""

import ast
import gzip
import json
import shutil
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import assocmem.sweep
from assocmem.cli import main
from assocmem.config.errors import ConfigError
from assocmem.sweep.execute import Hooks, run_sweep
from assocmem.sweep.kinds import RUN_KINDS, Outcome, RunKind, all_kinds, get_kind, register_kind
from assocmem.sweep.kinds.base import as_float, base_row, config_columns
from assocmem.sweep.plan import make_plan
from assocmem.sweep.results import load_curves, load_results
from assocmem.sweep.spec import SpecError, load_spec, parse_spec
from assocmem.sweep.store import read_rows
from assocmem.training.config import RENAMED

DATA = Path(__file__).parent / "data"
LEGACY_SPECS = ("legacy_closed_form", "legacy_train")


def legacy_copy(folder: Path) -> Path:
    """tests/data/legacy_sweeps.db: both legacy specs run by the code at commit 1b98223."""
    db = folder / "legacy.db"
    shutil.copyfile(DATA / "legacy_sweeps.db", db)
    return db


def table_rows(db: Path, table: str) -> list[tuple[Any, ...]]:
    with sqlite3.connect(db) as conn:
        return conn.execute(f"SELECT * FROM {table} ORDER BY 1").fetchall()


def test_a_database_written_before_the_registry_resumes_with_nothing_recomputed(
    tmp_path: Path,
) -> None:
    db = legacy_copy(tmp_path)
    runs, sweeps = table_rows(db, "runs"), table_rows(db, "sweeps")
    assert len(runs) == 12 + 16
    for name in LEGACY_SPECS:
        spec = load_spec(DATA / f"{name}.toml")
        stored = {r["hash"] for r in read_rows(db, sweep=spec.name)}
        assert {run.key for run in make_plan(spec).runs} == stored  # same identities
        report = run_sweep(spec, db)
        assert report.written == 0 and report.skipped == report.total_runs == len(stored)
    assert table_rows(db, "runs") == runs  # every stored record byte for byte
    assert table_rows(db, "sweeps") == sweeps


@pytest.mark.parametrize("frame", ["results", "curves"])
def test_a_database_written_before_the_registry_reads_back_the_same_tables(
    tmp_path: Path, frame: str
) -> None:
    """The result rows (and curves) equal those the code at 1b98223 gave, as JSON lines."""
    db = legacy_copy(tmp_path)
    df = load_results(db) if frame == "results" else load_curves(db)
    if frame == "results":  # closed-form records stored before samplers existed: explicit
        assert set(df.loc[df["kind"] == "closed_form", "sampler"]) == {"explicit"}
        df = df.drop(columns="sampler")
    text = df.to_json(orient="records", lines=True, double_precision=15)
    with gzip.open(DATA / f"legacy_{frame}.jsonl.gz", "rt") as handle:
        legacy = handle.read()
    assert _cells(text) == [
        {RENAMED.get(k, k): v for k, v in row.items()} for row in _cells(legacy)
    ]  # fields renamed since (TrainConfig's embeddings): the same values, under the new name
    assert "embeddings" not in text and "embeddings" in legacy


def _cells(lines: str) -> list[dict[str, Any]]:
    """Each JSON line's non-null cells (a renamed field's column merges with its new name's)."""
    return [
        {k: v for k, v in json.loads(line).items() if v is not None} for line in lines.splitlines()
    ]


@dataclass(frozen=True)
class CoinConfig:
    """A toy point: a coin of bias ``p`` thrown ``throws`` times; error = its exact variance."""

    p: float = 0.5
    throws: int = 10
    seed: int = 0
    device: str = "cpu"


class CoinKind(RunKind):
    """A kind defined outside the sweep package, as an experiment module would."""

    name = "test_coin"

    def build(self, values: Mapping[str, Any]) -> CoinConfig:
        unknown = sorted(set(values) - {"p", "throws", "seed", "device"})
        if unknown:
            raise ConfigError(unknown[0], "unknown key")
        config = CoinConfig(**values)
        if not 0 <= config.p <= 1:
            raise ConfigError("p", f"must be in [0, 1], got {config.p!r}")
        return config

    def execute(self, configs: Sequence[Any], trials: Sequence[int | None]) -> list[Outcome]:
        return [({"error": c.p * (1 - c.p) / c.throws}, "ok") for c in configs]

    def rows(self, row: Mapping[str, Any]) -> list[dict[str, Any]]:
        error = as_float((row["metrics"] or {}).get("error"))
        return [{**base_row(row), **config_columns(row), "error": error}]

    def work(self, config: Any) -> float:
        return float(config.throws)


@pytest.fixture
def coin() -> Iterator[RunKind]:
    kind = register_kind(CoinKind())
    yield kind
    del RUN_KINDS[kind.name]


def test_a_kind_registered_from_outside_runs_resumes_and_reads_back(
    coin: RunKind, tmp_path: Path
) -> None:
    spec = parse_spec(
        {"kind": "test_coin", "seeds": 2, "runs_per_batch": 3, "axes": {"p": [0.1, 0.5]}}
    )
    assert [len(b.runs) for b in make_plan(spec).batches] == [1, 1, 1, 1]  # one point a group
    db = tmp_path / "coin.db"
    assert run_sweep(spec, db).statuses == {"ok": 4}
    assert run_sweep(spec, db).written == 0
    df = load_results(db, kind="test_coin").sort_values(["p", "seed"])
    assert df["error"].tolist() == pytest.approx([0.009, 0.009, 0.025, 0.025])
    assert set(df["kind"]) == {"test_coin"} and load_curves(db).empty


def test_a_registered_kind_is_validated_and_named_in_errors(coin: RunKind) -> None:
    with pytest.raises(SpecError) as info:
        parse_spec({"kind": "test_coin", "trials": 2, "base": {"p": 2.0, "q": 1}})
    problems = sorted(p.split(":")[0] for p in info.value.problems)
    assert problems == ["base.p", "base.q", "trials"]
    every = ", ".join(all_kinds())  # the core's kinds, then the others in registration order
    assert every.startswith("closed_form, train, ") and "test_coin" in every.split(", ")
    assert "capacity" in every.split(", ")  # a study's kind (facts), found without naming it
    with pytest.raises(SpecError, match=f"must be one of {every}"):
        parse_spec({"kind": "nope"})
    assert get_kind("test_coin") is coin
    assert register_kind(CoinKind()) is coin  # the same class again: a no-op


def test_a_name_cannot_be_taken_by_another_class() -> None:
    class Impostor(CoinKind):
        name = "train"

    with pytest.raises(ValueError, match="already registered"):
        register_kind(Impostor())
    assert type(get_kind("train")).__name__ == "TrainKind"


def test_unknown_kinds_are_one_line_errors(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(ConfigError, match="kind: must be one of closed_form, train"):
        get_kind("bogus")
    db = legacy_copy(tmp_path)
    assert main(["sweep", "results", "--db", str(db), "--kind", "bogus"]) == 2
    assert "kind: must be one of closed_form, train" in capsys.readouterr().err


def string_constants(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
    }
    return {
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
        if id(node) not in docstrings
    }


def test_no_sweep_module_dispatches_on_a_kind_name() -> None:
    """Only the kinds' own modules spell their names; spec, plan, execute, results do not."""
    folder = Path(assocmem.sweep.__file__).parent
    modules = list(folder.glob("*.py"))
    assert {p.stem for p in modules} >= {"spec", "plan", "execute", "results", "store"}
    for path in modules:
        assert not string_constants(path) & set(RUN_KINDS), path.name


def test_planning_a_training_sweep_compiles_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    """A dry run plans (kernel choice, state sizes, cost) from the configs alone: it neither
    compiles nor even loads the compiled library."""
    from assocmem.training import native

    def no_library() -> None:
        raise AssertionError("planning loaded the compiled kernel")

    monkeypatch.setattr(native, "load", no_library)
    spec = tmp_path / "adam.toml"
    spec.write_text('kind = "train"\n[base]\noptimizer = "adam"\nmodel = "learned"\n')
    assert main(["sweep", "run", str(spec), "--db", str(tmp_path / "x.db"), "--dry-run"]) == 0
    assert "estimated_gflop" in capsys.readouterr().out


# The capacity kind: tiny searches (d ∈ {4, 6}; the trained memory with a 50-step budget).
CAPACITY_SPEC = """
name = "capacity-test"
kind = "capacity"
[base]
dims = [4, 6]
[axes]
n_outputs = ["N", 5]
[zip]
memory = ["hebbian", "trained"]
trials = [2, 1]
repeats = [2, 1]
max_steps = [1000, 50]
"""


def test_capacity_runs_through_the_sweep_resumes_and_equals_the_direct_search(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """``assocmem sweep run`` with a capacity spec: four searches, one run (and batch) each;
    running it again recomputes nothing and leaves the records byte for byte; the payloads the
    beyond-capacity study builds from the store equal a direct frontier_search call."""
    from assocmem.studies.facts.frontier_experiment import capacity_payloads
    from assocmem.studies.facts.frontier_search import hebbian_frontier, trained_frontier
    from assocmem.training.memorize import AdamSettings

    spec, db = tmp_path / "capacity.toml", tmp_path / "capacity.db"
    spec.write_text(CAPACITY_SPEC)
    assert main(["sweep", "run", str(spec), "--db", str(db)]) == 0
    assert "4 written (4 ok)" in capsys.readouterr().out
    stored = table_rows(db, "runs")
    assert len(stored) == len(make_plan(load_spec(spec)).batches) == 4
    report = run_sweep(spec, db)
    assert report.written == 0 and report.skipped == 4 and table_rows(db, "runs") == stored

    payloads = capacity_payloads(load_results(db, kind="capacity"))
    direct = []
    for memory in ("hebbian", "trained"):
        for outputs in (None, 5):
            if memory == "hebbian":
                points = hebbian_frontier([4, 6], n_outputs=outputs, trials=2, repeats=2)
            else:
                settings = AdamSettings(max_steps=50)
                points = trained_frontier(
                    [4, 6], n_outputs=outputs, trials=1, repeats=1, settings=settings
                )
            direct.append(
                {
                    "memory": memory,
                    "settings": {
                        "n_outputs": outputs,
                        "trials": 2 - (memory == "trained"),
                        "repeats": 2 - (memory == "trained"),
                    },  # fmt: skip
                    "points": [{"dim": p.dim, "n_star": list(p.n_star)} for p in points],
                }
            )
    assert payloads == direct


def test_a_killed_capacity_sweep_resumes_without_recomputing_finished_searches(
    tmp_path: Path,
) -> None:
    """Killed after its first search was committed, the sweep resumes with the other three:
    what was stored is kept as is, and the end state equals an uninterrupted sweep's."""
    spec = parse_spec({"kind": "capacity", "seeds": 2, "base": {"dims": [4, 8], "trials": 2},
                       "axes": {"n_outputs": ["N", 5]}})  # fmt: skip
    reference, db = tmp_path / "reference.db", tmp_path / "killed.db"
    run_sweep(spec, reference)

    class Killed(Exception):
        pass

    def kill(batch: Any) -> None:
        raise Killed

    with pytest.raises(Killed):
        run_sweep(spec, db, hooks=Hooks(after_commit=kill))
    first = table_rows(db, "runs")
    assert len(first) == 1
    report = run_sweep(spec, db)
    assert report.skipped == 1 and report.written == 3
    resumed = table_rows(db, "runs")
    assert first[0] in resumed
    metrics = {row[0]: row[4] for row in resumed}  # hash → stored metrics JSON
    assert metrics == {row[0]: row[4] for row in table_rows(reference, "runs")}


def test_capacity_configs_are_validated_field_by_field() -> None:
    from assocmem.studies.facts.frontier_kind import build_capacity

    bad = {
        "dims": [8, 4],
        "n_outputs": 1,
        "tau": 1.5,
        "trials": 0,
        "factor": 1.0,
        "colour": "red",
    }
    for field, value in bad.items():
        with pytest.raises(ConfigError) as info:
            build_capacity({"memory": "trained", field: value})
        assert info.value.field == field
    assert build_capacity({"memory": "hebbian", "lr": 0.5}).lr == 1.0  # no optimiser: ignored
    with pytest.raises(ConfigError, match="allowed: hebbian, trained"):
        build_capacity({"memory": "bogus"})
    cfg = build_capacity({"memory": "trained", "dims": [16], "n_outputs": "N", "lr": 0.5})
    assert (cfg.trials, cfg.repeats, cfg.n_outputs, cfg.dims) == (2, 3, None, (16,))


def test_capacity_defaults_are_those_of_the_searches() -> None:
    """REPLICATES and MEMORIES restate frontier_search's; they must not drift apart."""
    import inspect

    from assocmem.studies.facts import frontier_search as capacity
    from assocmem.studies.facts.frontier_kind import MEMORIES, REPLICATES

    assert MEMORIES == capacity.MEMORIES
    searches = {"hebbian": capacity.hebbian_frontier, "trained": capacity.trained_frontier}
    for memory, search in searches.items():
        parameters = inspect.signature(search).parameters
        defaults = (parameters["trials"].default, parameters["repeats"].default)
        assert REPLICATES[memory] == defaults

"""Sweep specs: validation of malformed specs (acceptance 4), the shipped specs, the plan."""

import hashlib
import shutil
from pathlib import Path

import pytest

from assocmem.cli import main
from assocmem.config.errors import ConfigError
from assocmem.sweep.execute import run_sweep
from assocmem.sweep.kinds import all_kinds
from assocmem.sweep.plan import Run, make_batches, make_plan, parse_shard, shard_batches
from assocmem.sweep.spec import SpecError, load_spec, parse_spec, shipped_specs
from assocmem.training.config import TrainConfig

KINDS = ", ".join(all_kinds())  # every registered kind (the studies' too), in order
WITH_TRIALS = ", ".join(name for name, kind in all_kinds().items() if kind.has_trials)

GOOD = """
name = "good"
kind = "closed_form"
trials = 2
[base]
n_inputs = 30
schemes = ["uniform"]
dims = [4, 8]
"""

CF = 'kind = "closed_form"\n'
TR = 'kind = "train"\n'

SOURCE = "<the spec file>"  # a problem of the whole file, named by its path

# (spec text, the one problem's location, the start of its message)
MALFORMED = [
    ("[base]\nn_inputs = 10\n", "kind", f"must be one of {KINDS}, got None"),
    ('kind = "bogus"\n', "kind", f"must be one of {KINDS}, got 'bogus'"),
    (CF + "colour = 3\n", "colour", "unknown key; allowed: name,"),
    (CF + "[base]\nalpha = -1.0\n", "base.alpha", "must be a finite number ≥ 0"),
    (CF + "[base]\nfoo = 1\n", "base.foo", "unknown key"),
    (CF + "[axes]\ndims = [10, -5]\n", "axes.dims[1]", "must be an integer ≥ 1"),
    (CF + "[axes]\nalpha = 2.0\n", "axes.alpha", "must be a non-empty list"),
    (CF + "[axes]\nalpha = []\n", "axes.alpha", "must be a non-empty list"),
    (TR + "[zip]\nlr = [1.0, 2.0]\nbatch_size = [16]\n", "zip", "lists must have equal lengths"),
    (CF + "seeds = 0\n", "seeds", "must be a count"),
    (CF + "seeds = [-1, 2]\n", "seeds[0]", "must be an integer ≥ 0"),
    (CF + "seeds = [1, 1]\n", "seeds", "seeds must be distinct"),
    (CF + "trials = 0\n", "trials", "must be an integer in 1"),
    (TR + "trials = 3\n", "trials", f"only {WITH_TRIALS} sweeps have trials"),
    (CF + "runs_per_batch = 0\n", "runs_per_batch", "must be an integer ≥ 1"),
    (CF + '[base]\nschemes = ["nope"]\n', "base.schemes", "unknown scheme"),
    (TR + '[axes]\noptimizer = ["sgd", "rmsprop"]\n', "axes.optimizer[1]", "unknown value"),
    (TR + "[base]\nn_samples = 64\n[axes]\nbatch_size = [16, 128]\n", "axes.batch_size[1]", "must"),
    (
        TR + "[axes]\nn_samples = [64, 1024]\nbatch_size = [16, 128]\n",
        "point (n_samples=64, batch_size=128)",
        "batch_size: must be ≤",
    ),
    (CF + "[base\nalpha = 2\n", "spec", "malformed TOML"),
    (CF + "base = 3\n", "base", "must be a table"),
    (CF + "[base]\nalpha = 2.0\n[axes]\nalpha = [1.0, 2.0]\n", "axes.alpha", "also set in [base]"),
    (CF + "seeds = 2\n[base]\nseed = 3\n", "seeds", "seed is also set"),
    (CF + 'name = ""\n', "name", "must be a non-empty string"),
    (TR + "[zip]\nlr = [0.0, 1.0]\ndim = [4, 8]\n", "zip.lr[0]", "must be a finite number > 0"),
    (CF + "[axes]\nalpha = [2, 2.0]\n", SOURCE, "two runs have the same config"),
    (CF + "[base]\ntrials = 5\n", "base.trials", "set trials at the top level"),
    (CF + '[base]\nn_samples = ["log:10:bad:3"]\n', "base.n_samples", "bad range"),
    (CF + "[base]\nn_inputs = 10000000\ndims = [10000]\n", "base.memory_gb", "this run needs"),
    (TR + '[base]\nbetas = "x"\n', "base.betas", "must be a list"),
    (TR + "[axes]\nlayer_norm = [false, 3]\n", "axes.layer_norm[1]", "must be true or false"),
]


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def template_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("template")
    spec = folder / "good.toml"
    spec.write_text(GOOD)
    db = folder / "results.db"
    run_sweep(spec, db)
    return db


@pytest.fixture
def existing_db(tmp_path: Path, template_db: Path) -> Path:
    (tmp_path / "good.toml").write_text(GOOD)
    db = tmp_path / "results.db"
    shutil.copyfile(template_db, db)
    return db


def problems_of(path: Path) -> list[tuple[str, str]]:
    """The (location, message) of each problem that planning the spec file reports."""
    try:
        make_plan(load_spec(path))
    except SpecError as err:
        return [(p.split(": ", 1)[0], p.split(": ", 1)[1]) for p in err.problems]
    except ConfigError as err:
        return [(SOURCE if err.field == str(path) else err.field, err.message)]
    return []


@pytest.mark.parametrize(
    ("text", "location", "message"), MALFORMED, ids=[f"{m[1]}:{m[2][:20]}" for m in MALFORMED]
)
def test_malformed_spec_one_line_exit_2_db_untouched(
    tmp_path: Path,
    existing_db: Path,
    capsys: pytest.CaptureFixture[str],
    text: str,
    location: str,
    message: str,
) -> None:
    spec = tmp_path / "bad.toml"
    spec.write_text(text)
    expected = f"{str(spec) if location == SOURCE else location}: {message}"
    before = sha(existing_db)
    files_before = sorted(p.name for p in tmp_path.iterdir())
    fresh = tmp_path / "fresh.db"
    for db in (existing_db, fresh):
        code = main(["sweep", "run", str(spec), "--db", str(db), "--quiet"])
        err = capsys.readouterr().err
        assert code == 2
        lines = err.strip().splitlines()
        assert len(lines) == 1, err
        assert lines[0].startswith("assocmem: error: ")
        assert expected in lines[0], lines[0]
    assert sha(existing_db) == before
    assert not fresh.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == files_before  # no -wal/-shm left either


def test_at_least_twenty_malformed_specs(tmp_path: Path) -> None:
    """Each malformed spec has exactly one problem, at the location and with the message
    expected; together they exercise at least twenty distinct locations."""
    for i, (text, location, message) in enumerate(MALFORMED):
        path = tmp_path / f"bad{i}.toml"
        path.write_text(text)
        problems = problems_of(path)
        assert len(problems) == 1, (text, problems)
        assert problems[0][0] == location, (text, problems)
        assert problems[0][1].startswith(message), (text, problems)
    assert len({location for _, location, _ in MALFORMED}) >= 20


def test_every_bad_field_of_base_is_reported() -> None:
    """A [base] with several bad fields names each of them, not only the first."""
    raw = {"kind": "closed_form", "base": {"alpha": -1.0, "n_inputs": 0, "foo": 1}}
    with pytest.raises(SpecError) as info:
        parse_spec(raw, source="s.toml")
    assert sorted(p.split(":")[0] for p in info.value.problems) == [
        "base.alpha",
        "base.foo",
        "base.n_inputs",
    ]
    raw = {"kind": "train", "base": {"dim": -1, "optimizer": "rmsprop", "layer_norm": 3}}
    with pytest.raises(SpecError) as info:
        parse_spec(raw, source="s.toml")
    assert sorted(p.split(":")[0] for p in info.value.problems) == [
        "base.dim",
        "base.layer_norm",
        "base.optimizer",
    ]


def test_a_field_set_aside_is_not_blamed_twice() -> None:
    """batch_size is rejected; without it the default 64 > n_samples = 32 names batch_size
    again, which is the same problem: one problem only, n_samples is not blamed."""
    raw = {"kind": "train", "base": {"n_samples": 32, "batch_size": "x"}}
    with pytest.raises(SpecError) as info:
        parse_spec(raw, source="s.toml")
    assert [p.split(":")[0] for p in info.value.problems] == ["base.batch_size"]


def test_every_problem_reported_at_once() -> None:
    raw = {
        "kind": "closed_form",
        "bogus": 1,
        "seeds": [-1],
        "base": {"alpha": -1.0},
        "axes": {"n_outputs": [5, "x"]},
    }
    with pytest.raises(SpecError) as info:
        parse_spec(raw, source="s.toml")
    message = str(info.value)
    assert message.startswith("s.toml: 3 problems: ")
    for piece in ("bogus: unknown key", "seeds[0]:", "base.alpha:"):
        assert piece in message
    assert "\n" not in message


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--shard", "3/2"], "shard: must be K/N"),
        (["--shard", "x"], "shard: must be K/N"),
        (["--workers", "2"], "--workers and --scheduler need --executor dask"),
        (["--executor", "dask", "--workers", "0"], "workers: must be an integer ≥ 1"),
    ],
)
def test_bad_run_options(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], expected: str
) -> None:
    spec = tmp_path / "good.toml"
    spec.write_text(GOOD)
    db = tmp_path / "x.db"
    assert main(["sweep", "run", str(spec), "--db", str(db), *argv]) == 2
    assert expected in capsys.readouterr().err
    assert not db.exists()


def test_missing_spec_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sweep", "run", str(tmp_path / "none.toml"), "--db", str(tmp_path / "x")]) == 2
    assert "not found" in capsys.readouterr().err


def test_shipped_specs_load_and_count() -> None:
    shipped = shipped_specs()
    assert {"figure1", "figure3", "figure4", "paper_training_grid"} <= set(shipped)
    for path in shipped.values():
        assert load_spec(path).n_runs > 0
    grid = load_spec("paper_training_grid")
    assert grid.kind == "train" and grid.n_runs == 40_320
    assert load_spec("figure4").n_runs == 100


def test_paper_grid_plan_structure() -> None:
    """The authors' grid: 40,320 distinct runs; a batch only varies seed, lr and T (the runs
    that differ only in T share a trajectory)."""
    plan = make_plan(load_spec("paper_training_grid"))
    assert len(plan.runs) == len({r.key for r in plan.runs}) == 40_320
    configs = [r.config for r in plan.runs]
    assert all(isinstance(c, TrainConfig) for c in configs)
    assert {(c.n_inputs, c.n_outputs, c.alpha) for c in configs} == {(100, 5, 2.0)}
    varied = ("seed", "lr", "n_samples")
    for batch in plan.batches[::50]:
        keys = {tuple(v for k, v in r.config.flat_values().items() if k not in varied)
                for r in batch.runs}  # fmt: skip
        assert len(keys) == 1
    assert len({(r.config.n_samples, r.config.dim) for r in plan.batches[0].runs}) == 3
    assert sum(len(b.runs) for b in plan.batches) == 40_320


def test_hash_is_stable_and_ignores_operational_fields() -> None:
    a = TrainConfig(alpha=2, lr=1)
    b = TrainConfig(alpha=2.0, lr=1.0)
    assert Run.make("train", a).key == Run.make("train", b).key
    assert Run.make("train", a).key != Run.make("train", a.with_(lr=2.0)).key
    assert Run.make("train", a).key != Run.make("train", a.with_(seed=1)).key
    spec = parse_spec({"kind": "closed_form", "trials": 3, "base": {"memory_gb": 1.0}})
    spec2 = parse_spec({"kind": "closed_form", "trials": 3, "base": {"memory_gb": 2.0}})
    keys = [r.key for r in make_plan(spec).runs]
    assert keys == [r.key for r in make_plan(spec2).runs]
    assert len(set(keys)) == 3


def test_batches_and_shards_partition_the_runs() -> None:
    spec = parse_spec(
        {"kind": "closed_form", "trials": 7, "runs_per_batch": 3, "axes": {"alpha": [1.5, 2.0]}}
    )
    plan = make_plan(spec)
    assert [len(b.runs) for b in plan.batches] == [3, 3, 1, 3, 3, 1]
    assert make_batches(plan.runs, 3) == plan.batches
    shards = [shard_batches(plan.batches, (k, 4)) for k in (1, 2, 3, 4)]
    keys = [r.key for shard in shards for b in shard for r in b.runs]
    assert sorted(keys) == sorted(r.key for r in plan.runs)
    assert parse_shard("2/4") == (2, 4)
    with pytest.raises(ConfigError):
        parse_shard("0/4")


def test_dry_run_prints_plan_and_writes_nothing(
    tmp_path: Path, existing_db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = tmp_path / "good.toml"
    db = tmp_path / "new.db"
    assert main(["sweep", "run", str(spec), "--db", str(db), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "pending_runs" in out and "estimated_gflop" in out
    assert not db.exists()
    before = sha(existing_db)
    assert main(["sweep", "run", str(spec), "--db", str(existing_db), "--dry-run"]) == 0
    assert "done" in capsys.readouterr().out
    assert sha(existing_db) == before


def test_the_defaults_table_of_the_two_setups_is_the_code():
    """docs/guide/sweeps.md lists the closed-form and training defaults side by side: every
    ``field = value`` it states is that configuration's default."""
    import ast
    import dataclasses
    import re
    from pathlib import Path

    from assocmem import ClosedFormConfig, TrainConfig

    text = (Path(__file__).resolve().parents[1] / "docs" / "guide" / "sweeps.md").read_text()
    table = text.split("## Two setups, two sets of defaults", 1)[1].split("\n## ", 1)[0]
    rows = [
        line.split("|")[2:4] for line in table.splitlines() if line.startswith("| ") and "`" in line
    ]
    checked = 0
    for config, cells in zip((ClosedFormConfig, TrainConfig), zip(*rows, strict=True), strict=True):
        defaults = {f.name: f.default for f in dataclasses.fields(config)}
        for cell in cells:
            for name, value in re.findall(r"`(\w+) = ([^`]+)`", cell):
                assert defaults[name] == ast.literal_eval(value), (config.__name__, name)
                checked += 1
    assert checked >= 16

"""``assocmem sweep``: run a TOML grid into a crash-safe SQLite database (resumable, local or on
Dask), and read the results back as tables, CSV, JSON lines or Parquet."""

import argparse
import math
import os
import sys
from pathlib import Path
from typing import Any

from assocmem.cli.common import (
    DEFAULT_MEMORY_GB,
    RawHelpFormatter,
    add_memory_argument,
    add_quiet_argument,
    format_table,
    int_at_least,
    print_json,
    show_progress,
)
from assocmem.config.errors import ConfigError
from assocmem.config.files import check_output_file

EPILOG_RUN = """\
SPEC is a TOML file or the name of a shipped spec (see `assocmem sweep specs`). Every input is
validated before the database is opened. Re-running the same command resumes: only runs missing
from the database are computed. Examples:
  assocmem sweep run figure4 --db fig4.db --dry-run
  assocmem sweep run figure4 --db fig4.db
  assocmem sweep run paper_training_grid --db grid.db --executor dask --workers 8
  assocmem sweep run paper_training_grid --db grid-$SLURM_ARRAY_TASK_ID.db --shard 3/500
"""

EPILOG_RESULTS = """\
Rows: one per training run, or one per (trial, scheme, d, T) for closed-form sweeps.
--aggregate averages over seeds and trials (mean, std, sem). --select-lr picks one learning
rate per point: mean (best lr of the seed-averaged error), heldout (chosen on half the seeds,
reported on the others), or per_seed_oracle (optimistic; only when asked for by name).
"""


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "sweep",
        help="grids of runs: a resumable results database, local or Dask execution",
        description="Declarative sweeps over closed-form or trained memories.",
    )
    commands = parser.add_subparsers(dest="sweep_command", required=True, metavar="COMMAND")
    _register_run(commands)
    _register_results(commands)
    _register_merge(commands)
    specs = commands.add_parser(
        "specs",
        help="list the specs shipped with the package",
        description="The sweep specs shipped with the package: name, run kind, runs, purpose.",
    )
    specs.add_argument(
        "--format",
        choices=("table", "json"),
        default="table",
        help="table: readable text (default); json: machine-readable records on stdout",
    )
    specs.set_defaults(handler=list_specs)


def _register_run(commands: Any) -> None:
    run = commands.add_parser(
        "run",
        help="run (or resume) a sweep into a database",
        description="Run every run of SPEC that the database does not hold yet.",
        epilog=EPILOG_RUN,
        formatter_class=RawHelpFormatter,
    )
    add = run.add_argument
    add("spec", metavar="SPEC", help="a sweep spec (TOML file or shipped name)")
    add("--db", required=True, metavar="FILE", help="the SQLite results database")
    add("--dry-run", action="store_true", help="print the plan (runs, batches, work); run nothing")
    add("--executor", choices=("local", "dask"), default="local", help="default local")
    add(
        "--workers",
        type=int_at_least(1),
        help="dask: start a local cluster with N worker processes",
    )
    add("--scheduler", metavar="ADDR", help="dask: an existing scheduler, e.g. tcp://host:8786")
    add("--shard", metavar="K/N", help="run only shard K of N (batches i with i mod N = K-1)")
    add("--retry-failed", action="store_true", help="run again the runs recorded as failed")
    add_memory_argument(run)
    add_quiet_argument(run)
    add("--format", choices=("table", "json"), default="table", help="summary format")
    run.set_defaults(handler=run_command)


def _register_results(commands: Any) -> None:
    results = commands.add_parser(
        "results",
        help="read a results database",
        description="Print or export the runs of a results database.",
        epilog=EPILOG_RESULTS,
        formatter_class=RawHelpFormatter,
    )
    add = results.add_argument
    add("--db", required=True, metavar="FILE", help="the SQLite results database")
    add("--sweep", help="only the runs of this sweep (its spec's name)")
    add("--kind", help="only runs of this kind (a run kind: closed_form, train, …)")
    add("--aggregate", action="store_true", help="mean, std, sem over seeds and trials")
    add("--select-lr", choices=("mean", "heldout", "per_seed_oracle"), help="one lr per point")
    add(
        "--format",
        choices=("table", "json", "csv", "jsonl", "parquet"),
        default="table",
        help="table (default), json, csv, jsonl (JSON lines), parquet (needs pyarrow)",
    )
    add("--out", metavar="FILE", help="write to FILE (required for parquet; else stdout)")
    results.set_defaults(handler=results_command)


def _register_merge(commands: Any) -> None:
    merge = commands.add_parser(
        "merge",
        help="merge shard databases into one",
        description="Copy every run of the SOURCE databases into TARGET (no duplicates), and "
        "the journals of runs still in progress (a run interrupted in a SOURCE resumes in "
        "TARGET).",
    )
    merge.add_argument("target", metavar="TARGET", help="database to merge into (created)")
    merge.add_argument("sources", nargs="+", metavar="SOURCE", help="databases to read")
    merge.add_argument(
        "--format",
        choices=("table", "json"),
        default="table",
        help="table: one line (default); json: the counts on stdout",
    )
    merge.set_defaults(handler=merge_command)


def run_command(args: argparse.Namespace) -> int:
    from assocmem.sweep.execute import check_executor, run_sweep
    from assocmem.sweep.plan import make_plan, parse_shard, summary
    from assocmem.sweep.spec import check_spec_memory, load_spec
    from assocmem.sweep.store import check_writable, done_keys_readonly, read_journals

    spec = load_spec(args.spec)
    shard = parse_shard(args.shard) if args.shard is not None else None
    check_executor(args.executor, args.workers, args.scheduler)
    check_spec_memory(spec, args.memory_gb or DEFAULT_MEMORY_GB)
    if not args.dry_run:
        check_writable(args.db)
    plan = make_plan(spec)
    if args.dry_run:
        info = summary(plan, done_keys_readonly(args.db), shard, read_journals(args.db))
        if args.format == "json":
            print_json(info)
        else:
            print(format_table(["plan", "value"], [[k, v] for k, v in info.items()]))
        return 0
    report = run_sweep(
        plan,
        args.db,
        executor=args.executor,
        workers=args.workers,
        scheduler=args.scheduler,
        shard=shard,
        retry_failed=args.retry_failed,
        progress=show_progress(args),
    )
    info = report.to_dict()
    if args.format == "json":
        print_json(info)
    else:
        statuses = ", ".join(f"{n} {s}" for s, n in sorted(report.statuses.items())) or "none"
        print(
            f"sweep {report.name}: {report.total_runs} runs, {report.skipped} already done, "
            f"{report.written} written ({statuses}) in {report.wall_seconds:.1f} s -> {args.db}"
        )
    return 0


def results_command(args: argparse.Namespace) -> int:
    from assocmem.sweep.kinds import get_kind
    from assocmem.sweep.results import aggregate, export, load_results, require_parquet, select_lr

    if args.kind is not None:
        get_kind(args.kind)  # an unknown kind: exit 2 naming the registered ones
    if args.format == "parquet":
        require_parquet()
        if not args.out:
            raise ConfigError("out", "parquet output needs --out FILE")
    if args.out:
        check_output_file("out", args.out)
    df = load_results(args.db, sweep=args.sweep, kind=args.kind)
    if args.select_lr:
        df = select_lr(df, args.select_lr)
    elif args.aggregate:
        df = aggregate(df)
    if args.format in ("csv", "jsonl", "parquet") or (args.format == "json" and args.out):
        export(df, args.out or sys.stdout, args.format)
    elif args.format == "json":
        print_json(df.to_dict(orient="records"))
    else:
        text = _table(df)
        if args.out:
            Path(args.out).write_text(text + "\n")
        else:
            _print(text)
    return 0


def _print(text: str) -> None:
    """Print, tolerating a closed pipe (``… | head``)."""
    try:
        print(text, flush=True)
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def _table(df: Any) -> str:
    """The columns that vary, then the metrics (a database holds many constant fields)."""
    if df.empty:
        return "(no runs)"
    shown = [
        c
        for c in df.columns
        if c in ("status", "error", "error_mean", "error_sem", "n", "lr_selection")
        or (c not in ("hash", "created", "message", "wall_seconds", "host", "git")
            and not c.endswith(("_std", "_sem", "_mean")) and _varies(df[c]))
    ]  # fmt: skip
    rows = [[_cell(v) for v in row] for row in df[shown].itertuples(index=False)]
    return format_table(shown, rows)


def _varies(column: Any) -> bool:
    return column.astype(str).nunique(dropna=False) > 1


def _cell(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return None
    return value.item() if hasattr(value, "item") else value


def merge_command(args: argparse.Namespace) -> int:
    from assocmem.sweep.store import merge

    merged = merge(args.target, args.sources)
    if args.format == "json":
        print_json(
            {"target": args.target, "sources": args.sources, "added": merged.runs,
             "journals": merged.journals}
        )  # fmt: skip
    else:
        n = merged.journals
        carried = {0: "", 1: "; 1 run in progress resumes there from its journal"}.get(
            n, f"; {n} runs in progress resume there from their journals"
        )
        print(f"merged {merged.runs} runs into {args.target}{carried}")
    return 0


def list_specs(args: argparse.Namespace) -> int:
    from assocmem.sweep.spec import load_spec, shipped_specs

    rows = []
    for name, path in sorted(shipped_specs().items()):
        spec = load_spec(path)
        rows.append([name, spec.kind, spec.n_runs, spec.description])
    if args.format == "json":
        keys = ["spec", "kind", "runs", "description"]
        print_json([dict(zip(keys, row, strict=True)) for row in rows])
    else:
        print(format_table(["spec", "kind", "runs", "description"], rows))
    return 0

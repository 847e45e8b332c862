"""``reproduce --only`` in a new folder, a report that keeps every result the folder holds, and
the closing summary (uses the two experiments that need no sweep: seconds)."""

import json
from pathlib import Path

from assocmem.cli import main


def test_only_items_add_to_one_report(tmp_path: Path, capsys):
    out = tmp_path / "new" / "nested"
    assert main(["reproduce", "--only", "memory", "--out", str(out), "--quiet"]) == 0
    summary = capsys.readouterr().out
    assert "figures: 1 written" in summary and f"report: {out / 'report.html'}" in summary
    assert "time: " in summary and "claims: none judged" in summary
    assert json.loads((out / "claims.json").read_text()) == []
    assert main(["reproduce", "--only", "6", "--out", str(out), "--quiet"]) == 0
    report = (out / "report.html").read_text()
    assert 'id="memory"' in report and 'id="figure-6"' in report  # the first run's too


def test_out_that_cannot_be_created_leaves_nothing(tmp_path: Path, capsys):
    (tmp_path / "a_file").write_text("x")
    code = main(["reproduce", "--only", "memory", "--out", str(tmp_path / "a_file" / "r")])
    assert code == 2 and capsys.readouterr().err.startswith("assocmem: error: out: ")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a_file"]

"""``assocmem reproduce``: figures and report from the store; a second run reuses every run."""

import json
import re
import sqlite3
import subprocess
import sys

import pytest
from test_report import CHROMIUM, chromium_probe

from assocmem.reproduce import reproduce


def _provenance(report_path):
    text = report_path.read_text()
    block = re.findall(r"<pre>(.*?)</pre>", text, re.S)[-1]
    return json.loads(block.replace("&quot;", '"'))


def _rows(db):
    with sqlite3.connect(db) as con:
        return con.execute("SELECT COUNT(*) FROM runs").fetchone()[0]


def test_reproduce_one_figure_then_reuse(tmp_path):
    path = reproduce(tmp_path, only=["4", "memory"])
    assert (tmp_path / "figures" / "figure-4.png").exists()
    assert (tmp_path / "figures" / "figure-4.svg").exists()
    first = _provenance(path)
    assert first["runs_written_now"] == first["runs_stored"] == 20  # one run per quick trial
    rows = _rows(tmp_path / "runs.db")
    again = _provenance(reproduce(tmp_path, only=["4", "memory"]))
    assert again["runs_written_now"] == 0 and _rows(tmp_path / "runs.db") == rows


def test_bad_only_item_is_rejected(tmp_path):
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "assocmem",
            "reproduce",
            "--out",
            str(tmp_path / "r"),
            "--only",
            "99",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1
    assert "--only" in proc.stderr and not (tmp_path / "r").exists()


@pytest.mark.slow
def test_quick_reproduction_in_a_browser(tmp_path):
    """The main job: every figure displays, every claim checked at quick scale passes."""
    path = reproduce(tmp_path, scale="quick")
    text = path.read_text()
    assert text.count('class="pass"') == 13 and 'class="fail"' not in text  # §4.1 not checked
    if CHROMIUM:
        probe = chromium_probe(path, tmp_path)
        assert len(probe["widths"]) == 7  # figures 1, 3, 4, memory, 6, 7, 8
        assert all(w > 0 for w in probe["widths"])
        assert probe["claims"] == 14

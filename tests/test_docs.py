"""The documentation keeps up with the code: one anchor per judged claim, skipped examples say
why, the CLI reference covers every command, the README stays short, and nothing points at a
file outside the project. (The examples themselves run through sybil: conftest.py.)"""

import importlib.util
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from assocmem.experiments.registry import EXPERIMENTS

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
CLAIMS_PAGE = DOCS / "science" / "claims.md"
PAGES = sorted([ROOT / "README.md", *DOCS.rglob("*.md")])


def claim_anchor(claim_id: str) -> str:
    """The anchor of a claim on docs/science/claims.md: "1" → "claim-1", "§4.4b" → "claim-4-4b"."""
    return "claim-" + claim_id.lstrip("§").replace(".", "-").lower()


def test_claim_anchor_spelling():
    assert claim_anchor("1") == "claim-1"
    assert claim_anchor("§4.4b") == "claim-4-4b"


def test_every_claim_has_one_anchor_and_every_anchor_a_claim():
    ids = [cid for e in EXPERIMENTS.values() for cid in e.claims]
    assert ids, "the experiment registry judges no claims"
    wanted = [claim_anchor(cid) for cid in ids]
    assert len(set(wanted)) == len(wanted), f"two claims share an anchor: {sorted(wanted)}"
    found = re.findall(r"\{#(claim-[\w-]+)\}", CLAIMS_PAGE.read_text(encoding="utf-8"))
    assert len(set(found)) == len(found), f"an anchor appears twice: {sorted(found)}"
    assert sorted(set(wanted) - set(found)) == [], "claims without an anchor on claims.md"
    assert sorted(set(found) - set(wanted)) == [], "anchors on claims.md for no judged claim"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_skipped_examples_say_why(page):
    """A skip marker is ``<!-- skip: next "reason" -->`` (sybil's syntax) with a real reason."""
    for line in page.read_text(encoding="utf-8").splitlines():
        if "<!-- skip" in line:
            assert re.fullmatch(r'\s*<!-- skip: next "[^"]{10,}" -->\s*', line), line


def test_cli_reference_renders_every_command():
    spec = importlib.util.spec_from_file_location(
        "cli_reference", DOCS / "hooks" / "cli_reference.py"
    )
    assert spec is not None and spec.loader is not None
    hook = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hook)
    page = hook.on_page_markdown(f"# CLI\n\n{hook.MARKER}\n")
    assert hook.MARKER not in page
    from assocmem.cli import build_parser

    (subcommands,) = [a for a in build_parser()._actions if a.dest == "command"]
    for name in subcommands.choices:  # every command, the studies' too
        assert f"## `assocmem {name}`" in page, name
    assert "`assocmem sweep run`" in page  # nested subcommands too
    assert page.count("```text") == page.count("usage: assocmem")


def test_readme_is_short():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 160, f"README.md has {len(lines)} lines; move details into docs/"


def test_no_reference_to_a_file_outside_the_project():
    """The science is cited as the paper's own numbering or our docs pages (the CI grep covers
    src/ as well)."""
    name = "PAPER" + ".md"  # spelt apart so that this file does not match itself
    roots = [ROOT / "README.md", DOCS, ROOT / "tests", ROOT / "benchmarks", ROOT / "examples"]
    roots.append(ROOT / "src" / "assocmem" / "specs")
    files = [f for r in roots for f in ([r] if r.is_file() else r.rglob("*")) if f.is_file()]
    hits = [
        str(f.relative_to(ROOT))
        for f in files
        if f.suffix in {".md", ".py", ".toml", ".txt"} and name in f.read_text(encoding="utf-8")
    ]
    assert hits == []


def test_a_broken_example_fails_the_tests():
    """A page whose python block and bash block both fail gives two failures and exit code 1
    (and a failure sybil cannot place, an unclosed file, is reported, not a crash)."""
    page = (
        "# broken\n\n```python\nassert 1 + 1 == 3, 'broken on purpose'\n```\n\n"
        "```bash\nassocmem closed-form --schemes no_such_scheme\n```\n\n"
        "```python\nopen('examples/figure1.toml')\n```\n\n```python\nprint('fine')\n```\n"
    )
    folder = Path(tempfile.mkdtemp(prefix="broken-docs-", dir=ROOT))  # under the root conftest
    try:
        (folder / "broken.md").write_text(page, encoding="utf-8")
        done = subprocess.run(
            [sys.executable, "-m", "pytest", str(folder), "-p", "no:cacheprovider"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=300,
        )
    finally:
        shutil.rmtree(folder)
    assert done.returncode == 1, done.stdout[-2000:] + done.stderr[-2000:]
    assert "3 failed, 1 passed" in done.stdout, done.stdout[-2000:]
    assert "INTERNALERROR" not in done.stdout + done.stderr

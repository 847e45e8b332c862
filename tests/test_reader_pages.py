"""The pages speak to the reader, not to us: the docs (their Markdown and the built site), a quick
report, every command's ``--help`` and the claims' revision reasons name no issue, criterion,
commit or session, and cite no library source file as a reason or a reference.

Allowed to name source files: the architecture page and the API reference (they describe the
code, module by module) and the tutorials that add code to the package (``tutorials/add-*``: they
name the file to write); the report's provenance names the commit it ran. Tests and benchmarks
are programs a reader runs, so ``tests/…py`` and ``benchmarks/…py`` may be named anywhere.
"""

import argparse
import html
import re
from pathlib import Path

import pytest
from cli_parsers import leaf_commands
from test_docs_site import site  # noqa: F401  (the built site, a fixture)

from assocmem.cli import build_parser
from assocmem.experiments.reproduce import reproduce
from assocmem.experiments.tolerances import retired_claims, tolerance_tables

ROOT = Path(__file__).resolve().parent.parent
# Our notebook: an issue or a criterion by number, "the issue", a session, a commit's hash.
NOTEBOOK = re.compile(
    r"\bissues?\s*#?\d+|(?<![\w&])#\d{2,}\b|\b(?:the|this|that|an|our|its)\s+issues?\b"
    r"|\bissue's|\bcriteri(?:on|a)\s+\d|\bsessions?\b|\bcommits?\s+[0-9a-f]{7}",
    re.IGNORECASE,
)
COMMIT = re.compile(r"(?<![\w.#-])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}(?![\w-])")
# A library source file (``predict.py``, ``analysis/large_m.py``), not a test or a benchmark.
SOURCE_FILE = re.compile(r"(?<![\w/.-])(?!tests/|benchmarks/|test_|conftest)[\w/.-]*\w\.py\b")
PENDING: set[str] = set()  # pages whose references a change in flight rewrites (none now)
CODE_PAGES = re.compile(r"^(architecture|api/|tutorials/add-)")  # may name source files


def notebook_references(text: str, source_files: bool = True) -> list[str]:
    """Every reference to our notebook in ``text`` (with a little context), empty if none."""
    patterns = [NOTEBOOK, COMMIT] + ([SOURCE_FILE] if source_files else [])
    found = []
    for pattern in patterns:
        for match in pattern.finditer(text):
            start, end = max(match.start() - 30, 0), match.end() + 30
            found.append(" ".join(text[start:end].split()))
    return found


def visible_text(page: str) -> str:
    """The text of an HTML page as a reader sees it: no scripts, styles or tags."""
    page = re.sub(r"<(script|style)\b.*?</\1>", " ", page, flags=re.S | re.I)
    return html.unescape(re.sub(r"<[^>]+>", " ", page))


def page_problems(name: str, text: str) -> list[str]:
    """The notebook references of one page, under the page allow-list (``name``: its path)."""
    return notebook_references(text, source_files=not CODE_PAGES.match(name))


def assert_clean(found: dict[str, list[str]]) -> None:
    """No page of ``found`` (name → its references) holds a reference, but those pending."""
    assert {name: refs for name, refs in found.items() if refs and name not in PENDING} == {}
    assert [name for name, refs in found.items() if name in PENDING and not refs] == []


def test_each_kind_of_reference_is_found():
    """The check can fail: each kind of reference planted in reader's text is found."""
    clean = (
        "The threshold memory's slope is −1 (Theorem 1 criterion, 2 s.e.); run "
        "`python benchmarks/closed_form.py` or `pytest tests/test_theory.py::test_claim6`; "
        "the colour #1f77b4 and the hash of a config are not commits, nor is 10000000."
    )
    assert notebook_references(clean) == []
    planted = [
        "as issue 35 asks",
        "(issue #37, criterion 1)",
        "see #54",
        "The issue's target of 30×",
        "the records of db54d2a",
        "before this session's kernels",
        "predict.py's theory gives",
        "the quadrature (analysis/large_m.py)",
    ]
    for text in planted:
        assert notebook_references(f"A sentence: {text}, and more."), text
    assert page_problems("api/closed_form/index.html", "src/assocmem/closed_form/kernel.py") == []
    assert page_problems("api/closed_form/index.html", planted[0])  # an issue, even there
    assert page_problems("tutorials/add-scheme/index.html", "src/assocmem/schemes/capped.py") == []
    assert page_problems("tutorials/add-scheme/index.html", planted[5])
    assert page_problems("guide/theory/index.html", planted[6])


def test_markdown_sources_speak_to_the_reader():
    """The README and every docs page as written (the fast tier's view of the site)."""
    pages = {"README.md": ROOT / "README.md"}
    pages |= {str(p.relative_to(ROOT / "docs")): p for p in (ROOT / "docs").rglob("*.md")}
    found = {name: page_problems(name, p.read_text(encoding="utf-8")) for name, p in pages.items()}
    assert_clean(found)


def _parsers(parser: argparse.ArgumentParser):
    yield parser
    for action in parser._actions:  # argparse keeps subparsers only here
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                yield from _parsers(sub)


def test_every_commands_help_speaks_to_the_reader():
    helps = {parser.prog: parser.format_help() for parser in _parsers(build_parser())}
    assert len(helps) > len(leaf_commands())  # the top command and `sweep` too
    found = {prog: notebook_references(text) for prog, text in helps.items()}
    assert_clean(found)


def test_claims_revision_reasons_speak_to_the_reader():
    """What the report shows of each tolerance's history, and the retired claims' reasons."""
    reasons = {
        f"{cid} revised {rev.date}": rev.reason
        for cid, table in tolerance_tables().items()
        for rev in table.revisions
    }
    reasons |= {f"{cid} retired": r.reason for cid, r in retired_claims().items()}
    assert len(reasons) > 20
    found = {key: notebook_references(text) for key, text in reasons.items()}
    assert_clean(found)


def report_problems(report: Path) -> list[str]:
    """The notebook references of a report, its provenance (the commit it ran) left out."""
    page = report.read_text(encoding="utf-8").split("<h2>Provenance</h2>")[0]
    return notebook_references(visible_text(page))


def test_a_report_speaks_to_the_reader(tmp_path):
    """Figure 4 and its four claims at the quick scale, as the report shows them."""
    done = reproduce(tmp_path, only=["4"])
    assert [c.id for c in done.claims] == ["1", "2", "3", "4"]
    assert report_problems(done.report) == []
    planted = done.report.read_text(encoding="utf-8").replace("</h1>", " (issue 54)</h1>")
    (tmp_path / "planted.html").write_text(planted, encoding="utf-8")
    assert report_problems(tmp_path / "planted.html")


@pytest.mark.slow
def test_the_built_site_speaks_to_the_reader(site):  # noqa: F811
    pages = {str(p.relative_to(site)): p for p in site.rglob("*.html")}
    assert len(pages) > 40
    found = {name: page_problems(name, visible_text(p.read_text())) for name, p in pages.items()}
    assert_clean(found)

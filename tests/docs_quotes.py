"""Shared by the tests of the docs' numbers: the table of ``benchmarks/docs_numbers.py`` and its
:class:`Quote` (a sentence as on its page, the checked numbers marked ⟦…⟧, one measure per marked
number), and a check that every quote of a list stands on its page and matches its measures."""

import importlib.util
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def _benchmark() -> Any:
    path = ROOT / "benchmarks" / "docs_numbers.py"
    spec = importlib.util.spec_from_file_location("docs_numbers", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["docs_numbers"] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


DN = _benchmark()
Q = DN.Quote


def flat(text: str) -> str:
    """Whitespace collapsed: a sentence may wrap anywhere on its page."""
    return " ".join(text.split())


def page_text(page: str) -> str:
    return flat((ROOT / page).read_text(encoding="utf-8"))


def assert_all_ok(measures: Any, quotes: list[Any]) -> None:
    for quote in quotes:
        assert flat(quote.plain) in page_text(quote.page), f"{quote.page}: {quote.plain!r}"
    allowed = {"ok", "in law", DN.OTHER_VENDOR}  # another vendor's draw: not measured here
    bad = [c for c in DN.check(measures, quotes) if c.status not in allowed]
    assert not bad, "\n".join(
        f"{c.page}: stated {c.stated}, measured {c.measured:.6g} ({c.what})" for c in bad
    )

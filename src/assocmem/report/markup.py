"""The report's HTML pieces shared by its parts: escaped text and tables."""

import html
from collections.abc import Sequence
from typing import Any


def esc(value: Any) -> str:
    return html.escape(str(value))


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]], table_id: str = "") -> str:
    """An HTML table of already escaped cells; no header row when ``headers`` is empty."""
    head = "".join(f"<th>{esc(h)}</th>" for h in headers)
    thead = f"<thead><tr>{head}</tr></thead>" if headers else ""
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    ident = f' id="{esc(table_id)}"' if table_id else ""
    return f"<table{ident}>{thead}<tbody>{body}</tbody></table>"

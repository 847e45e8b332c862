"""The report's provenance: a small table of what ran where (the commit included), and the same
as JSON, folded, for programs."""

import json
from typing import Any

from assocmem.report.markup import esc, table

PROVENANCE_NAMES = {
    "scale": "scale",
    "seed": "seed",
    "database": "runs database",
    "runs_stored": "runs stored",
    "runs_written_now": "runs computed by this call",
    "statuses_now": "their statuses",
    "compute_seconds_stored": "compute time of the stored runs (s)",
    "hosts": "hosts of the stored runs",
    "assocmem": "assocmem",
    "git": "git commit",
    "torch": "torch",
    "python": "python",
    "device": "device",
    "host": "this host",
    "wall_seconds_this_invocation": "wall time of this call (s)",
}


def _shown(value: Any) -> str:
    """A provenance value in a cell: numbers rounded, lists and mappings as short text."""
    if isinstance(value, float):
        return f"{value:.1f}" if abs(value) >= 1 else f"{value:.3g}"
    if isinstance(value, dict):
        return ", ".join(f"{k}: {_shown(v)}" for k, v in value.items()) or "none"
    if isinstance(value, (list, tuple)):
        return ", ".join(_shown(v) for v in value) or "none"
    return str(value)


def provenance_html(provenance: dict[str, Any]) -> str:
    """The provenance as a small table, and as JSON (folded) for programs."""
    rows = [[esc(PROVENANCE_NAMES.get(k, k)), esc(_shown(v))] for k, v in provenance.items()]
    raw = esc(json.dumps(provenance, indent=1, default=str))
    return (
        table([], rows, table_id="provenance")
        + f"<details><summary>as JSON</summary><pre>{raw}</pre></details>"
    )

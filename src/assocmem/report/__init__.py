"""A self-contained HTML report: figures (embedded PNG), captions, settings, the claims checklist,
theory-vs-measured tables and the provenance of the runs. No network, no external files."""

import base64
import io
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from matplotlib.figure import Figure

from assocmem.report.captions import caption_html
from assocmem.report.markup import esc, table
from assocmem.report.provenance import provenance_html

# Re-exported (``as``): the CLI and the studies read these names from here.
from assocmem.report.quantities import format_measured as format_measured
from assocmem.report.quantities import json_number, quantity_text
from assocmem.report.quantities import quantity_name as quantity_name
from assocmem.report.quantities import unit_of as unit_of


@dataclass
class FigureEntry:
    """One figure of the report: an embedded PNG with its caption and the settings that made it."""

    key: str  # anchor and file stem, e.g. "figure-4"
    title: str
    caption: str
    settings: dict[str, Any]
    png: bytes

    @classmethod
    def from_figure(
        cls, key: str, title: str, caption: str, settings: dict[str, Any], fig: Figure
    ) -> "FigureEntry":
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
        return cls(key, title, caption, settings, buffer.getvalue())


Measured = dict[str, float]
FRAGILE = 2.0  # a claim whose statistic lies less than this many s.e. inside its tolerance
# The verdicts: within the tolerance; outside it but inside the quick scale's widened band; out.
PASS, NOT_REFUTED, FAIL, NOT_JUDGED = "pass", "not refuted at this scale", "FAIL", "not judged"
DETECTABLE_SE = 2.8  # s.e. of a difference detected with 80 % power by a 5 % two-sided test


@dataclass
class Claim:
    """One checkable claim of an experiment, measured and judged.

    Attributes
    ----------
    id : str
        Unique across experiments: ``"1"`` … ``"8"`` for the closed-form claims, ``"§4.1"`` …
        for the optimisation findings (see the docs: science/claims.md).
    statement : str
        What the claim says.
    measured : dict
        The measured numbers, by name.
    passed : bool or None
        Whether the claim stands at this scale; None when not judged at this scale (``note``
        says why). At the quick scale a claim stands within its tolerance widened by
        ``quick_z`` s.e.; where it stands only thanks to that widening, ``in_band`` is set and
        :attr:`verdict` reads "not refuted at this scale", counted apart from passes.
    tolerance : str
        What passes.
    figure : str
        The experiment that judges it (``"figure-4"``), set by the registry.
    note : str
    tolerance_since : str
        The date (ISO) its tolerance was set, from its spec's ``[claims.ID]`` table ("" if none).
    revisions : list of dict
        The changes of its tolerance, oldest first: ``date``, ``old`` (the values before) and
        ``reason``.
    margin_se : float or None
        How far its statistic lies inside its tolerance, in standard errors of that statistic
        (negative outside; an ordering: its smallest gap; several parts: the smallest margin).
        None for a deterministic statistic or one not measured this way (``margin_note`` says
        which). Under :data:`FRAGILE` the report calls a claim fragile.
    margin_note : str
    detectable : float or None
        For a claim of no effect: the effect it would detect with 80 % power at this scale
        (2.8 s.e. of the difference); None otherwise.
    paper : dict
        The paper's value of a measured quantity, by the same name, where it states one.
    units : dict
        The unit of a measured quantity, by name, where :func:`unit_of` would not read it
        right from the name ("" for a pure number).
    in_band : bool
        At the quick scale: its statistic lies outside the tolerance as stated, inside the
        band the quick scale widens it to (negative ``margin_se``, at least ``−quick_z``).
    """

    id: str
    statement: str
    measured: Measured = field(default_factory=dict)
    passed: bool | None = False
    tolerance: str = ""
    figure: str = ""
    note: str = ""
    tolerance_since: str = ""
    revisions: list[dict[str, Any]] = field(default_factory=list)
    margin_se: float | None = None
    margin_note: str = ""
    detectable: float | None = None
    paper: Measured = field(default_factory=dict)
    units: dict[str, str] = field(default_factory=dict)
    in_band: bool = False

    @property
    def verdict(self) -> str:
        """ "pass" (within its tolerance), "not refuted at this scale" (outside it, inside the
        quick scale's band), "FAIL" or "not judged"."""
        if self.passed is None:
            return NOT_JUDGED
        if not self.passed:
            return FAIL
        return NOT_REFUTED if self.in_band else PASS

    def unit(self, key: str) -> str:
        """The unit of the measured quantity ``key`` ("" for a pure number)."""
        return self.units.get(key, unit_of(key))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (non-finite measured values as the strings "inf", "-inf", "nan")."""
        return {
            "id": self.id,
            "figure": self.figure,
            "statement": self.statement,
            "measured": {k: json_number(v) for k, v in self.measured.items()},
            "tolerance": self.tolerance,
            # numpy bools too; a claim only not refuted at the quick scale is no pass
            "passed": None if self.passed is None else bool(self.passed) and not self.in_band,
            "verdict": self.verdict,
            "note": self.note,
            "tolerance_since": self.tolerance_since,
            "revisions": self.revisions,
            "margin_se": None if self.margin_se is None else json_number(self.margin_se),
            "margin_note": self.margin_note,
            "detectable": None if self.detectable is None else json_number(self.detectable),
            "paper": {k: json_number(v) for k, v in self.paper.items()},
            "units": {k: self.unit(k) for k in self.measured if self.unit(k)},
        }


def measured_text(claim: "Claim") -> str:
    """The measured quantities by name and unit, with the paper's value beside ours where it has
    one."""
    parts = []
    for key, value in claim.measured.items():
        unit = claim.unit(key)
        text = f"{quantity_name(key)} = {quantity_text(value, unit)}"
        if key in claim.paper:
            text += f" (paper {quantity_text(claim.paper[key], unit)})"
        parts.append(text)
    return "; ".join(parts)


@dataclass
class Table:
    title: str
    headers: list[str]
    rows: list[list[Any]]
    note: str = ""


@dataclass
class Report:
    title: str
    subtitle: str = ""
    intro: str = ""  # the opening paragraph: what is judged, at which scale
    figures: list[FigureEntry] = field(default_factory=list)
    claims: list[Claim] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    provenance: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    titles: dict[str, str] = field(default_factory=dict)  # experiment name → its title


STYLE = """
body { font-family: sans-serif; max-width: 1100px; margin: 2em auto; color: #222; }
h1 { margin-bottom: 0.2em; } .subtitle { color: #555; margin-top: 0; }
figure { margin: 2em 0; border-top: 1px solid #ddd; padding-top: 1em; }
figure img { max-width: 100%; } figcaption { margin-top: 0.5em; }
table { border-collapse: collapse; margin: 1em 0; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.3em 0.6em; text-align: left; vertical-align: top; }
th { background: #f3f3f3; } .pass { color: #176e2c; font-weight: bold; }
.fail { color: #b00020; font-weight: bold; } .skip { color: #777; }
.band { color: #8a5a00; font-weight: bold; }
.intro, .legend { max-width: 60em; line-height: 1.45; } .legend { font-size: 0.9em; color: #333; }
img.math { vertical-align: middle; } abbr { cursor: help; }
details pre { background: #f7f7f7; padding: 0.5em; overflow-x: auto; font-size: 0.85em; }
nav a { margin-right: 1em; }
"""


def _verdict(claim: Claim) -> str:
    css = {PASS: "pass", NOT_REFUTED: "band", FAIL: "fail", NOT_JUDGED: "skip"}[claim.verdict]
    text = "not checked" if claim.verdict == NOT_JUDGED else claim.verdict
    return f'<span class="{css}">{text}</span>'


def verdict_counts(claims: list[Claim]) -> str:
    """ "P of C checked pass" (C: the claims judged at this scale), with the claims only not
    refuted at this scale counted apart and named, and the failing named."""
    checked = [c for c in claims if c.passed is not None]
    text = f"{sum(c.verdict == PASS for c in checked)} of {len(checked)} checked pass"
    for verdict, label in ((NOT_REFUTED, NOT_REFUTED), (FAIL, "failing")):
        ids = [c.id for c in checked if c.verdict == verdict]
        if ids:
            text += f"; {label}: {', '.join(ids)}"
    return text


def _figure(entry: FigureEntry) -> str:
    data = base64.b64encode(entry.png).decode()
    settings = esc(json.dumps(entry.settings, indent=1, default=str))
    return (
        f'<figure id="{esc(entry.key)}"><h2>{esc(entry.title)}</h2>'
        f'<img alt="{esc(entry.title)}" src="data:image/png;base64,{data}">'
        f"<figcaption>{caption_html(entry.caption)}</figcaption>"
        f"<details><summary>settings</summary><pre>{settings}</pre></details></figure>"
    )


def _claim_row(claim: Claim, anchors: set[str], titles: dict[str, str]) -> list[str]:
    """The claim's cells; its figure links to the figure when the report holds it, and an
    experiment without a figure here is named by its title ("Weightings q = p^ρ (no figure)")."""
    figure = esc(claim.figure)
    if claim.figure in anchors:
        figure = f'<a href="#{figure}">{figure}</a>'
    elif claim.figure in titles:
        figure = f"{esc(titles[claim.figure])} (no figure)"
    return [
        esc(claim.id),
        figure,
        esc(claim.statement),
        esc(measured_text(claim)),
        _tolerance_cell(claim),
        _margin_cell(claim),
        _verdict(claim),
        esc(claim.note),
    ]


def margin_text(claim: Claim) -> str:
    """How safely a claim passes: its margin in s.e. ("fragile" under :data:`FRAGILE`), what a
    claim of no effect would have detected, or why there is no margin."""
    if claim.margin_se is None:
        return claim.margin_note or "—"
    text = f"{claim.margin_se:.3g} s.e."
    if claim.verdict == PASS and claim.margin_se < FRAGILE:
        text = f"fragile: {text}"
    if claim.detectable is not None and claim.verdict == PASS:
        text = f"no difference detected (would detect ≥ {claim.detectable:.3g}); {text}"
    return text + (f" ({claim.margin_note})" if claim.margin_note else "")


FRAGILE_MEANS = (
    f"fragile: within its tolerance, but by less than {FRAGILE:g} standard errors of its "
    "statistic, so a rerun with other seeds could well land outside it"
)
MARGIN_MEANS = (
    "margin: how far the measured statistic lies inside its tolerance, in standard errors of "
    "that statistic (negative: outside)"
)


def _margin_cell(claim: Claim) -> str:
    """:func:`margin_text`, its "fragile" explained where it stands (a tooltip)."""
    text = esc(margin_text(claim))
    if text.startswith("fragile"):
        text = f'<abbr title="{esc(FRAGILE_MEANS)}">fragile</abbr>' + text[len("fragile") :]
    return text


def revision_headline(reason: str) -> str:
    """What a revision did, in a few words: its reason's first clause (up to a colon, a full
    stop or, when that is long, a comma)."""
    head = reason.split(":")[0].split(". ")[0]
    head = head if len(head) <= 80 else head.split(",")[0]
    return head if len(head) <= 80 else "see why"


def _tolerance_cell(claim: Claim) -> str:
    """The tolerance, the date it was set and each revision (date, what it did; folded: the
    values before and why)."""
    cell = esc(claim.tolerance)
    if claim.tolerance_since:
        cell += f"<br><small>set {esc(claim.tolerance_since)}</small>"
    for rev in claim.revisions:
        old = ", ".join(f"{k} = {v}" for k, v in rev["old"].items())
        cell += (
            f"<details><summary>revised {esc(rev['date'])}: "
            f"{esc(revision_headline(rev['reason']))}</summary>was: {esc(old)}<br>"
            f"{esc(rev['reason'])}</details>"
        )
    return cell


CODE = re.compile(r"`([^`]+)`")  # a command in the opening paragraph

LEGEND = (
    f"<b>margin</b>: {MARGIN_MEANS.split(': ', 1)[1]}. "
    f"<b>fragile</b>: {FRAGILE_MEANS.split(': ', 1)[1]}. "
    "<b>pass</b>: within the tolerance; <b>not refuted at this scale</b>: outside the "
    "tolerance but inside the band the quick scale widens it by (not counted as a pass); "
    "<b>FAIL</b>: outside both; <b>not checked</b>: shown, not judged at this scale (the note "
    "says why). Errors and other probabilities are in percent."
)


def render_html(report: Report) -> str:
    """The report as one HTML string with every image embedded."""
    nav = "".join(f'<a href="#{esc(f.key)}">{esc(f.title)}</a>' for f in report.figures)
    claims = table(
        ["claim", "figure", "statement", "measured", "tolerance", "margin", "result", "note"],
        [_claim_row(c, {f.key for f in report.figures}, report.titles) for c in report.claims],
        table_id="claims",
    )
    tables = "".join(
        f"<h2>{esc(t.title)}</h2>{table(t.headers, [[esc(c) for c in r] for r in t.rows])}"
        + (f"<p>{esc(t.note)}</p>" if t.note else "")
        for t in report.tables
    )
    notes = "".join(f"<li>{esc(n)}</li>" for n in report.notes)
    provenance = provenance_html(report.provenance)
    intro = CODE.sub(r"<code>\1</code>", esc(report.intro))
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        f"<title>{esc(report.title)}</title>"
        f"<style>{STYLE}</style></head><body><h1>{esc(report.title)}</h1>"
        f"<p class='subtitle'>{esc(report.subtitle)}</p>"
        + (f"<p class='intro'>{intro}</p>" if report.intro else "")
        + f"<nav>{nav}</nav>"
        + (
            f"<h2>Claims ({esc(verdict_counts(report.claims))})</h2>{claims}"
            f"<p class='legend'>{LEGEND}</p>"
            if report.claims
            else ""
        )
        + f"{tables}{''.join(_figure(f) for f in report.figures)}"
        + (f"<h2>Notes</h2><ul>{notes}</ul>" if notes else "")
        + f"<h2>Provenance</h2>{provenance}</body></html>"
    )


def write_report(report: Report, path: str | Path) -> Path:
    """Write ``report.html`` atomically (a temporary file renamed into place)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".html.tmp")
    tmp.write_text(render_html(report), encoding="utf-8")
    tmp.replace(path)
    return path

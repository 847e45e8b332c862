"""The HTML report is self-contained and renders in a real browser (headless Chromium)."""

import json
import os
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest

from assocmem.closed_form import run_closed_form
from assocmem.closed_form.config import ClosedFormConfig
from assocmem.figures import figure4
from assocmem.report import (
    Claim,
    FigureEntry,
    Report,
    Table,
    margin_text,
    measured_text,
    render_html,
    write_report,
)
from assocmem.report.quantities import quantity_name

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
BROWSER_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]


class _Images(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.sources: list[str] = []
        self.links: list[str] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "img":
            self.sources.append(attrs.get("src", ""))
        if attrs.get("href"):
            self.links.append(attrs["href"])


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    result = run_closed_form(ClosedFormConfig(n_inputs=100, dims=(10, 30, 100), trials=3))
    fig = figure4(result.to_frame())
    report = Report(
        title="assocmem test report",
        subtitle="two figures & a <claims> table",
        intro="What is judged, at which scale.",
        figures=[
            FigureEntry.from_figure(
                "figure-4", "Figure 4", r"error vs d; dashed: $0.35\,d^{-1/4}$", {"trials": 3}, fig
            ),
            FigureEntry.from_figure("figure-4b", "Figure 4 again", "same", {"n": 100}, fig),
        ],
        claims=[
            Claim("1", "slope −1", {"slope": -1.02}, True, figure="figure-4", margin_se=0.6),
            Claim("2", "q = p slope", {"slope": -0.1}, False, figure="figure-9"),
            Claim("6", "finite-data sum", {}, None, note="needs N = 10⁶"),
        ],
        tables=[Table("Table 1", ["scheme", "theory", "measured"], [["threshold", -1.0, -1.02]])],
        provenance={"assocmem": "test"},
    )
    return write_report(report, tmp_path_factory.mktemp("report") / "report.html")


def test_report_is_self_contained(report):
    text = report.read_text()
    parser = _Images()
    parser.feed(text)
    assert len(parser.sources) == 3  # two figures and one formula of a caption
    assert sum(src.startswith("data:image/png;base64,") for src in parser.sources) == 2
    assert sum(src.startswith("data:image/svg+xml;base64,") for src in parser.sources) == 1
    assert all(link.startswith("#") for link in parser.links)  # only in-page anchors
    assert not re.search(r"(src|href)=['\"]?(https?:)?//", text)
    assert "&lt;claims&gt;" in text  # user text is escaped
    assert text.count('class="pass"') == 1 and text.count('class="fail"') == 1


def _small_report(verdict: bool | None = True, slope: float = -1.02) -> Report:
    claim = Claim("1", "slope −1", {"slope": slope, "dims": 13}, verdict, "±0.1", "figure-4")
    table = Table("T", ["a", "b"], [["x", 1.5]], "note")
    return Report(title="t", claims=[claim], tables=[table], provenance={"git": "abc"})


def test_render_is_deterministic():
    """Two reports built independently from equal values render the same page; a changed
    verdict or measured value renders differently, and the page shows what was measured."""
    page = render_html(_small_report())
    assert page == render_html(_small_report())
    assert render_html(_small_report(verdict=False)) != page
    assert render_html(_small_report(slope=-0.98)) != page
    assert "slope = -1.02; dims = 13" in page and '<span class="pass">pass</span>' in page
    assert "±0.1" in page and "1 of 1 checked pass" in page
    assert '<span class="skip">not checked</span>' in render_html(_small_report(verdict=None))


def test_claim_links_to_its_figure_only_when_drawn(report):
    text = report.read_text()
    assert '<a href="#figure-4">figure-4</a>' in text  # drawn in this report
    assert "<td>figure-9</td>" in text  # not drawn: plain text, no dangling link


def test_a_claim_without_a_figure_names_its_experiment():
    claim = Claim("5", "s", {}, True, figure="rho")
    page = render_html(Report("t", claims=[claim], titles={"rho": "Weightings q = p^ρ"}))
    assert "<td>Weightings q = p^ρ (no figure)</td>" in page


def test_a_numpy_verdict_is_written_as_json():
    """A judge's numpy bool (§4.4b failing at S = 1 wrote one) is still a JSON boolean."""
    assert json.loads(json.dumps(Claim("x", "s", {}, np.bool_(False)).to_dict()))["passed"] is False


def test_claim_to_dict_is_strict_json():
    claim = Claim("§4.4b", "s", {"steps": float("inf"), "n": 3, "e": 0.5}, None, "none", "f")
    data = json.loads(json.dumps(claim.to_dict(), allow_nan=False))
    assert data["measured"] == {"steps": "inf", "n": 3, "e": 0.5}
    assert data["passed"] is None and data["figure"] == "f" and data["tolerance"] == "none"


def test_measured_quantities_are_named_beside_the_papers_values():
    claim = Claim("3", "s", {"min_error_d_le_200": 0.5211, "error_d1000": 0.155}, True)
    claim.paper = {"error_d1000": 0.17}
    assert (
        measured_text(claim)
        == "min error (d ≤ 200) = 52.1 %; error (d = 1000) = 15.5 % (paper 17 %)"
    )
    assert quantity_name("truncate_d10_T1e4") == "truncate (d = 10, T = 10⁴)"
    assert (
        quantity_name("slope_rho0.5") == "slope (ρ = 0.5)"
        and quantity_name("T=1e4: z") == "T=1e4: z"
    )


def test_provenance_is_a_small_table_with_its_json_folded():
    page = render_html(
        Report(
            "t",
            provenance={
                "runs_stored": 591,
                "compute_seconds_stored": 56.2527,
                "hosts": ["vm"],
                "statuses_now": {},
            },
        )
    )
    assert "<td>runs stored</td><td>591</td>" in page and "<td>56.3</td>" in page
    assert "<td>hosts of the stored runs</td><td>vm</td>" in page and "<td>none</td>" in page
    assert "<details><summary>as JSON</summary><pre>" in page


def test_margins_read_as_a_referee_would():
    """Under 2 s.e. a passing claim reads "fragile"; a claim of no effect states what it would
    have detected; a deterministic one says why it has no margin; all of it in claims.json."""
    safe = Claim("1", "s", {}, True, margin_se=8.4)
    fragile = Claim("3", "s", {}, True, margin_se=0.63)
    null = Claim("h-6", "s", {}, True, margin_se=2.5, detectable=0.0771)
    exact = Claim("6", "s", {}, True, margin_note="exact arithmetic: no sampling error")
    assert margin_text(safe) == "8.4 s.e." and margin_text(fragile) == "fragile: 0.63 s.e."
    assert margin_text(null).startswith("no difference detected (would detect ≥ 0.0771)")
    assert margin_text(exact) == "exact arithmetic: no sampling error"
    data = json.loads(json.dumps(null.to_dict(), allow_nan=False))
    assert data["margin_se"] == 2.5 and data["detectable"] == 0.0771
    assert exact.to_dict()["margin_se"] is None
    assert (
        json.loads(json.dumps(Claim("x", "s", margin_se=float("inf")).to_dict()))["margin_se"]
        == "inf"
    )
    html_text = render_html(Report("t", claims=[fragile, null]))
    assert "would detect ≥ 0.0771" in html_text
    assert '<abbr title="fragile: within its tolerance, but by less than 2' in html_text
    assert "</abbr>: 0.63 s.e." in html_text  # "fragile", explained where it stands
    banded = Claim("4", "s", {}, True, margin_se=-1.0, in_band=True)  # inside the quick band
    assert margin_text(banded) == "-1 s.e."  # neither fragile nor a pass
    html_text = render_html(Report("t", claims=[safe, banded]))
    assert '<span class="band">not refuted at this scale</span>' in html_text
    assert "1 of 2 checked pass; not refuted at this scale: 4" in html_text


def chromium_probe(report: Path, tmp_path: Path, screenshot: bool = True) -> dict:
    """Load ``report`` in headless Chromium: each image's naturalWidth and the claims rows.

    A copy of the page gets a script that writes what it reads into the DOM, which Chromium's
    --dump-dom prints after the load event; a screenshot of the real page is saved beside it.
    """
    probe = tmp_path / "probe.html"
    script = (
        "<script>window.addEventListener('load', () => { const p = document.createElement('pre');"
        "p.id = 'probe'; const all = (s) => [...document.querySelectorAll(s)];"
        "p.textContent = JSON.stringify({widths: all('img:not(.math)').map(i => i.naturalWidth),"
        "math: all('img.math').map(i => [i.naturalWidth, i.naturalHeight]),"
        "claims: all('#claims tbody tr').length,"
        "empty_headers: all('th').filter(t => !t.textContent.trim()).length,"
        "intro: (document.querySelector('.intro') || {}).textContent || '',"
        "fragile: all('#claims abbr').map(a => a.title),"
        "legend: (document.querySelector('.legend') || {}).textContent || ''});"
        "document.body.appendChild(p); });</script>"
    )
    probe.write_text(report.read_text().replace("</body>", script + "</body>"))
    profile = tmp_path / "profile"
    common = [CHROMIUM, *BROWSER_FLAGS, f"--user-data-dir={profile}", "--virtual-time-budget=5000"]
    dom = subprocess.run(
        [*common, "--dump-dom", probe.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    match = re.search(r'<pre id="probe">(.*?)</pre>', dom)
    assert match, dom[-2000:]
    if screenshot:
        shot = report.parent / "report.png"
        subprocess.run(
            [*common, f"--screenshot={shot}", "--window-size=1200,1600", report.as_uri()],
            capture_output=True,
            timeout=120,
            check=True,
        )
        assert shot.stat().st_size > 10_000
    return json.loads(match.group(1).replace("&quot;", '"'))


@pytest.mark.skipif(CHROMIUM is None and not os.environ.get("CI"), reason="chromium not installed")
def test_report_displays_in_headless_chromium(report, tmp_path):
    """Every figure image decodes (naturalWidth > 0), so does each caption's formula (a line of
    text's height), the claims table is in the DOM, and a referee reads the page without
    suspicion: an opening paragraph, "fragile" explained where it stands and in the legend, no
    empty header cell (the provenance table has none)."""
    assert CHROMIUM, "CI must install Debian's chromium"
    probe_data = chromium_probe(report, tmp_path)
    assert len(probe_data["widths"]) == 2 and all(w > 0 for w in probe_data["widths"])
    assert len(probe_data["math"]) == 1 and all(8 < h < 40 for _, h in probe_data["math"])
    assert probe_data["claims"] == 3
    assert probe_data["intro"] == "What is judged, at which scale."
    assert probe_data["fragile"] and probe_data["fragile"][0].startswith("fragile: within its")
    assert "fragile" in probe_data["legend"] and "not refuted at this scale" in probe_data["legend"]
    assert probe_data["empty_headers"] == 0


def test_measured_quantities_carry_their_units():
    """Errors read as probabilities (shown in percent, 3 digits), capacities as edits, steps as
    steps, slopes and ratios as pure numbers; a claim's own ``units`` override the rule, and
    claims.json lists them."""
    from assocmem.report import measured_text
    from assocmem.report.quantities import unit_of

    assert unit_of("error_d1000") == unit_of("K20_diff_sem") == "probability"
    assert unit_of("median_d64") == "edits" and unit_of("median_steps_to_zero_sgd") == "steps"
    assert unit_of("slope_rho0.5") == unit_of("predicted_over_measured_d16") == ""
    assert unit_of("n_eff_G20_low") == "tokens" and unit_of("cells") == "cells"
    claim = Claim("x", "s", {"error_d10": 0.5, "slope": -1.0, "adam_H2": 0.7}, True,
                  units={"adam_H2": ""})  # fmt: skip
    assert claim.to_dict()["units"] == {"error_d10": "probability"}
    text = "error (d = 10) = 50 %; slope = -1; adam (H = 2) = 0.7"  # a probability in percent
    assert measured_text(claim) == text


def test_every_caption_writes_its_formulas_in_mathtext():
    """No caption of a registered experiment writes an exponent or a subscript as plain text
    (``d^(−1/4)``): each is a ``$…$`` formula, typeset by mathtext into an embedded image."""
    from assocmem.experiments.registry import EXPERIMENTS
    from assocmem.figures.layout import ASCII_MATH
    from assocmem.report.captions import MATH, caption_html

    plain = {e.name: ASCII_MATH.findall(MATH.sub("", e.caption)) for e in EXPERIMENTS.values()}
    assert {name: found for name, found in plain.items() if found} == {}
    assert sum("$" in e.caption for e in EXPERIMENTS.values()) >= 8
    page = caption_html(r"a < b, dashed: $0.35\,d^{-1/4}$.")
    assert page.startswith('a &lt; b, dashed: <img class="math" alt="0.35\\,d^{-1/4}"')
    assert 'src="data:image/svg+xml;base64,' in page and page.endswith(">.")
    assert MATH.sub("", "plain d^(−1/4)") and ASCII_MATH.search("plain d^(−1/4)")  # can fail

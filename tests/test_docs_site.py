"""The docs site as a reader gets it: the API reference's defaults and cross-references come from
the code (the griffe extension docs/hooks/griffe_docstrings.py), and the built site typesets its
formulas with KaTeX in a real browser and shows no literal reST role."""

import ast
import dataclasses
import importlib
import importlib.util
import inspect
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import griffe
import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
HOOKS = ROOT / "docs" / "hooks"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
# a role as Sphinx writes it, or as Markdown renders one left alone (":func:<code>x</code>")
ROLES = "func|class|mod|meth|attr|data|exc|obj|const|math"
LITERAL_ROLE = re.compile(rf":(?:py:)?(?:{ROLES}):(?:`|<code>)")


def load_hook(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, HOOKS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def site_extensions() -> list[str]:
    """The griffe extensions mkdocs.yml gives mkdocstrings, in its order."""
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    (handler,) = [p["mkdocstrings"] for p in config["plugins"] if isinstance(p, dict)]
    return handler["handlers"]["python"]["options"]["extensions"]


@pytest.fixture(scope="module")
def api():
    """The package as the API reference reads it: the docstrings parsed after the extensions."""
    hook = load_hook("griffe_docstrings")
    names = site_extensions()
    ours = hook.DocstringsFromCode()
    extensions = [ours if name.endswith("griffe_docstrings.py") else name for name in names]
    package = griffe.load(
        "assocmem",
        search_paths=[str(ROOT / "src")],
        docstring_parser="numpy",
        extensions=griffe.load_extensions(*extensions),
    )
    return package, ours


def test_config_defaults_in_the_reference_are_the_dataclass_defaults(api):
    """Every documented field of every config dataclass shows the field's own default (#35:
    ``output_embedding`` showed "gaussian", the default of the field documented beside it)."""
    package, _ = api
    checked = 0
    for path in CONFIGS:
        doc = package[path]
        module, _, name = doc.path.rpartition(".")
        cls = getattr(importlib.import_module(module), name)
        fields = {f.name: f for f in dataclasses.fields(cls)}
        shown = [
            parameter
            for section in doc.docstring.parsed
            if section.kind is griffe.DocstringSectionKind.parameters
            for parameter in section.value
        ]  # each field once, the problem fields' entries written from their declaration (#34)
        assert sorted(p.name for p in shown) == sorted(fields), path
        for parameter in shown:
            field = fields[parameter.name]
            if field.default is dataclasses.MISSING:
                continue
            assert ast.literal_eval(str(parameter.value)) == field.default, parameter.name
            checked += 1
    assert checked >= 40, checked  # both configs' fields, not an empty walk


CONFIGS = ("closed_form.config.ClosedFormConfig", "training.config.TrainConfig")


def test_config_docstrings_state_each_field_once_with_the_code_default():
    """What ``help(ClosedFormConfig)`` reads (its ``__doc__``: the source's entries and the
    problem fields' entries written from their one declaration, #34): one entry per field (its
    own description) whose stated default (``, default X``, else a choice set's first value) is
    the field's. A field documented nowhere fails here."""
    for path in (*CONFIGS, "config.problem.Problem"):
        module, _, name = f"assocmem.{path}".rpartition(".")
        cls = getattr(importlib.import_module(module), name)
        fields = dataclasses.fields(cls)
        parsed = griffe.Docstring(inspect.cleandoc(cls.__doc__)).parse("numpy")
        (section,) = [s for s in parsed if s.kind is griffe.DocstringSectionKind.parameters]
        entries = {p.name: p for p in section.value}
        assert sorted(entries) == sorted(f.name for f in fields), path
        descriptions = [p.description for p in section.value]
        assert len(set(descriptions)) == len(descriptions), f"{path}: a shared description"
        for field in fields:
            if field.default is not dataclasses.MISSING and field.default is not None:
                stated = ast.literal_eval(str(entries[field.name].value))
                assert stated == field.default, f"{path}.{field.name}"


def test_every_documented_default_is_the_signatures(api):
    package, _ = api
    wrong = []
    for obj in _objects(package):
        if not (obj.is_function or obj.is_class) or obj.docstring is None:
            continue
        signature = {p.name: p.default for p in obj.parameters}
        for section in obj.docstring.parsed:
            if section.kind is griffe.DocstringSectionKind.parameters:
                wrong += [
                    f"{obj.path}({p.name})"
                    for p in section.value
                    if p.name in signature and str(p.value) != str(signature[p.name])
                ]
    assert wrong == []


def test_every_role_in_a_docstring_resolves_and_none_is_left(api):
    package, extension = api
    assert extension.problems == []
    documented = [o for o in _objects(package) if o.docstring]
    assert [o.path for o in documented if LITERAL_ROLE.search(o.docstring.value)] == []
    links = sum(o.docstring.value.count("][assocmem.") for o in documented)
    assert links > 300, links  # the roles became links, not text


def test_a_role_naming_nothing_is_a_problem_and_a_good_one_a_link(tmp_path):
    package = tmp_path / "toy"
    package.mkdir()
    (package / "__init__.py").write_text(
        '"""A package."""\n\n\ndef here():\n    """Nothing."""\n\n\n'
        'def caller():\n    """Calls :func:`here`, not :func:`nowhere`; :math:`x^2`."""\n'
    )
    (tmp_path / "api").mkdir()
    (tmp_path / "api" / "toy.md").write_text("::: toy\n")
    extension = load_hook("griffe_docstrings").DocstringsFromCode(str(tmp_path / "api"), "toy")
    loaded = griffe.load(
        "toy", search_paths=[str(tmp_path)], extensions=griffe.load_extensions(extension)
    )
    assert loaded["caller"].docstring.value == "Calls [`here`][toy.here], not `nowhere`; $x^2$."
    assert extension.problems == ["toy.caller: :func:`nowhere` names nothing in toy nor elsewhere"]


def test_a_math_block_becomes_display_maths():
    """Sphinx's ``.. math::`` (one display per block; ``\\`` rows aligned) becomes arithmatex's
    ``$$`` block, at the directive's indentation, and the text after it is left as it was."""
    display = load_hook("griffe_docstrings").display_maths
    text = "So\n\n.. math::\n\n    a &= b, \\\\\n    c &= d\n\nafter.\n\n"
    text += "  .. math::\n\n      x = 1\n  y"
    assert display(text).split("\n") == [
        *["So", "", "", "$$", r"\begin{aligned}", r"a &= b, \\", "c &= d", r"\end{aligned}"],
        *["$$", "", "after.", "", "", "  $$", "  x = 1", "  $$", "", "  y"],
    ]
    assert display("No maths: ``.. math::`` in a line.") == "No maths: ``.. math::`` in a line."


# The clearest signs of a formula: a code span holding one is maths shown as code.
FORMULA_SIGNS = re.compile("[Σ∝ᵀ≤≥√]")
CODE_SPAN = re.compile(r"``(.+?)``", re.S)
# Spans that must stay code although they hold a sign, each with its reason (span text: why).
KEPT_AS_CODE: dict[str, str] = {}


def docstrings(tree: ast.Module):
    """Every docstring of a module: its own, its classes' and functions', and its attributes'
    (a string right after an assignment, as griffe and mkdocstrings read it)."""
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if not isinstance(body, list):
            continue
        for i, statement in enumerate(body):
            if not (
                isinstance(statement, ast.Expr)
                and isinstance(statement.value, ast.Constant)
                and isinstance(statement.value.value, str)
            ):
                continue
            owner = ast.Module | ast.ClassDef | ast.FunctionDef
            first = i == 0 and isinstance(node, owner)
            if first or (i > 0 and isinstance(body[i - 1], ast.Assign | ast.AnnAssign)):
                yield statement.lineno, statement.value.value


def formulas_in_code_spans(source: str) -> list[tuple[int, str]]:
    """(line, span) for each docstring code span of ``source`` holding a formula's sign."""
    return [
        (line, span)
        for line, text in docstrings(ast.parse(source))
        for span in CODE_SPAN.findall(text)
        if FORMULA_SIGNS.search(span) and span not in KEPT_AS_CODE
    ]


def test_no_docstring_shows_a_formula_as_code():
    """A formula in a docstring is a :math: role (typeset by KaTeX in the API reference), never
    a code span (#35: ``W = Σ_x q(x) u_{f*(x)} e_xᵀ`` showed as code)."""
    found, roles = {}, 0
    for path in sorted((ROOT / "src" / "assocmem").rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        roles += source.count(":math:`")
        if spans := formulas_in_code_spans(source):
            found[str(path.relative_to(ROOT))] = spans
    assert found == {}
    assert roles > 500, roles  # the formulas are there, as roles: not an empty walk


def test_a_formula_in_any_kind_of_docstring_is_found():
    source = (
        '"""Module: ``q = p``."""\n\nX = 1\n"""Attribute: ``a ≤ b``."""\n\n\n'
        'class C:\n    """Class: ``Eᵀ``."""\n\n    def f(self):\n        """``√d`` and\n'
        '        ``Σ_x\n        p(x)``; ``n_inputs``."""\n\n\ndef g():\n    """``p ∝ x``."""\n'
        "    y = 2\n    # ``≥`` in a comment\n"
    )
    assert sorted(formulas_in_code_spans(source)) == [  # not ``q = p``, ``n_inputs``, comments
        (4, "a ≤ b"),
        (8, "Eᵀ"),
        (11, "Σ_x\n        p(x)"),
        (11, "√d"),
        (17, "p ∝ x"),
    ]


def _objects(obj):
    yield obj
    for member in obj.members.values():
        if not member.is_alias:
            yield from _objects(member)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The site as CI builds it (mkdocs build --strict); the folder ``ASSOCMEM_BUILT_SITE``
    names when set (``.ci/run`` builds the site once, from the same tree, and passes it on)."""
    if os.environ.get("ASSOCMEM_BUILT_SITE"):
        return Path(os.environ["ASSOCMEM_BUILT_SITE"])
    folder = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), env.get("PYTHONPATH", "")])
    mkdocs = [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(folder)]
    subprocess.run(mkdocs, cwd=ROOT, env=env, check=True, timeout=600)
    return folder


@pytest.mark.slow
def test_the_built_site_shows_no_literal_role(site):
    pages = list(site.rglob("*.html"))
    assert len(pages) > 40
    found = {str(p.relative_to(site)): LITERAL_ROLE.findall(p.read_text()) for p in pages}
    assert {page: roles for page, roles in found.items() if roles} == {}


def rendered_dom(page: Path, profile: Path) -> str:
    """The DOM of ``page`` after its scripts ran (headless Chromium's --dump-dom)."""
    command = [
        CHROMIUM,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-background-networking",
        f"--user-data-dir={profile}",
        "--virtual-time-budget=5000",
        "--dump-dom",
        page.as_uri(),
    ]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=True).stdout


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None and not os.environ.get("CI"), reason="chromium not installed")
def test_formulas_are_typeset_by_katex_in_a_browser(site, tmp_path):
    """KaTeX, served from the site's assets/katex/, typesets every arithmatex formula of every
    page (the model page's 47, the API reference's docstrings' too: their :math: roles and
    their .. math:: blocks as displays), without an error."""
    assert CHROMIUM, "CI must install Debian's chromium"
    assert (site / "assets" / "katex" / "katex.min.css").is_file()
    counts = {}
    for page in sorted(site.rglob("*.html")):
        html = page.read_text()
        if 'class="arithmatex"' not in html:
            continue
        assert "cdn" not in " ".join(re.findall(r'(?:src|href)="([^"]*katex[^"]*)"', html))
        formulas = html.count('class="arithmatex"')
        dom = rendered_dom(page, tmp_path / "profile")
        name = str(page.relative_to(site))
        counts[name] = formulas
        assert dom.count('class="katex"') >= formulas, name  # every formula typeset
        displays = html.count('<div class="arithmatex">')  # $$ blocks, a docstring's .. math::
        assert dom.count('class="katex-display"') >= displays, name
        assert "katex-error" not in dom, name
        assert re.findall(r'class="arithmatex">\s*(\\\(|\\\[)', dom) == [], name
    assert counts.get("science/model/index.html", 0) >= 40, counts
    api = {name: n for name, n in counts.items() if name.startswith("api/")}
    assert api.get("api/closed_form/index.html", 0) >= 50, counts
    assert api.get("api/analysis/index.html", 0) >= 80, counts  # the paper's theory
    assert api.get("api/studies/index.html", 0) >= 250, counts  # the studies' theories
    assert sum(api.values()) >= 800, counts
    assert sum(counts.values()) >= 1000, counts


@pytest.mark.slow
def test_the_api_reference_shows_no_formula_as_code(site):
    """No code element of the API reference (a docstring's span, a type) holds a formula's sign:
    the docstrings' formulas are typeset maths."""
    shown = {}
    for page in sorted((site / "api").rglob("*.html")):
        codes = re.findall(r"<code\b[^>]*>(.*?)</code>", page.read_text(), re.S)
        spans = [re.sub(r"<[^>]+>", "", code) for code in codes]
        if found := [span for span in spans if FORMULA_SIGNS.search(span)]:
            shown[str(page.relative_to(site))] = found
    assert shown == {}


@pytest.mark.slow
def test_no_raw_dollar_maths_left_in_the_pages(site):
    """Outside code, no ``$`` is left: every formula went through arithmatex."""
    left = {}
    for page in site.rglob("*.html"):
        if page.is_relative_to(site / "assets"):
            continue
        text = re.sub(r"<(pre|code|script|style)\b.*?</\1>", "", page.read_text(), flags=re.S)
        found = re.findall(r".{0,30}\$.{0,30}", re.sub(r"<[^>]+>", "", text))
        if found:
            left[str(page.relative_to(site))] = found
    assert left == {}


WIDE_TABLE_PAGES = ["beyond/editing", "beyond/hierarchy", "beyond/similar", "kernels"]
WIDTHS = (
    "<script>window.addEventListener('load', () => { const p = document.createElement('pre');"
    "p.id = 'probe'; const d = document.documentElement;"
    "p.textContent = JSON.stringify({page: d.scrollWidth - d.clientWidth, tables:"
    "[...document.querySelectorAll('.md-typeset__scrollwrap')]"
    ".map(w => w.scrollWidth - w.clientWidth)}); document.body.appendChild(p); });</script>"
)


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None and not os.environ.get("CI"), reason="chromium not installed")
def test_wide_tables_wrap_in_the_text_column(site, tmp_path):
    """At 1280 px the pages with the widest tables (nine columns of d × settings) do not scroll
    sideways, and each table fits its box, its cells wrapping (docs/stylesheets/tables.css);
    measured in a copy of the site, each page with a script that reads the widths."""
    assert CHROMIUM, "CI must install Debian's chromium"
    copy = shutil.copytree(site, tmp_path / "site")
    overflow = {}
    for name in WIDE_TABLE_PAGES:
        probe = copy / name / "probe.html"
        page = (copy / name / "index.html").read_text()
        probe.write_text(page.replace("</body>", WIDTHS + "</body>"))
        command = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
                   "--window-size=1280,900", f"--user-data-dir={tmp_path / 'profile'}",
                   "--virtual-time-budget=3000", "--dump-dom", probe.as_uri()]  # fmt: skip
        dom = subprocess.run(command, capture_output=True, text=True, timeout=120).stdout
        found = re.search(r'<pre id="probe">(.*?)</pre>', dom)
        assert found, dom[-2000:]
        widths = json.loads(found.group(1).replace("&quot;", '"'))
        assert widths["tables"], name
        overflow[name] = [widths["page"], *widths["tables"]]
    assert {name: px for name, px in overflow.items() if max(px) > 1} == {}

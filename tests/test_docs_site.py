"""The docs site as a reader gets it: the API reference's defaults and cross-references come from
the code (the griffe extension docs/hooks/griffe_docstrings.py), and the built site typesets its
formulas with KaTeX in a real browser and shows no literal reST role."""

import ast
import dataclasses
import importlib
import importlib.util
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
        for section in doc.docstring.parsed:
            if section.kind is not griffe.DocstringSectionKind.parameters:
                continue
            for parameter in section.value:
                field = fields[parameter.name]
                if field.default is dataclasses.MISSING:
                    continue
                assert ast.literal_eval(str(parameter.value)) == field.default, parameter.name
                checked += 1
    assert checked >= 40, checked  # both configs' fields, not an empty walk


CONFIGS = ("closed_form.config.ClosedFormConfig", "training.config.TrainConfig")


def test_config_docstrings_state_each_field_once_with_the_code_default():
    """What ``help(ClosedFormConfig)`` reads: one entry per field (its own description) whose
    stated default (``, default X``, else a choice set's first value) is the field's."""
    package = griffe.load(
        "assocmem",
        search_paths=[str(ROOT / "src")],
        docstring_parser="numpy",
        extensions=griffe.load_extensions("dataclasses"),
    )
    for path in CONFIGS:
        module, _, name = f"assocmem.{path}".rpartition(".")
        fields = dataclasses.fields(getattr(importlib.import_module(module), name))
        (section,) = [
            s
            for s in package[path].docstring.parsed
            if s.kind is griffe.DocstringSectionKind.parameters
        ]
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
    text = "So\n\n.. math::\n\n    a &= b, \\\\\n    c &= d\n\nafter.\n\n  .. math::\n\n      x = 1\n  y"
    assert display(text).split("\n") == [
        *["So", "", "", "$$", r"\begin{aligned}", r"a &= b, \\", "c &= d", r"\end{aligned}"],
        *["$$", "", "after.", "", "", "  $$", "  x = 1", "  $$", "", "  y"],
    ]
    assert display("No maths: ``.. math::`` in a line.") == "No maths: ``.. math::`` in a line."


def _objects(obj):
    yield obj
    for member in obj.members.values():
        if not member.is_alias:
            yield from _objects(member)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The site as CI builds it (mkdocs build --strict)."""
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
    page (the model page's 47, the API reference's docstrings' too), without an error."""
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
        assert "katex-error" not in dom, name
        assert re.findall(r'class="arithmatex">\s*(\\\(|\\\[)', dom) == [], name
    assert counts.get("science/model/index.html", 0) >= 40, counts
    assert counts.get("api/closed_form/index.html", 0) >= 3, counts
    assert sum(counts.values()) >= 300, counts


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

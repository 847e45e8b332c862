"""Griffe extension: the API reference's cross-references and defaults come from the code.

Three rewrites of the docstrings as mkdocstrings reads them (the source keeps its docstrings, which
read well in ``help()`` and an editor):

* **Roles to links.** A Sphinx role (``:func:`parse_scheme```, ``:class:`~x.y.Z```,
  ``:mod:`assocmem.ops```, ``:meth:`.explicit```) is resolved the way Sphinx resolves it (the
  object's own scope, then its parents', then an absolute path; a leading dot, or a name found
  nowhere else, searches the package for the one object whose path ends so)
  and becomes an autorefs link to the object's page, ``[`parse_scheme`][assocmem.schemes.…]``.
  A target documented on the site must link (a broken link fails ``mkdocs build --strict``); a
  private, undocumented or third-party target (``pandas.DataFrame``) is shown as code; a name that
  resolves to nothing is a warning, so it fails the strict build too.
* **Maths.** Sphinx's ``:math:`W = \\sum_x …``` becomes ``$W = \\sum_x …$``, and a
  ``.. math::`` block (its indented lines, one display; lines ending in ``\\\\`` are aligned on
  ``&``) becomes a ``$$ … $$`` block, typeset by KaTeX like the pages' formulas.
* **Generated entries.** A dataclass whose docstring is completed when the class is created
  (:func:`assocmem.config.problem.document_problem` writes the problem fields' entries from their
  one declaration) is documented by its runtime ``__doc__``, not the source text, so the
  reference shows what ``help()`` shows.
* **Defaults from the signature.** A parameter's default in the rendered Parameters table is the
  one of the signature (a dataclass field's default, a function's keyword default), never one
  read off the docstring's text, where numpydoc reads a choice set's first value as the default
  and a grouped entry (``a, b : …``) gives ``b`` the default of ``a``.
"""

import builtins
import importlib.util
import inspect
import logging
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from griffe import (
    Alias,
    AliasResolutionError,
    CyclicAliasError,
    DocstringSectionKind,
    Extension,
    Module,
    Object,
)

LOGGER = logging.getLogger("mkdocs.plugins.assocmem.griffe_docstrings")
MATH = re.compile(r":math:`(?P<tex>[^`]+)`")  # Sphinx's inline maths, to arithmatex's $…$
MATH_BLOCK = re.compile(r"(?P<indent> *)\.\. math::\s*")  # Sphinx's display maths, to $$…$$
ROLE = re.compile(r":(?:py:)?(func|class|mod|meth|attr|data|exc|obj|const):`(?P<target>[^`]+)`")
API_PAGES = Path(__file__).resolve().parent.parent / "api"
ROOT = "assocmem"


def documented_modules(pages: Path = API_PAGES) -> set[str]:
    """The objects the API pages render with ``::: path`` (each page's module or package)."""
    found: set[str] = set()
    for page in pages.glob("*.md"):
        found.update(re.findall(r"^::: (\S+)$", page.read_text(encoding="utf-8"), re.MULTILINE))
    return found


def display_maths(text: str) -> str:
    """Each Sphinx ``.. math::`` block of ``text`` as an arithmatex ``$$ … $$`` block."""
    lines, out = text.split("\n"), []
    i = 0
    while i < len(lines):
        directive = MATH_BLOCK.fullmatch(lines[i])
        if directive is None:
            out.append(lines[i])
            i += 1
            continue
        indent, body = directive["indent"], []
        i += 1
        while i < len(lines) and (not lines[i].strip() or _indent(lines[i]) > len(indent)):
            body.append(lines[i].strip())
            i += 1
        tex = [line for line in body if line]
        if any(line.endswith("\\\\") for line in tex) and not tex[0].startswith("\\begin"):
            tex = ["\\begin{aligned}", *tex, "\\end{aligned}"]
        out += ["", *(f"{indent}{line}" for line in ["$$", *tex, "$$"]), ""]
    return "\n".join(out)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _walk(obj: Object) -> Iterator[Object]:
    """``obj`` and every object defined in it (aliases are documented where they point)."""
    yield obj
    for member in obj.members.values():
        if not isinstance(member, Alias):
            yield from _walk(member)


def _final(obj: Object | Alias) -> Object | str:
    """The object an alias points to, or its target's path where that lies outside the package."""
    if isinstance(obj, Alias):
        try:
            return obj.final_target
        except (AliasResolutionError, CyclicAliasError):
            return obj.target_path
    return obj


def _member(scope: Object, dotted: str) -> Object | str | None:
    """``scope.a.b`` for ``dotted = "a.b"``, following aliases; None where it is not there."""
    found: Object | str = scope
    for part in dotted.split("."):
        if isinstance(found, str):
            return f"{found}.{part}"  # inside a third-party object: no further checks
        if part not in found.members:
            return None
        found = _final(found.members[part])
    return found


class DocstringsFromCode(Extension):
    """Rewrite roles into autorefs links and set parameter defaults from the signatures."""

    def __init__(self, pages: str | None = None, root: str = ROOT) -> None:
        self.root = root  # the package whose docstrings are rewritten
        self.documented = documented_modules(Path(pages) if pages else API_PAGES)
        self.problems: list[str] = []  # unresolved roles, also logged as warnings
        self.unlinked: set[str] = set()  # resolved targets the site does not render
        self._by_path: dict[str, Object] = {}
        self._exported: dict[str, str] = {}  # canonical path -> its name in the package itself

    def on_package(self, *, pkg: Module, **kwargs: Any) -> None:
        if pkg.path != self.root:
            return
        objects = list(_walk(pkg))
        self._by_path = {obj.path: obj for obj in objects}
        for obj in objects:
            _runtime_docstring(obj)
        self._exported = _exported(pkg) if self.root in self.documented else {}
        for obj in objects:
            if obj.docstring is not None:
                text = MATH.sub(r"$\g<tex>$", display_maths(obj.docstring.value))
                obj.docstring.value = ROLE.sub(lambda m, o=obj: self._link(m, o), text)
        for obj in objects:
            _defaults_from_signature(obj)

    def _resolve(self, target: str, obj: Object) -> Object | str | None:
        if target.startswith("."):  # Sphinx's "search by suffix"
            return self._unique_suffix(target)
        scope: Object | None = obj if obj.is_module or obj.is_class else obj.parent
        while scope is not None:
            found = _member(scope, target)
            if found is not None:
                return found
            scope = scope.parent
        head, _, rest = target.partition(".")
        if head == self.root:
            root = self._by_path[self.root]
            return _member(root, rest) if rest else root
        if not rest and hasattr(builtins, head):
            return f"builtins.{head}"
        if rest and importlib.util.find_spec(head) is not None:
            return target  # a third-party object (no inventory of its docs here)
        return self._unique_suffix(f".{target}")  # e.g. a class the module does not import

    def _unique_suffix(self, suffix: str) -> Object | None:
        hits = [obj for path, obj in self._by_path.items() if path.endswith(suffix)]
        return hits[0] if len(hits) == 1 else None

    def _link(self, match: re.Match[str], obj: Object) -> str:
        written = re.sub(r"\s+", "", match["target"])  # a role may be wrapped across lines
        shown = written.lstrip("~.").rsplit(".", 1)[-1] if written.startswith("~") else written
        found = self._resolve(written.lstrip("~"), obj)
        if found is None or (isinstance(found, str) and found.startswith(f"{self.root}.")):
            problem = f"{obj.path}: {match[0]} names nothing in {self.root} nor elsewhere"
            self.problems.append(problem)
            LOGGER.warning(problem)
            return f"`{shown}`"
        if isinstance(found, str):
            self.unlinked.add(found)
            return f"`{shown}`"
        path = found.path if self._on_site(found) else self._exported.get(found.path)
        if path is None:
            self.unlinked.add(found.path)
            return f"`{shown}`"
        return f"[`{shown}`][{path}]"

    def _on_site(self, obj: Object) -> bool:
        """Whether the API pages render ``obj``: a public, documented object of a rendered module
        (a name with a leading underscore anywhere in its path is filtered out)."""
        if any(part.startswith("_") for part in obj.path.split(".")):
            return False
        if obj.is_module:
            return obj.path in self.documented
        if not obj.docstring and not obj.is_class:
            return False  # mkdocstrings renders no undocumented attribute or function
        return obj.module.path in self.documented


def _exported(pkg: Module) -> dict[str, str]:
    """The top-level names (rendered on the package's page), keyed by their canonical path."""
    found: dict[str, str] = {}
    for name, member in pkg.members.items():
        target = _final(member)
        if not name.startswith("_") and not isinstance(target, str) and not target.is_module:
            found.setdefault(target.path, f"{pkg.path}.{name}")
    return found


def _runtime_docstring(obj: Object) -> None:
    """Give the dataclass ``obj`` its runtime docstring where the code completed it."""
    if not obj.is_class or "dataclass" not in obj.labels or obj.docstring is None:
        return
    from assocmem.config.problem import DOCUMENTED  # the mark document_problem sets

    cls = _runtime(obj)
    if cls is not None and cls.__dict__.get(DOCUMENTED) and cls.__doc__:
        obj.docstring.value = inspect.cleandoc(cls.__doc__)


def _runtime(obj: Object) -> Any:
    """The class ``obj`` imported, or None where it cannot be."""
    try:
        return getattr(importlib.import_module(obj.module.path), obj.name)
    except (ImportError, AttributeError):
        return None


def _defaults_from_signature(obj: Object) -> None:
    """Set each documented parameter's default from the signature of ``obj`` (where it has one)."""
    if obj.docstring is None or not (obj.is_function or obj.is_class):
        return
    try:
        signature = {p.name: p for p in obj.parameters}  # type: ignore[union-attr]
    except AttributeError:
        return
    if obj.is_class:  # every field declared by a call, documented or not (the signature shows it)
        for parameter in signature.values():
            if _CALL.match(str(parameter.default)):
                parameter.default = _field_default(obj, parameter.name, parameter.default)
    for section in obj.docstring.parsed:
        if section.kind is not DocstringSectionKind.parameters:
            continue
        for documented in section.value:
            if documented.name in signature:
                documented.value = signature[documented.name].default


_CALL = re.compile(
    r"[A-Za-z_][\w.]*\("
)  # a field declared by a call: described(…), problem_field(…)


def _field_default(obj: Object, name: str, static: Any) -> Any:
    """The default of the dataclass field ``name`` of ``obj`` as the code computes it (a field
    declared by a function, e.g. :func:`assocmem.config.problem.problem_field`, has no literal
    default in the source), or ``static`` where the class cannot be imported."""
    import dataclasses

    try:
        found = {f.name: f.default for f in dataclasses.fields(_runtime(obj))}
    except TypeError:  # not imported, or no dataclass
        return static
    value = found.get(name, dataclasses.MISSING)
    return static if value is dataclasses.MISSING else repr(value)

"""The public API: ``assocmem.__all__`` is complete, light to import, and what tests use.

``import assocmem`` must not import torch, pandas or matplotlib (notebooks and the CLI's
``--help`` stay fast); every public name resolves; ``__all__``, the lazy imports, the typing
block and the API reference all come from one table (``assocmem.public.PUBLIC``); the registry
names are the registries' keys; the register functions extend the registries; tests import no
private name.
"""

import ast
import inspect
import re
import subprocess
import sys
from pathlib import Path

import pytest

import assocmem
from assocmem.public import OWN, PUBLIC, static_source

TESTS = Path(__file__).parent
ROOT = TESTS.parent
HEAVY = ("torch", "pandas", "matplotlib")


def _run(code: str) -> None:
    subprocess.run([sys.executable, "-c", code], check=True)


def test_import_is_light():
    _run(
        "import sys, assocmem; "
        f"heavy = {HEAVY!r}; "
        "loaded = [m for m in heavy if m in sys.modules]; "
        "assert not loaded, loaded; "
        "assert set(assocmem.__all__) <= set(dir(assocmem))"
    )


def test_all_and_the_lazy_imports_are_the_table():
    assert assocmem.__all__ == sorted([*PUBLIC, *OWN])
    for name, (module, attribute) in PUBLIC.items():
        assert getattr(assocmem, name) is getattr(sys.modules[module], attribute), name


def _static_names(source: str) -> tuple[list[str], dict[str, tuple[str, str]]]:
    """The literal ``__all__`` of a module's source, and its ``if TYPE_CHECKING:`` imports as
    ``name → (module, attribute)``."""
    body = ast.parse(source).body
    literal = next(
        node.value
        for node in body
        if isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == "__all__"
    )
    block = next(
        n for n in body if isinstance(n, ast.If) and ast.unparse(n.test) == "TYPE_CHECKING"
    )
    found = {
        alias.asname or alias.name: (node.module or "", alias.name)
        for node in block.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
    return ast.literal_eval(literal), found


def test_the_static_all_and_typing_block_are_the_table():
    """mypy and griffe read ``__all__`` and the ``TYPE_CHECKING`` imports, not ``__getattr__``:
    they must be the table. On a difference, paste ``assocmem.public.static_source()`` over them
    in assocmem/__init__.py (then ruff)."""
    source = (Path(assocmem.__file__).parent / "__init__.py").read_text()
    assert _static_names(source) == (sorted([*PUBLIC, *OWN]), PUBLIC), "\n" + static_source()
    assert _static_names(static_source()) == (sorted([*PUBLIC, *OWN]), PUBLIC)


def test_the_static_check_can_fail():
    source = static_source().replace("import train\n", "import train as trains\n")
    assert _static_names(source)[1] != PUBLIC
    assert _static_names(source.replace('"train",', ""))[0] != sorted([*PUBLIC, *OWN])


def _documented(page_text: str) -> set[str]:
    """The objects an API page renders: ``::: a.b.c`` directives."""
    return set(re.findall(r"^::: *([\w.]+)", page_text, re.M))


def test_the_api_reference_documents_every_public_name():
    """Each name of the table is rendered by docs/api/ under its defining module (a ``:::``
    of the module, or of the object itself); ``::: assocmem`` lists them all by __all__."""
    shown = set().union(*(_documented(p.read_text()) for p in (ROOT / "docs/api").glob("*.md")))
    assert "assocmem" in shown
    missing = [
        name
        for name, (module, attribute) in PUBLIC.items()
        if module not in shown and f"{module}.{attribute}" not in shown
    ]
    assert not missing, missing


def test_top_level_names_load_lazily():
    """The README's first line works, and loads the name from its defining module."""
    _run(
        "import sys; from assocmem import ClosedFormConfig, run_closed_form; "
        "assert run_closed_form.__module__ == 'assocmem.closed_form.kernel'; "
        "assert 'matplotlib' not in sys.modules"
    )


def test_all_is_sorted_unique_and_every_name_resolves():
    names = assocmem.__all__
    assert names == sorted(names) and len(set(names)) == len(names)
    for name in names:
        assert getattr(assocmem, name) is not None, name
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        _ = assocmem.nope


def _section(doc: str, title: str) -> str:
    """The text of one numpydoc section (empty when absent)."""
    match = re.search(
        rf"\n\s*{title}\n\s*-{{{len(title)}}}\n(.*?)(?=\n\s*\w[\w ]*\n\s*---|\Z)", doc, re.S
    )
    return match.group(1) if match else ""


def test_every_public_name_has_a_numpydoc_docstring():
    """Functions document every parameter and what they return; classes their fields.

    (The docs site renders these with mkdocstrings in numpydoc style.)
    """
    problems = []
    for name in assocmem.__all__:
        value = getattr(assocmem, name)
        if not callable(value):
            continue
        doc = inspect.getdoc(value) or ""
        if inspect.isclass(value):
            if not (_section(doc, "Attributes") or _section(doc, "Parameters")):
                problems.append(f"{name}: no Attributes or Parameters section")
            continue
        params = _section(doc, "Parameters")
        for param in inspect.signature(value).parameters:
            if not re.search(rf"(^|[ ,*]){param}\b", params, re.M):
                problems.append(f"{name}: parameter {param} undocumented")
        if not _section(doc, "Returns"):
            problems.append(f"{name}: no Returns section")
    assert not problems, problems


def test_registry_names_are_the_registries_keys():
    assert assocmem.scheme_names() == tuple(assocmem.SCHEMES)
    assert assocmem.optimizer_names() == tuple(assocmem.OPTIMIZERS)
    assert assocmem.experiment_names() == tuple(assocmem.EXPERIMENTS)


def test_register_scheme_extends_the_registry_and_refuses_a_taken_name():
    class Double(assocmem.SCHEMES["population"]):  # q = 2p: a new name, the same law
        name = "double_population"

        def weights(self, freq, dims):
            return 2 * super().weights(freq, dims)

    try:
        assert assocmem.register_scheme(Double) is Double
        assert assocmem.register_scheme(Double) is Double  # again: a no-op
        assert "double_population" in assocmem.scheme_names()
        cfg = assocmem.ClosedFormConfig(
            n_inputs=50, dims=(8,), trials=2, schemes=("population", "double_population")
        )
        frame = assocmem.run_closed_form(cfg).to_frame()
        by_scheme = frame.groupby("scheme")["error"].apply(list)
        # q and 2q have the same argmax: the same errors, trial by trial.
        assert by_scheme["double_population"] == by_scheme["population"]

        class Other(Double):
            pass

        with pytest.raises(ValueError, match="already registered"):
            assocmem.register_scheme(Other)
    finally:
        assocmem.SCHEMES.pop("double_population", None)


def test_register_optimizer_and_experiment_refuse_taken_names():
    with pytest.raises(ValueError, match="already registered"):
        assocmem.register_optimizer(type("Fake", (assocmem.SGD,), {}))
    with pytest.raises(TypeError):
        assocmem.register_optimizer(object)  # type: ignore[arg-type]
    first = assocmem.EXPERIMENTS["figure-1"]
    assert assocmem.register_experiment(first) is first
    with pytest.raises(ValueError, match="already registered"):
        assocmem.register_experiment(
            assocmem.Experiment(name="figure-1", title="t", caption="c", item=None)
        )


def _private(name: str) -> bool:
    return name.startswith("_") and not name.endswith("__")  # dunders (__version__) are public


def _private_imports(path: Path) -> list[str]:
    """``from assocmem... import _name`` and ``import assocmem._x`` in one file."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("assocmem"):
            modules = node.module.split(".")
            names = [alias.name for alias in node.names]
            found += [f"{node.module}.{n}" for n in names if _private(n)]
            if any(_private(part) for part in modules):
                found.append(node.module)
        elif isinstance(node, ast.Import):
            found += [
                a.name
                for a in node.names
                if a.name.startswith("assocmem.")
                and any(_private(part) for part in a.name.split("."))
            ]
    return [f"{path.name}: {name}" for name in found]


def test_tests_import_no_private_name():
    """Tests use public names only (documented subpackage modules are fine; ``_x`` is not)."""
    found = [hit for path in sorted(TESTS.glob("*.py")) for hit in _private_imports(path)]
    assert not found, found


def test_the_private_import_scan_can_fail(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text("from assocmem.sweep.spec import _Problems, SweepSpec\n")
    assert _private_imports(sample) == ["sample.py: assocmem.sweep.spec._Problems"]


def test_the_typed_usage_script_imports_every_public_name():
    """.ci/run checks tests/typecheck_public_api.py with ``mypy --strict``: it must use them all."""
    tree = ast.parse((TESTS / "typecheck_public_api.py").read_text())
    imported = {
        alias.name
        for node in tree.body
        if isinstance(node, ast.ImportFrom) and node.module == "assocmem"
        for alias in node.names
    }
    assert imported == set(assocmem.__all__)


def test_py_typed_ships():
    assert (Path(assocmem.__file__).parent / "py.typed").is_file()


def test_training_results_as_tidy_frames():
    """train() results as one row per run (config, status, metrics) and per evaluated step."""
    configs = [
        assocmem.TrainConfig(n_inputs=20, dim=8, n_samples=64, batch_size=16, eval_every=2, lr=lr)
        for lr in (0.1, 10.0)
    ]
    results = assocmem.train(configs)
    runs = assocmem.runs_frame(results)
    assert list(runs["lr"]) == [0.1, 10.0] and list(runs["error"]) == [r.error for r in results]
    assert {"optimizer", "momentum", "seed", "status", "head_error", "kernel"} <= set(runs.columns)
    curves = assocmem.curves_frame(results)
    assert len(curves) == sum(len(r.curve) for r in results)
    assert list(curves.columns[-2:]) == ["step", "error"]
    assert set(curves["step"]) == {0, 2, 4}

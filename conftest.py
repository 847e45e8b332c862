"""Every example of the README and the documentation runs as a test (sybil).

- ```python blocks run in the test process, one namespace per page, in page order;
- ```bash blocks run with bash (``-e -o pipefail``), the environment's ``assocmem`` and
  ``python`` first on PATH;
- both run in a fresh temporary folder per page that links ``examples/``, ``docs/`` and
  ``benchmarks/`` of this checkout, so a block may read ``examples/figure1.toml`` and a later
  block of the same page may read what an earlier one wrote;
- ``<!-- skip: next "reason" -->`` before a block skips it and says why (the test report shows
  the reason); ``tests/test_docs.py`` checks that every skip gives one;
- the registries (schemes, optimisers, experiments, run kinds, study commands) are restored
  after each page, so a tutorial that registers its own entry leaves the library as it found it.

Other fences (```toml, ```text, ```console, plain ```) are shown, not run.
"""

import importlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from sybil import Example, Sybil
from sybil.integration.pytest import SybilItem
from sybil.parsers.markdown import CodeBlockParser, PythonCodeBlockParser, SkipParser

ROOT = Path(__file__).resolve().parent
LINKED = ("examples", "docs", "benchmarks")  # what a page's folder sees of the checkout
SHELL_TIMEOUT_S = 300  # a bash block that runs longer is a failure (mark it skipped instead)
# The registries a tutorial may extend: (module, attribute), each a dict restored after a page.
REGISTRIES = (
    ("assocmem.schemes", "REGISTRY"),
    ("assocmem.training.optimizers.registry", "OPTIMIZERS"),
    ("assocmem.experiments.registry", "EXPERIMENTS"),
    ("assocmem.sweep.kinds", "RUN_KINDS"),
    ("assocmem.experiments.commands", "STUDY_COMMANDS"),
)

os.environ.setdefault("MPLBACKEND", "Agg")  # figures render off-screen


def _registries() -> list[dict[Any, Any]]:
    """The registry dicts (an error here means a registry moved: update REGISTRIES)."""
    return [getattr(importlib.import_module(m), attribute) for m, attribute in REGISTRIES]


def setup(namespace: dict[str, Any]) -> None:
    """Before a page: a fresh working folder, and a snapshot of the registries."""
    folder = Path(tempfile.mkdtemp(prefix="assocmem-docs-"))
    for name in LINKED:
        (folder / name).symlink_to(ROOT / name, target_is_directory=True)
    namespace["_docs_state"] = {
        "cwd": Path.cwd(),
        "folder": folder,
        "registries": [(r, dict(r)) for r in _registries()],
    }
    os.chdir(folder)


def teardown(namespace: dict[str, Any]) -> None:
    """After a page: back to the old folder, registries as they were, figures closed."""
    state = namespace["_docs_state"]
    os.chdir(state["cwd"])
    shutil.rmtree(state["folder"], ignore_errors=True)
    for registry, saved in state["registries"]:
        registry.clear()
        registry.update(saved)
    if "matplotlib.pyplot" in sys.modules:
        sys.modules["matplotlib.pyplot"].close("all")


def run_bash(example: Example) -> str | None:
    """Run one bash block; on failure return the message sybil reports (the block failed)."""
    folder = example.namespace["_docs_state"]["folder"]
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    try:
        done = subprocess.run(
            ["bash", "-e", "-o", "pipefail", "-c", example.parsed],
            cwd=folder,
            env=env,
            capture_output=True,
            text=True,
            timeout=SHELL_TIMEOUT_S,
        )
    except subprocess.TimeoutExpired:
        return f"bash block ran past {SHELL_TIMEOUT_S} s; make it cheaper or skip it with a reason"
    if done.returncode != 0:
        return (
            f"bash block exited {done.returncode}:\n{example.parsed}\n"
            f"--- stdout ---\n{done.stdout[-3000:]}\n--- stderr ---\n{done.stderr[-3000:]}"
        )
    return None


def _traceback_filter(item: SybilItem, excinfo: Any) -> Any:
    """sybil 10.1 assumes every traceback it reports passes through the example's frame; one
    that does not (a warning turned error by ``filterwarnings``, e.g. an unclosed file found by
    the garbage collector) made it crash the whole session. Report such a failure in full."""
    try:
        return _sybil_traceback_filter(item, excinfo)
    except IndexError:
        return excinfo.traceback


_sybil_traceback_filter = SybilItem._traceback_filter
SybilItem._traceback_filter = _traceback_filter  # type: ignore[method-assign]

pytest_collect_file = Sybil(
    parsers=[
        SkipParser(),
        PythonCodeBlockParser(),
        CodeBlockParser(language="bash", evaluator=run_bash),
    ],
    patterns=["*.md"],
    setup=setup,
    teardown=teardown,
).pytest()

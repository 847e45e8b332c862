"""docs/architecture.md's "Written once" table stays true: each function it names is defined
once in the package, in a file the row names."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "assocmem"


def _rows() -> list[tuple[list[str], list[str]]]:
    """(names, files) of each row of the table: backticked identifiers and ``.py`` paths."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    table = text.split("## Written once", 1)[1].split("\n\n", 2)[1]
    rows = []
    for line in table.splitlines()[2:]:
        ticked = re.findall(r"`([^`]+)`", line)
        files = [t for t in ticked if t.endswith(".py")]
        names = [t for t in ticked if re.fullmatch(r"[a-z_][a-z0-9_]*", t)]
        rows.append((names, files))
    return rows


def _definitions(name: str) -> list[Path]:
    pattern = re.compile(rf"^(def|class) {name}\b", re.MULTILINE)
    return [p for p in PACKAGE.rglob("*.py") if pattern.search(p.read_text(encoding="utf-8"))]


def test_every_named_operation_is_defined_once_where_the_table_says():
    checked = 0
    for names, files in _rows():
        for file in files:
            assert (PACKAGE / file).is_file(), file
        for name in names:
            found = _definitions(name)
            assert len(found) == 1, f"{name}: defined in {found}"
            assert any(found[0] == PACKAGE / file for file in files), f"{name}: in {found[0]}"
            checked += 1
    assert checked >= 16  # the ops rows name at least this many functions


def test_adam_is_written_once():
    """Adam's bias corrections and second moment appear in the registry's entry alone: every
    trainer (the capacity frontier's memorize and the trained hierarchy included) steps through
    ``OPTIMIZERS["adam"]`` (their steps against a reference: tests/test_studies_adam.py)."""
    update = re.compile(r"1 - beta[12]|beta2\s*\*\*|addcdiv_")
    writers = sorted(
        p.relative_to(PACKAGE).as_posix()
        for p in PACKAGE.rglob("*.py")
        if update.search(p.read_text(encoding="utf-8"))
    )
    assert writers == ["training/optimizers/adam.py"]


# The engine's kernels step their own parameters inside the engine's loop (training/engine.py),
# and ShadowW steps W beside its fast kernels: the loops issue 49 has still to move onto the
# trainer. Every other module trains through training/trainer.py. Shrink this set as they move.
KNOWN_STEPPING_LOOPS = {
    "training/kernels/analytic.py",
    "training/kernels/autograd.py",
    "training/shadow.py",
}


def test_one_loop_steps_an_optimiser():
    """An optimiser's step (``entry.step(slot, param, grad, lr, t)``) is called by the one
    trainer alone, besides the engine's known loops: a new study, memory or search that steps
    an optimiser by hand fails here (train it through training/trainer.py instead)."""
    call = re.compile(r"\.step\(\s*(self\.)?slots?\b|\b(OPT|ADAM|optimizer|opt)\.step\(\s*\w+\s*,")
    callers = {
        p.relative_to(PACKAGE).as_posix()
        for p in PACKAGE.rglob("*.py")
        if call.search(p.read_text(encoding="utf-8"))
    }
    assert callers - KNOWN_STEPPING_LOOPS == {"training/trainer.py"}
    assert callers >= KNOWN_STEPPING_LOOPS  # a loop that moved leaves the list


def test_one_device_check_for_every_configuration():
    """The closed-form and training configurations check ``device`` with the same function:
    the same line for the same bad value, and ``cuda:K`` understood by both (refused here only
    when this machine has no CUDA device)."""
    import pytest
    import torch

    from assocmem import ClosedFormConfig, ConfigError, TrainConfig
    from assocmem.closed_form.config import validate

    def refusal(make, device):
        with pytest.raises(ConfigError) as err:
            make(device)
        return str(err.value)

    closed_form = lambda device: validate(ClosedFormConfig(device=device))  # noqa: E731
    training = lambda device: TrainConfig(optimizer="sgd", device=device)  # noqa: E731
    for device in ("tpu", "cuda:x", "meta"):
        assert refusal(closed_form, device) == refusal(training, device), device
    if not torch.cuda.is_available():
        assert refusal(closed_form, "cuda:1") == refusal(training, "cuda:1")
        assert "cuda is not available" in refusal(training, "cuda:1")

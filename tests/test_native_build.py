"""The compiled kernels as built (issue 15): every library built for this CPU gives the same bits
on every entry point, the ctypes declarations match the C source, and the kernel in use is named
(or why none is, in one line on stderr)."""

import os
import re
import subprocess
import sys
from collections.abc import Callable

import pytest
import torch

from assocmem.training import native, native_library
from assocmem.training.optimizers import OPTIMIZERS

Outputs = tuple[torch.Tensor, ...]
C_TYPES = {
    "int64_t": native_library.I64,
    "int": native_library.I32,
    "float": native_library.F32,
    "void": None,
}


def variants_or_skip() -> list[str]:
    """The variants this CPU runs and that were built; skips (saying why) with fewer than two."""
    reason = native_library.reason_unavailable()
    if reason is not None:
        pytest.skip(f"compiled kernel unavailable: {reason}")
    built = [v for v in native_library.runnable() if native_library.library_path(v) is not None]
    if len(built) < 2:
        pytest.skip(f"only one instruction set to compare on this CPU: {built}")
    return built


def same_bits_on_every_variant(
    compute: Callable[[], Outputs], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``compute`` (fresh inputs each call) with each library gives the same bits as the first."""
    results = {}
    for variant in variants_or_skip():
        monkeypatch.setenv(native_library.SWITCH, variant)
        assert native_library.describe() == f"compiled {variant}"
        results[variant] = compute()
    first, *others = results
    for variant in others:
        for ours, theirs in zip(results[variant], results[first], strict=True):
            assert torch.equal(ours.view(torch.int32), theirs.view(torch.int32)), variant


def step_tables(
    runs: int, steps: int, n: int, m: int, present: float, gen: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """weights (runs, steps, n): c(x)/B of about ``present`` n distinct tokens; targets (n,)."""
    weights = torch.rand(runs, steps, n, generator=gen)
    weights = torch.where(weights < present, weights / n, 0.0)
    return weights, torch.randint(0, m, (n,), generator=gen)


@pytest.mark.parametrize("sign", [False, True])
@pytest.mark.parametrize(("d", "m"), [(13, 5), (37, 8), (70, 5), (64, 8)])
def test_sign_project_same_bits(d: int, m: int, sign: bool, monkeypatch: pytest.MonkeyPatch):
    gen = torch.Generator().manual_seed(d * m)
    P_t, U = torch.randn(3, m, d, generator=gen) * 1e-3, torch.randn(3, m, d, generator=gen)
    P_t[0, :, 0] = 0.0  # a zero gradient row: shape(0) = 0 on every path
    same_bits_on_every_variant(lambda: (native.sign_project(P_t, U, 1e-8, sign=sign),), monkeypatch)


@pytest.mark.parametrize("m", [5, 8, 13])
def test_softmax_error_same_bits(m: int, monkeypatch: pytest.MonkeyPatch) -> None:
    gen = torch.Generator().manual_seed(m)
    logits = torch.randn(4, 37, m, generator=gen) * 30  # exp underflows to 0 in some rows
    targets, weights = torch.randint(0, m, (37,), generator=gen), torch.rand(4, 37, generator=gen)
    same_bits_on_every_variant(
        lambda: (native.softmax_error(logits, targets, weights),), monkeypatch
    )


DENSE_CASES = {  # model → dense_steps keywords; W None is the ReLU model
    "learned_adam": {"W": True, "learned": ("E", "U"), "layer_norm": False, "optimizer": "adam"},
    "layer_norm_sign": {"W": True, "learned": (), "layer_norm": True, "optimizer": "sign_sgd"},
    "learned_e_sgd": {"W": True, "learned": ("E",), "layer_norm": True, "optimizer": "sgd"},
    "relu_adam": {"W": False, "learned": ("E", "U"), "layer_norm": False, "optimizer": "adam"},
}


@pytest.mark.parametrize("case", sorted(DENSE_CASES))
@pytest.mark.parametrize(("d", "m"), [(13, 5), (37, 8), (70, 5)])
def test_dense_steps_same_bits(case: str, d: int, m: int, monkeypatch: pytest.MonkeyPatch):
    options = dict(DENSE_CASES[case])
    runs, steps, n = 3, 4, 60  # about 45 distinct tokens a step: k > d for d = 13, 37
    gen = torch.Generator().manual_seed(d)
    W = torch.randn(runs, d, d, generator=gen) / d**0.5
    E, U = torch.randn(runs, n, d, generator=gen), torch.randn(runs, m, d, generator=gen)
    weights, targets = step_tables(runs, steps, n, m, 0.75, gen)
    lr = torch.rand(runs, steps, 3, generator=gen)

    def compute() -> Outputs:
        W_, E_, U_ = native.padded(W)[..., :d], E.clone(), U.clone()
        native.dense_steps(
            W_ if options["W"] else None, E_, U_, weights, targets, lr,
            learned=options["learned"], layer_norm=options["layer_norm"],  # type: ignore[arg-type]
            optimizer=OPTIMIZERS[options["optimizer"]](),  # type: ignore[index]
        )  # fmt: skip
        return W_.contiguous(), E_, U_

    same_bits_on_every_variant(compute, monkeypatch)


@pytest.mark.parametrize("optimizer", ["adam", "sign_sgd"])
@pytest.mark.parametrize(("d", "m"), [(13, 5), (37, 8), (70, 5)])
def test_projected_steps_same_bits(d: int, m: int, optimizer: str, monkeypatch):
    runs, steps, n = 3, 5, 60
    gen = torch.Generator().manual_seed(d + m)
    E, U = torch.randn(runs, n, d, generator=gen), torch.randn(runs, m, d, generator=gen)
    V = torch.randn(runs, d, m, generator=gen) * 0.1
    weights, targets = step_tables(runs, steps, n, m, 0.75, gen)
    lr = torch.rand(runs, steps, generator=gen)

    def compute() -> Outputs:
        V_ = V.clone()
        native.projected_steps(
            V_, E, native.padded(U), weights, targets, lr, optimizer=OPTIMIZERS[optimizer]()
        )
        return (V_,)

    same_bits_on_every_variant(compute, monkeypatch)


@pytest.mark.parametrize(("n", "m"), [(13, 5), (60, 8), (70, 5)])
def test_table_steps_same_bits(n: int, m: int, monkeypatch: pytest.MonkeyPatch) -> None:
    runs, steps, d = 3, 5, 11  # k distinct tokens > d
    gen = torch.Generator().manual_seed(n + m)
    E, U = torch.randn(runs, n, d, generator=gen), torch.randn(runs, m, d, generator=gen)
    table = torch.randn(runs, n, m, generator=gen)
    gram_inputs, gram_outputs = E @ E.transpose(1, 2), U @ U.transpose(1, 2)
    weights, targets = step_tables(runs, steps, n, m, 0.75, gen)
    lr = torch.rand(runs, steps, generator=gen) * 5

    def compute() -> Outputs:
        table_ = table.clone()
        native.table_steps(table_, gram_inputs, gram_outputs, weights, targets, lr)
        return (table_,)

    same_bits_on_every_variant(compute, monkeypatch)


def c_signatures() -> dict[str, tuple[type | None, tuple[tuple[str, type], ...]]]:
    """The exported (non-static) functions of kernels.c, as :data:`native_library.SIGNATURES`
    says them."""
    source = re.sub(r"/\*.*?\*/", "", native_library.SOURCE.read_text(), flags=re.S)
    found = {}
    for kind, name, parameters in re.findall(
        r"^(int64_t|int|void) (\w+)\(([^)]*)\)\s*\{", source, flags=re.M
    ):
        declared = []
        for parameter in parameters.split(","):
            words = parameter.replace("*", " * ").split()
            c_type = native_library.POINTER if "*" in words else C_TYPES[words[-2]]
            declared.append((words[-1], c_type))
        found[name] = (C_TYPES[kind], tuple(declared))
    return found


def test_ctypes_declarations_match_the_c_source() -> None:
    assert c_signatures() == native_library.SIGNATURES


def test_describe_names_the_kernel_and_says_once_why_not(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path
) -> None:
    monkeypatch.setattr(native_library, "_choices", {})  # a process that has chosen nothing yet
    monkeypatch.setenv(native_library.SWITCH, "0")
    assert native_library.describe() == "torch ops: ASSOCMEM_NATIVE=0"
    assert (
        native_library.load() is None and native_library.reason_unavailable() == "ASSOCMEM_NATIVE=0"
    )
    assert capsys.readouterr().err.splitlines() == [
        "assocmem: training runs torch ops, not the compiled kernel: ASSOCMEM_NATIVE=0"
    ]
    monkeypatch.delenv(native_library.SWITCH)
    monkeypatch.setattr(native_library, "FOLDER", tmp_path)  # installed without a C compiler
    assert native_library.load() is None and native_library.load() is None
    reason = native_library.reason_unavailable()
    assert reason is not None and "no library built" in reason
    assert native_library.describe() == f"torch ops: {reason}"
    assert len(capsys.readouterr().err.splitlines()) == 1


def test_loading_compiles_nothing() -> None:
    # With no compiler anywhere, the built library still loads: it was compiled at install.
    variants_or_skip()
    code = "from assocmem.training import native_library; print(native_library.describe())"
    env = {**os.environ, "PATH": "", "CC": "/nonexistent"}
    env.pop(native_library.SWITCH, None)
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert done.stdout.strip() == f"compiled {native_library.runnable()[0]}", done.stderr
    assert done.stderr == ""


def test_each_run_records_the_kernel_that_trained_it(monkeypatch):
    """A run's record names its kernel class and whether the compiled library or torch ops
    took its steps; switching the library off shows in the record (never a silent switch)."""
    from assocmem.training import TrainConfig, select_kernel, train

    cfg = TrainConfig.from_flat(
        {"dim": 16, "n_samples": 256, "batch_size": 16, "optimizer": "adam"}
    )
    name = select_kernel(cfg).__name__
    if native_library.reason_unavailable() is None:
        assert train([cfg])[0].kernel == f"{name} ({native_library.describe()})"
    monkeypatch.setenv("ASSOCMEM_NATIVE", "0")
    result = train([cfg])[0]
    assert result.kernel == f"{name} (torch ops)"
    assert result.to_dict()["kernel"] == result.kernel

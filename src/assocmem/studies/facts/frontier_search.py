r"""Capacity frontier: the most associations a d-dimensional memory stores at top-1 accuracy ≥ τ.

Two memories: ``hebbian`` (the outer-product memory, closed form) and ``trained`` (W optimised by
full-batch Adam on the cross-entropy, fixed random E and U, see
:mod:`assocmem.training.memorize`).

The outer-product (Hebbian) memory :math:`W = \sum_x u_{f^*(x)} e_x^\top` is the closed-form memory
with :math:`q = 1` under a uniform law over the N inputs; its accuracy is :math:`1 -` the
closed-form error. The frontier ``N*(d)`` is found by a search over N (doubling, then bisection on
the mean accuracy over ``trials`` draws), repeated with independent seeds to give an interval.
References for comparison: the sharp threshold :math:`d^2 \approx 2\cdot N\cdot \log N`
(computed for a decoupled model of the linear memory by Giorlandino, Goldt and Maillard 2026;
conjectured by Barnfield et al. 2026), and :math:`d^2 \approx 1.3\cdot N\cdot \log N`, this
project's own measurement of a trained linear memory at d = 128 (the factual-recall study).
"""

import math
from collections.abc import Callable, Sequence
from typing import Any

import torch

from assocmem import rng
from assocmem.analysis.frontier import (
    FrontierPoint,
    check_search,
    frontier_guess,
    largest_n,
    largest_n_bracketed,
)
from assocmem.closed_form import run_closed_form
from assocmem.closed_form.config import ClosedFormConfig, working_set_bytes
from assocmem.config.errors import ConfigError, unknown_name
from assocmem.config.memory import DEFAULT_MEMORY_GB, check_budget
from assocmem.embeddings import draw_embeddings
from assocmem.progress import progress_bar
from assocmem.training.memorize import AdamSettings, MemorizeResult, check_settings, memorize

MEMORIES = ("hebbian", "trained")
# Draws averaged per accuracy and independent searches per d, where not given: the defaults of
# hebbian_frontier and trained_frontier (a test checks they agree).
REPLICATES = {"hebbian": (5, 5), "trained": (2, 3)}
REFERENCE_CONSTANTS = {  # d² ≈ c · N log N
    "trained linear memory (measured here, d = 128)": 1.3,
    "sharp threshold (Giorlandino, Goldt, Maillard 2026)": 2.0,
}


def hebbian_accuracy(
    n_inputs: int,
    dim: int,
    n_outputs: int | None,
    trials: int,
    seed: int,
    device: str = "cpu",
    memory_gb: float = 16.0,
) -> float:
    r"""Mean top-1 accuracy of the outer-product memory over ``trials`` draws (uniform inputs).

    ``n_outputs=None`` gives each input its own output (M = N); otherwise
    :math:`f^*(x) = x \bmod M`.
    """
    m = n_inputs if n_outputs is None else min(n_outputs, n_inputs)
    cfg = ClosedFormConfig(
        n_inputs=n_inputs,
        n_outputs=m,
        probabilities=(1.0,) * n_inputs,
        schemes=("uniform",),
        dims=(dim,),
        trials=trials,
        seed=seed,
        device=device,
        embedding="gaussian",
        output_embedding="gaussian",
        memory_gb=memory_gb,
    )
    return 1.0 - float(run_closed_form(cfg).errors.mean())


def hebbian_frontier(
    dims: Sequence[int],
    *,
    tau: float = 0.99,
    n_outputs: int | None = None,
    trials: int = 5,
    repeats: int = 5,
    seed: int = 0,
    device: str = "cpu",
    memory_gb: float = DEFAULT_MEMORY_GB,
    progress: bool = False,
) -> list[FrontierPoint]:
    """N*(d) of the outer-product memory for each d, from ``repeats`` independent searches.

    Refused up front (:class:`ConfigError`) when the largest evaluation the search is expected
    to reach (N up to twice :func:`frontier_guess` at the largest d) exceeds ``memory_gb``.
    """
    check_search(dims, tau, trials, repeats)
    n_reach = min(10**6, 2 * frontier_guess(max(dims), n_outputs))
    check_capacity_memory(dims, "hebbian", n_outputs, trials, n_reach, memory_gb)
    points = []
    with progress_bar(len(dims) * repeats, "capacity (hebbian)", "search", progress) as bar:
        for dim in dims:
            found = []
            for r in range(repeats):
                run_seed = seed * 1_000_003 + r  # independent draws per repeat

                def accuracy(n: int, run_seed: int = run_seed, dim: int = dim) -> float:
                    return hebbian_accuracy(
                        n, dim, n_outputs, trials, run_seed, device, memory_gb=memory_gb
                    )

                found.append(largest_n(accuracy, tau, n_min=2))
                bar.update()
            points.append(FrontierPoint(dim, tuple(found)))
    return points


def trained_run(
    n_inputs: int,
    dim: int,
    n_outputs: int | None,
    trials: int,
    seed: int,
    *,
    tau: float = 0.99,
    settings: AdamSettings | None = None,
    embedding: str = "gaussian",
    output_embedding: str = "gaussian",
    device: str = "cpu",
) -> MemorizeResult:
    r"""Train ``trials`` memories of N uniform associations at once (full-batch Adam on W).

    Each trial draws its own E (N×d) and U (M×d) from named streams keyed by (seed, N, M, d,
    trial): a trial's numbers do not depend on how many trials share its batch.
    ``n_outputs=None`` gives each input its own output (M = N); otherwise
    :math:`f^*(x) = x \bmod M`.
    """
    m = n_inputs if n_outputs is None else min(n_outputs, n_inputs)
    draws = []
    for trial in range(trials):
        ids = (n_inputs, m, dim, trial)
        E = draw_embeddings(
            embedding, n_inputs, dim, rng.generator(seed, "embeddings", *ids), device=device
        )
        U = draw_embeddings(
            output_embedding, m, dim, rng.generator(seed, "output_embeddings", *ids), device=device
        )
        draws.append((E, U))
    E = torch.stack([e for e, _ in draws])
    U = torch.stack([u for _, u in draws])
    targets = (torch.arange(n_inputs) % m).to(device)
    return memorize(E, U, targets, tau=tau, settings=settings)


def trained_accuracy(
    n_inputs: int, dim: int, n_outputs: int | None, trials: int, seed: int, **options: Any
) -> float:
    """Mean top-1 accuracy of ``trials`` trained memories (see :func:`trained_run`)."""
    return float(trained_run(n_inputs, dim, n_outputs, trials, seed, **options).accuracy.mean())


def trained_frontier(
    dims: Sequence[int],
    *,
    tau: float = 0.99,
    n_outputs: int | None = None,
    trials: int = 2,
    repeats: int = 3,
    seed: int = 0,
    settings: AdamSettings | None = None,
    rel_tol: float = 0.02,
    factor: float = 1.25,
    first_guess: int | None = None,
    device: str = "cpu",
    log: Callable[[str], None] | None = None,
    memory_gb: float = DEFAULT_MEMORY_GB,
    progress: bool = False,
) -> list[FrontierPoint]:
    """N*(d) of the trained memory for each d, from ``repeats`` independent searches.

    Each accuracy is the mean over ``trials`` memories trained together; the search starts at
    :func:`frontier_guess` for the first d and at the previous d's N* scaled by the fitted
    growth for the next ones (or at ``first_guess``), brackets by steps of ``factor`` and
    bisects to ``rel_tol``. Refused up front when the largest evaluation it is expected to
    reach exceeds ``memory_gb`` (see :func:`capacity_bytes`).
    """
    check_search(dims, tau, trials, repeats)
    settings = settings or AdamSettings()
    check_settings(settings)
    n_reach = max(first_guess or 2, 2 * frontier_guess(max(dims), n_outputs))
    check_capacity_memory(dims, "trained", n_outputs, trials, n_reach, memory_gb)
    with progress_bar(len(dims) * repeats, "capacity (trained)", "search", progress) as bar:
        return _trained_searches(
            dims, tau, n_outputs, trials, repeats, seed, settings, rel_tol, factor, first_guess,
            device, log, bar,
        )  # fmt: skip


def _trained_searches(  # the loop of trained_frontier, its arguments passed on as they are
    dims: Sequence[int], tau: float, n_outputs: int | None, trials: int, repeats: int, seed: int,
    settings: AdamSettings, rel_tol: float, factor: float, first_guess: int | None, device: str,
    log: Callable[[str], None] | None, bar: Any,
) -> list[FrontierPoint]:  # fmt: skip
    points: list[FrontierPoint] = []
    for dim in sorted(dims):
        guess = _next_guess(points, dim, n_outputs) if points or not first_guess else first_guess
        found = []
        for r in range(repeats):
            run_seed = seed * 1_000_003 + r

            def accuracy(n: int, run_seed: int = run_seed, dim: int = dim, r: int = r) -> float:
                result = trained_run(
                    n, dim, n_outputs, trials, run_seed, tau=tau, settings=settings, device=device
                )
                acc = float(result.accuracy.mean())
                if log is not None:
                    log(f"d={dim} N={n} repeat={r}: accuracy {acc:.4f} after {result.steps} "
                        f"steps ({result.stopped})")  # fmt: skip
                return acc

            found.append(largest_n_bracketed(accuracy, tau, guess, factor=factor, rel_tol=rel_tol))
            guess = found[-1]
            bar.update()
        points.append(FrontierPoint(dim, tuple(found)))
    return points


def _next_guess(points: Sequence[FrontierPoint], dim: int, n_outputs: int | None) -> int:
    if not points:
        return frontier_guess(dim, n_outputs)
    last = points[-1]
    ratio = frontier_guess(dim, n_outputs) / frontier_guess(last.dim, n_outputs)
    return max(2, round(last.median * ratio))


def capacity_frontier(
    memory: str,
    dims: Sequence[int],
    *,
    tau: float = 0.99,
    n_outputs: int | None = None,
    trials: int | None = None,
    repeats: int | None = None,
    seed: int = 0,
    lr: float = 1.0,
    max_steps: int = 1000,
    rel_tol: float = 0.02,
    factor: float = 1.25,
    first_guess: int | None = None,
    device: str = "cpu",
    memory_gb: float = DEFAULT_MEMORY_GB,
    log: Callable[[str], None] | None = None,
    progress: bool = False,
) -> list[FrontierPoint]:
    """N*(d) of one memory for each d: what ``assocmem capacity`` and a ``capacity`` run compute.

    Parameters
    ----------
    memory : {"hebbian", "trained"}
        :func:`hebbian_frontier` (the outer product) or :func:`trained_frontier` (W by
        full-batch Adam at learning rate ``lr`` within ``max_steps``; ``rel_tol``, ``factor``,
        ``first_guess`` and ``log`` are its search's, unused by the Hebbian search).
    trials, repeats : int, optional
        Draws averaged per accuracy and independent searches per d; default
        :data:`REPLICATES` of the memory.

    Returns
    -------
    list of FrontierPoint
        One per d, in increasing d.

    Raises
    ------
    ConfigError
        Naming the first field at fault (``rel_tol`` in (0, 1), ``factor`` > 1, ``first_guess``
        ≥ 2 are checked for either memory).
    """
    if memory not in MEMORIES:
        raise unknown_name("memory", "value", memory, MEMORIES)
    _check_bracketing(rel_tol, factor, first_guess)
    default_trials, default_repeats = REPLICATES[memory]
    common: dict[str, Any] = {
        "tau": tau, "n_outputs": n_outputs, "trials": trials or default_trials,
        "repeats": repeats or default_repeats, "seed": seed, "device": device,
        "memory_gb": memory_gb, "progress": progress,
    }  # fmt: skip
    if memory == "hebbian":
        return hebbian_frontier(dims, **common)
    settings = AdamSettings(lr=lr, max_steps=max_steps)
    return trained_frontier(dims, settings=settings, rel_tol=rel_tol, factor=factor,
                            first_guess=first_guess, log=log, **common)  # fmt: skip


def _check_bracketing(rel_tol: float, factor: float, first_guess: int | None) -> None:
    if not 0 < rel_tol < 1:
        raise ConfigError("rel_tol", f"must be in (0, 1), got {rel_tol}")
    if not factor > 1:
        raise ConfigError("factor", f"must be > 1, got {factor}")
    if first_guess is not None and first_guess < 2:
        raise ConfigError("first_guess", f"must be an integer ≥ 2, got {first_guess}")


def capacity_bytes(
    dims: Sequence[int], memory: str, n_outputs: int | None, trials: int, n_reach: int
) -> int:
    """Peak bytes of one accuracy evaluation at the largest d and the largest N the search is
    expected to try (``n_reach``): the hebbian memory is a closed-form run with q = 1 (M = N
    when ``n_outputs`` is None), the trained one holds E, U, W and Adam's two moments and the
    N×M logits for each of ``trials`` draws (float32)."""
    d, n = max(dims), n_reach
    m = n if n_outputs is None else min(n_outputs, n)
    if memory == "hebbian":
        cfg = ClosedFormConfig(
            n_inputs=n, n_outputs=m, probabilities=None, schemes=("uniform",), dims=(d,),
            trials=trials, embedding="gaussian", output_embedding="gaussian",
            memory_gb=math.inf,
        )  # fmt: skip
        return 2 * working_set_bytes(cfg)
    return 4 * trials * (n * d + m * d + 4 * d * d + 3 * n * m)


def check_capacity_memory(
    dims: Sequence[int],
    memory: str,
    n_outputs: int | None,
    trials: int,
    n_reach: int,
    memory_gb: float = DEFAULT_MEMORY_GB,
) -> None:
    """Refuse a capacity search whose largest evaluation (:func:`capacity_bytes`) exceeds
    ``memory_gb``."""
    if not dims:
        raise ConfigError("dims", "give at least one dimension d")
    need = capacity_bytes(dims, memory, n_outputs, trials, n_reach)
    what = f"the {memory} search at d = {max(dims)} (up to N ≈ {n_reach})"
    check_budget(need, memory_gb, what, "lower dims or trials")

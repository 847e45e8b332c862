r"""Capacity frontier: the most associations a d-dimensional memory stores at top-1 accuracy ≥ τ.

Two memories: ``hebbian`` (the outer-product memory, closed form) and ``trained`` (W optimised by
full-batch Adam on the cross-entropy, fixed random E and U, see
:mod:`assocmem.training.memorize`).

The outer-product (Hebbian) memory :math:`W = \sum_x u_{f^*(x)} e_x^\top` is the closed-form memory
with :math:`q = 1` under a uniform law over the N inputs; its accuracy is :math:`1 -` the
closed-form error. The frontier ``N*(d)`` is found by a search over N (doubling, then bisection on
the mean accuracy over ``trials`` draws), repeated with independent seeds to give an interval.
Published references for comparison: trained linear memories reach about
:math:`d^2 \approx 1.3\cdot N\cdot \log N` (Nichani, Lee, Bietti 2025); the sharp threshold is
conjectured at :math:`d^2 \approx 2\cdot N\cdot \log N` (Barnfield et al. 2026).
"""

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from assocmem import rng
from assocmem.analysis.memory import check_capacity_memory
from assocmem.closed_form import run_closed_form
from assocmem.closed_form.config import ClosedFormConfig
from assocmem.config.checks import int_at_least, ints_at_least
from assocmem.config.errors import ConfigError
from assocmem.config.memory import DEFAULT_MEMORY_GB
from assocmem.embeddings import draw_embeddings
from assocmem.progress import progress_bar
from assocmem.training.memorize import AdamSettings, MemorizeResult, check_settings, memorize

MEMORIES = ("hebbian", "trained")
REFERENCE_CONSTANTS = {  # d² ≈ c · N log N
    "trained linear memory (Nichani, Lee, Bietti 2025)": 1.3,
    "conjectured sharp threshold (Barnfield et al. 2026)": 2.0,
}


@dataclass(frozen=True)
class FrontierPoint:
    """N*(d) found by each repeated search, and the constants it implies."""

    dim: int
    n_star: tuple[int, ...]  # one per repeat (independent seeds)

    @property
    def median(self) -> float:
        return float(np.median(self.n_star))

    def constant(self) -> np.ndarray:
        r""":math:`d^2 / (N^* \log N^*)` for each repeat."""
        n = np.asarray(self.n_star, dtype=float)
        constants: np.ndarray = self.dim**2 / (n * np.log(n))
        return constants


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


def largest_n(
    accuracy: Callable[[int], float], tau: float, n_min: int = 2, n_max: int = 10**6
) -> int:
    r"""Largest N in [n_min, n_max] with :math:`\mathrm{accuracy}(N) \ge \tau`, assuming accuracy
    falls with N.

    Doubling from n_min, then bisection: O(log N) evaluations. Returns n_min - 1 if even n_min
    fails.
    """
    if accuracy(n_min) < tau:
        return n_min - 1
    low, high = n_min, n_min
    while high < n_max:
        high = min(2 * high, n_max)
        if accuracy(high) < tau:
            break
        low = high
    else:
        return n_max
    while high - low > 1:  # accuracy(low) ≥ τ > accuracy(high)
        mid = (low + high) // 2
        low, high = (mid, high) if accuracy(mid) >= tau else (low, mid)
    return low


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


def check_search(dims: Sequence[int], tau: float, trials: int, repeats: int) -> None:
    """The settings every frontier search shares: distinct dims ≥ 1, τ in (0, 1), counts ≥ 1."""
    ints_at_least("dims", dims, 1)
    if len(set(dims)) != len(dims):
        raise ConfigError("dims", f"each d may be given once, got {list(dims)}")
    if not 0 < tau < 1:
        raise ConfigError("tau", f"must be in (0, 1), got {tau}")
    int_at_least("trials", trials, 1)
    int_at_least("repeats", repeats, 1)


def _median_ci(values: np.ndarray, gen: np.random.Generator, n_boot: int) -> tuple[float, float]:
    """95 % percentile-bootstrap interval of the median of ``values``."""
    boot = np.median(gen.choice(values, size=(n_boot, values.size)), axis=1)
    return float(np.percentile(boot, 2.5)), float(np.percentile(boot, 97.5))


@dataclass(frozen=True)
class FrontierFit:
    r"""The frontier's constants: per d, :math:`c = d^2/(N^* \log N^*)` and :math:`d/N^*`; overall
    :math:`N^* \propto d^k`.

    Intervals are 95 % bootstrap intervals over the repeated searches (seeded).
    """

    dims: tuple[int, ...]
    n_star: tuple[float, ...]  # median over repeats
    constant: tuple[float, ...]  # median d²/(N* log N*)
    constant_ci: tuple[tuple[float, float], ...]
    d_over_n: tuple[float, ...]
    exponent: float  # least-squares slope of log N* against log d
    exponent_ci: tuple[float, float]
    d_over_n_ci: tuple[tuple[float, float], ...] = ()  # 95 % bootstrap of median d/N* per d


def fit_frontier(points: Sequence[FrontierPoint], n_boot: int = 2000, seed: int = 0) -> FrontierFit:
    gen = np.random.default_rng(seed)
    dims = np.array([p.dim for p in points], dtype=float)
    samples = [np.asarray(p.n_star, dtype=float) for p in points]

    def slope(n: np.ndarray) -> float:
        return float(np.polyfit(np.log(dims), np.log(n), 1)[0]) if len(dims) > 1 else math.nan

    medians = np.array([np.median(s) for s in samples])
    boot = [
        slope(np.array([np.median(gen.choice(s, s.size)) for s in samples])) for _ in range(n_boot)
    ]
    return FrontierFit(
        dims=tuple(int(d) for d in dims),
        n_star=tuple(medians.tolist()),
        constant=tuple(float(np.median(p.constant())) for p in points),
        constant_ci=tuple(_median_ci(p.constant(), gen, n_boot) for p in points),
        d_over_n=tuple((dims / medians).tolist()),
        exponent=slope(medians),
        exponent_ci=(
            (float(np.nanpercentile(boot, 2.5)), float(np.nanpercentile(boot, 97.5)))
            if len(dims) > 1
            else (math.nan, math.nan)  # one d: no exponent
        ),
        d_over_n_ci=tuple(
            _median_ci(p.dim / np.asarray(p.n_star, float), gen, n_boot) for p in points
        ),  # fmt: skip
    )


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


def largest_n_bracketed(
    accuracy: Callable[[int], float],
    tau: float,
    guess: int,
    *,
    factor: float = 1.25,
    rel_tol: float = 0.02,
    n_min: int = 2,
    n_max: int = 10**6,
) -> int:
    r"""Largest N with :math:`\mathrm{accuracy}(N) \ge \tau`, to a relative precision ``rel_tol``,
    from a guess.

    Brackets by steps of ``factor`` up or down from ``guess``, then bisects (geometrically)
    until :math:`\mathrm{high} / \mathrm{low} \le 1 + \mathrm{rel\_tol}` or
    :math:`\mathrm{high} - \mathrm{low} \le 1`. Each evaluation is a training run, so a good guess
    and a coarse tolerance matter more than exactness. Returns the largest N seen to pass
    (:math:`n_{\min} - 1` if even n_min fails; ``n_max`` if n_max passes).
    """
    n = min(max(guess, n_min), n_max)
    if accuracy(n) >= tau:
        low, high = n, n_max + 1
        while low < n_max:
            nxt = min(max(round(low * factor), low + 1), n_max)
            if accuracy(nxt) < tau:
                high = nxt
                break
            low = nxt
        else:
            return n_max
    else:
        low, high = n_min - 1, n
        while high > n_min:
            nxt = max(min(round(high / factor), high - 1), n_min)
            if accuracy(nxt) >= tau:
                low = nxt
                break
            high = nxt
        else:
            return n_min - 1
    while high - low > 1 and high > low * (1 + rel_tol):
        mid = min(max(round(math.sqrt(low * high)), low + 1), high - 1)
        low, high = (mid, high) if accuracy(mid) >= tau else (low, mid)
    return low


def frontier_guess(dim: int, n_outputs: int | None, constant: float = 1.3) -> int:
    r"""A starting N for the search: :math:`d^2 = c\cdot N \log N` for M = N, :math:`N = d` for a
    small M.

    With a small M the logits :math:`u_y^\top W e_x` depend on W only through the M×d matrix U W, so
    a trained memory is a linear classifier with M·d parameters and N* grows like d, not d².
    """
    if n_outputs is not None:
        return max(2, dim)
    n = max(2.0, dim**2 / constant)
    for _ in range(50):  # fixed point of N = d² / (c log N)
        n = dim**2 / (constant * math.log(max(n, 2.0)))
    return max(2, round(n))


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
    reach exceeds ``memory_gb`` (see :func:`assocmem.analysis.memory.capacity_bytes`).
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

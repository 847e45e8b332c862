"""Capacity frontier: the most associations a d-dimensional memory stores at top-1 accuracy ≥ τ.

The outer-product (Hebbian) memory ``W = Σ_x u_{f*(x)} e_xᵀ`` is the closed-form memory with
``q = 1`` under a uniform law over the N inputs; its accuracy is ``1 −`` the closed-form error.
The frontier ``N*(d)`` is found by a search over N (doubling, then bisection on the mean accuracy
over ``trials`` draws), repeated with independent seeds to give an interval. Published references
for comparison: trained linear memories reach about ``d² ≈ 1.3·N·log N`` (Nichani, Lee, Bietti
2025); the sharp threshold is conjectured at ``d² ≈ 2·N·log N`` (Barnfield et al. 2026).
"""

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from assocmem.closed_form import run_closed_form
from assocmem.config import ClosedFormConfig
from assocmem.errors import ConfigError


@dataclass(frozen=True)
class FrontierPoint:
    """N*(d) found by each repeated search, and the constants it implies."""

    dim: int
    n_star: tuple[int, ...]  # one per repeat (independent seeds)

    @property
    def median(self) -> float:
        return float(np.median(self.n_star))

    def constant(self) -> np.ndarray:
        """``d² / (N* log N*)`` for each repeat."""
        n = np.asarray(self.n_star, dtype=float)
        return self.dim**2 / (n * np.log(n))


def hebbian_accuracy(
    n_inputs: int, dim: int, n_outputs: int | None, trials: int, seed: int, device: str = "cpu"
) -> float:
    """Mean top-1 accuracy of the outer-product memory over ``trials`` draws (uniform inputs).

    ``n_outputs=None`` gives each input its own output (M = N); otherwise ``f*(x) = x mod M``.
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
        memory_gb=16.0,
    )
    return 1.0 - float(run_closed_form(cfg).errors.mean())


def largest_n(
    accuracy: Callable[[int], float], tau: float, n_min: int = 2, n_max: int = 10**6
) -> int:
    """Largest N in [n_min, n_max] with ``accuracy(N) ≥ τ``, assuming accuracy falls with N.

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
) -> list[FrontierPoint]:
    """N*(d) of the outer-product memory for each d, from ``repeats`` independent searches."""
    if not 0 < tau < 1:
        raise ConfigError("tau", f"must be in (0, 1), got {tau}")
    points = []
    for dim in dims:
        found = []
        for r in range(repeats):
            run_seed = seed * 1_000_003 + r  # independent draws per repeat

            def accuracy(n: int, run_seed: int = run_seed, dim: int = dim) -> float:
                return hebbian_accuracy(n, dim, n_outputs, trials, run_seed, device)

            found.append(largest_n(accuracy, tau, n_min=2))
        points.append(FrontierPoint(dim, tuple(found)))
    return points


def _median_ci(values: np.ndarray, gen: np.random.Generator, n_boot: int) -> tuple[float, float]:
    """95 % percentile-bootstrap interval of the median of ``values``."""
    boot = np.median(gen.choice(values, size=(n_boot, values.size)), axis=1)
    return float(np.percentile(boot, 2.5)), float(np.percentile(boot, 97.5))


@dataclass(frozen=True)
class FrontierFit:
    """The frontier's constants: per d, ``c = d²/(N* log N*)`` and ``d/N*``; overall ``N* ∝ d^k``.

    Intervals are 95 % bootstrap intervals over the repeated searches (seeded).
    """

    dims: tuple[int, ...]
    n_star: tuple[float, ...]  # median over repeats
    constant: tuple[float, ...]  # median d²/(N* log N*)
    constant_ci: tuple[tuple[float, float], ...]
    d_over_n: tuple[float, ...]
    exponent: float  # least-squares slope of log N* against log d
    exponent_ci: tuple[float, float]


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
        exponent_ci=(float(np.nanpercentile(boot, 2.5)), float(np.nanpercentile(boot, 97.5))),
    )

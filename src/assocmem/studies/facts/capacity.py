r"""Capacity of memories of N facts with as many answers (M = N), and the bits they store.

N facts ``x ↦ f*(x)``, f* a seeded random permutation, p uniform (α = 0). For each memory kind
and d, the capacity N*(d) is the largest N retrieved with mean top-1 accuracy ≥ τ over
``trials`` draws, found by :func:`assocmem.analysis.frontier.largest_n_bracketed` from the
theory's guess. Memory kinds:

- ``closed_form``: the outer-product memory :math:`W = \sum_x u_{f^*(x)} e_x^\top` (q uniform),
  its accuracy exact per draw from the closed-form engine (top-1 over the M outputs in blocks
  at large N·M);
- ``linear`` and ``mlp``, trained by ``sgd`` or ``adam`` (sign-like) of the optimiser registry
  (:mod:`assocmem.studies.facts.memories`), every learning rate of ``lrs`` trained in the same
  tensor program; an evaluation passes when the best learning rate's trial mean reaches τ.

Bits stored (a Fano bound): the information of f* as drawn, less Fano's term for an error rate
ε over the N facts with M answers, ``H(f*) − N·(h(ε) + ε·log₂(M − 1))`` (h the binary
entropy), divided by the trained parameters (d² linear, 2dh MLP, d² for the outer-product
memory's W). f* is drawn uniformly among the balanced maps
(:func:`~assocmem.laws.tokens.random_targets`: a permutation at M = N), so
``H(f*) = log₂(N! / ∏_y n_y!)``, log₂ N! at M = N; independent targets would hold
``N·log₂ M``. Records keep N*, the accuracy and d, and the bits are derived from them when read
(:func:`bits_per_parameter`): one formula for every record.
"""

import math
from collections.abc import MutableMapping, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from assocmem import rng
from assocmem.analysis.frontier import frontier_guess, largest_n_bracketed
from assocmem.closed_form import run_closed_form
from assocmem.closed_form.config import ClosedFormConfig
from assocmem.embeddings import draw_embeddings
from assocmem.laws.tokens import random_targets
from assocmem.studies.facts.memories import TrainSettings, train_memory, trained_parameters

MEMORIES = ("closed_form", "linear", "mlp")
OPTIMIZERS = ("sgd", "adam")  # trained memories: registry names (adam: sign-like, betas (0, 0))
LM_BITS_PER_PARAMETER = 2.0  # trained language models (Allen-Zhu and Li 2024)
# d² ≈ c·N log N at the threshold: the first guess of a search (measured: docs/beyond/capacity.md)
GUESS_CONSTANT = {"closed_form": 6.0, "linear": 1.3, "mlp": 1.3}


def binary_entropy(eps: float) -> float:
    """h(ε) = −ε log₂ ε − (1 − ε) log₂(1 − ε), in bits (0 at ε ∈ {0, 1})."""
    if eps <= 0 or eps >= 1:
        return 0.0
    return -eps * math.log2(eps) - (1 - eps) * math.log2(1 - eps)


def target_information(n_facts: int, n_outputs: int, targets: str = "balanced") -> float:
    """H(f*) in bits: ``log₂(N! / ∏_y n_y!)`` for a map drawn uniformly among the balanced ones
    (n_y = ⌈N/M⌉ inputs for N mod M outputs, ⌊N/M⌋ for the others; log₂ N! at M = N), or
    ``N·log₂ M`` for ``targets = "independent"`` (each f*(x) drawn alone)."""
    if targets == "independent":
        return n_facts * math.log2(n_outputs)
    if targets != "balanced":
        raise ValueError(f"targets must be 'balanced' or 'independent', got {targets!r}")
    small, extra = divmod(n_facts, n_outputs)  # extra outputs hold small + 1 inputs
    ln_ways = math.lgamma(n_facts + 1) - extra * math.lgamma(small + 2)
    ln_ways -= (n_outputs - extra) * math.lgamma(small + 1)
    return ln_ways / math.log(2)


def fano_term(n_facts: int, n_outputs: int, error: float) -> float:
    """``N·(h(ε) + ε·log₂(M − 1))``: Fano's bound on what f* still leaves unknown, in bits, to a
    memory wrong on a fraction ε of its N facts (summed over facts: H(f*|f̂) ≤ Σ_x H(f*(x)|f̂(x)))."""
    per_fact = binary_entropy(error)
    per_fact += error * math.log2(n_outputs - 1) if n_outputs > 1 else 0.0
    return n_facts * per_fact


def bits_stored(n_facts: int, n_outputs: int, error: float, targets: str = "balanced") -> float:
    """``H(f*) − N·(h(ε) + ε·log₂(M − 1))``, at least 0: the bits about f* a memory with error
    rate ε holds (Fano), never above :func:`target_information`, equal to it at ε = 0. NaN for
    a NaN error (a search that recorded no accuracy)."""
    if math.isnan(error):
        return math.nan
    information = target_information(n_facts, n_outputs, targets)
    return max(0.0, information - fano_term(n_facts, n_outputs, error))


def loss_bits(n_facts: int, n_outputs: int, summed_loss: float, targets: str = "balanced") -> float:
    r""":math:`H(f^*) - \sum_x \mathrm{CE}_x / \ln 2`: the bits stored by the loss-based measure
    (as Allen-Zhu and Li count them), from the cross-entropy summed over the N facts in nats; at
    least 0."""
    information = target_information(n_facts, n_outputs, targets)
    return max(0.0, information - summed_loss / math.log(2))


def memory_parameters(memory: str, dim: int, n_facts: int) -> tuple[int, int]:
    """(trained parameters, with the fixed embeddings E and U counted too) at N = M facts."""
    trained = dim * dim if memory == "closed_form" else trained_parameters(memory, dim)
    return trained, trained + 2 * n_facts * dim


def facts_problem(
    n_facts: int, dim: int, trials: int, seed: int, device: str = "cpu"
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The trials' E (R, N, d) and U (R, N, d), Gaussian ``N(0, 1/d)``, and f* (N,): a random
    permutation; each drawn from streams keyed by (seed, N, d, trial). Drawn on the CPU, then
    moved to ``device``: every device trains on the same bits."""
    draws = [
        (
            draw_embeddings(
                "gaussian", n_facts, dim, rng.generator(seed, "embeddings", n_facts, dim, t)
            ),
            draw_embeddings(
                "gaussian", n_facts, dim, rng.generator(seed, "output_embeddings", n_facts, dim, t)
            ),
        )
        for t in range(trials)
    ]
    targets = random_targets(n_facts, n_facts, rng.generator(seed, "targets", n_facts))
    E = torch.stack([e for e, _ in draws]).to(device)
    return E, torch.stack([u for _, u in draws]).to(device), targets.to(device)


@dataclass(frozen=True)
class Evaluation:
    """One evaluation of a search: N, the mean accuracy over trials (at the best lr), that lr."""

    n_facts: int
    accuracy: float
    lr: float | None = None


def closed_form_evaluation(
    n_facts: int, dim: int, trials: int, seed: int, device: str = "cpu"
) -> Evaluation:
    """Mean top-1 accuracy of the outer-product memory of N uniform facts, M = N, random f*."""
    cfg = closed_form_config(n_facts, dim, trials, seed, device=device)
    return Evaluation(n_facts, 1.0 - float(run_closed_form(cfg).errors.mean()))


def closed_form_config(
    n_facts: int, dim: int, trials: int, seed: int, sampler: str = "auto", device: str = "cpu"
) -> ClosedFormConfig:
    """The closed-form configuration of :func:`closed_form_evaluation` (q uniform, α = 0; the
    sampler chosen by cost, exact in law either way)."""
    return ClosedFormConfig(
        sampler=sampler,
        n_inputs=n_facts,
        n_outputs=n_facts,
        alpha=0.0,
        target="random",
        schemes=("uniform",),
        dims=(dim,),
        trials=trials,
        seed=seed,
        embedding="gaussian",
        output_embedding="gaussian",
        memory_gb=2.0,
        device=device,
    )


def trained_evaluation(
    n_facts: int,
    dim: int,
    trials: int,
    seed: int,
    settings: TrainSettings,
    lrs: Sequence[float],
    tau: float,
    device: str = "cpu",
) -> Evaluation:
    """Train ``trials`` memories at every lr of ``lrs`` in one tensor program on ``device``;
    the best lr's mean accuracy. Stops once one lr's mean reaches τ (or none can)."""
    E, U, targets = facts_problem(n_facts, dim, trials, seed, device)
    k = len(lrs)
    E, U = E.repeat(k, 1, 1), U.repeat(k, 1, 1)  # runs: lr-major, trials within
    init = rng.generator(seed, "init", n_facts, dim)
    rates = torch.tensor(lrs, dtype=torch.float32, device=device).repeat_interleave(trials)
    result = train_memory(E, U, targets, init, tau=tau, settings=settings, lrs=rates, groups=k)
    per_lr = result.accuracy.view(k, trials).mean(1)
    best = int(per_lr.argmax())
    return Evaluation(n_facts, float(per_lr[best]), float(lrs[best]))


@dataclass(frozen=True)
class CapacityPoint:
    """N*(d) of one search, the accuracy there, and every evaluation it made."""

    n_star: int
    accuracy: float
    lr: float | None
    evaluations: tuple[Evaluation, ...]


def search_capacity(
    memory: str,
    dim: int,
    *,
    trials: int,
    seed: int,
    tau: float = 0.99,
    settings: TrainSettings | None = None,
    lrs: Sequence[float] = (),
    rel_tol: float = 0.03,
    factor: float = 1.25,
    device: str = "cpu",
    memo: MutableMapping[int, Evaluation] | None = None,
) -> CapacityPoint:
    """The largest N stored at mean accuracy ≥ τ by one memory kind at dimension d, every
    evaluation computed on ``device``.

    ``memo`` (N → :class:`Evaluation`), when given, receives each evaluation as soon as it is
    made, and answers the N it already holds instead of training again: a search interrupted
    and resumed with the same memo (a sweep run's journal) makes the same evaluations in the
    same order and returns the same point, bit for bit. Only the N the search visits are
    read from it and reported in ``evaluations``.
    """
    seen: dict[int, Evaluation] = {}

    def evaluate(n: int) -> Evaluation:
        if memory == "closed_form":
            return closed_form_evaluation(n, dim, trials, seed, device)
        assert settings is not None and lrs
        return trained_evaluation(n, dim, trials, seed, settings, lrs, tau, device=device)

    def accuracy(n: int) -> float:
        if n not in seen:
            if memo is not None and n in memo:
                seen[n] = memo[n]
            else:
                seen[n] = evaluate(n)
                if memo is not None:
                    memo[n] = seen[n]  # kept before the search goes on
        return seen[n].accuracy

    guess = frontier_guess(dim, None, GUESS_CONSTANT[memory])
    n_star = largest_n_bracketed(accuracy, tau, guess, factor=factor, rel_tol=rel_tol)
    at = seen.get(n_star, Evaluation(n_star, math.nan))
    evaluations = tuple(seen[n] for n in sorted(seen))
    return CapacityPoint(n_star, at.accuracy, at.lr, evaluations)


def bits_per_parameter(memory: str, dim: int, n_star: float, accuracy: float) -> dict[str, float]:
    """Bits stored at the capacity point, per trained parameter and per parameter counting the
    fixed embeddings (N·d each for E and U)."""
    n = int(n_star)
    bits = bits_stored(n, n, 1.0 - accuracy)
    trained, with_embeddings = memory_parameters(memory, dim, n)
    return {
        "bits": bits,
        "trained_parameters": float(trained),
        "bits_per_parameter": bits / trained,
        "bits_per_parameter_with_embeddings": bits / with_embeddings,
    }


def capacity_exponent(dims: Sequence[int], n_star: np.ndarray, seed: int = 0) -> dict[str, float]:
    r""":math:`N^* \propto d^\beta`: the least-squares slope of log N* on log d with the
    trial-bootstrap interval of :func:`assocmem.analysis.fit.fit_scaling` (the repeats as trials).

    n_star: (repeats, len(dims)).
    """
    from assocmem.analysis.fit import fit_scaling

    fit = fit_scaling(dims, n_star, window=(min(dims), max(dims)), n_boot=1000, seed=seed)
    return {"beta": fit.slope, "beta_low": fit.ci_low, "beta_high": fit.ci_high}

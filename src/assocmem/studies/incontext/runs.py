"""One in-context run: a memory rule read on R contexts of one task, at every (d, T) of a grid,
with its capacity T*(d) and, for the Hebbian state, the theory's prediction on the same contexts.

Trial k of a run reads contexts ``k·R … k·R + R − 1`` of its seed's streams (disjoint across
trials; the same whatever other runs share its batch), so trials are independent draws.
"""

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from assocmem.config.checks import int_at_least, ints_at_least
from assocmem.config.errors import ConfigError, unknown_name
from assocmem.embeddings import check_kind
from assocmem.studies.incontext.capacity import Task, capacity
from assocmem.studies.incontext.contexts import check_queries
from assocmem.studies.incontext.states import RULES, Hebbian, Rule, recall_error
from assocmem.studies.incontext.theory import capacity_theory, hebbian_error

RULE_FIELDS = ("beta", "passes", "gate")  # the rules' parameters, each taken by some rules


@dataclass(frozen=True)
class InContextConfig:
    """The settings of one in-context run (one rule, one task; a trial index besides).

    Attributes
    ----------
    rule : {"hebbian", "delta", "softmax"}
        The memory written while reading: linear attention, the delta rule, softmax attention.
    beta : float
        The delta rule's write strength, softmax attention's inverse temperature (per √d;
        ``inf``: hard attention). Only the rules that take it.
    passes : int
        The delta rule's passes over the context.
    gate : float
        The decay γ ∈ (0, 1] of the Hebbian and delta states (1: none).
    n_keys, n_values : int
        N keys (Zipf(α) law) and M values.
    alpha : float
        The Zipf exponent of the keys (0: uniform).
    queries : {"context", "law"}
        Keys asked as written (MQAR's recall) or from the law (unwritten keys count).
    n_queries : int
        0: every key read (exact); Q > 0: Q sampled queries a context (long contexts).
    embedding : str
        Keys' and values' embedding kind.
    dims, n_pairs : tuple of int
        The grid of d and of T (pairs written, repeats included; may be empty).
    contexts : int
        R contexts a trial.
    tau, max_pairs : float, int
        The capacity's recall level and the largest T it searches.
    theory_contexts : int
        Contexts of each trial on which the Hebbian theory is evaluated (0: none).
    """

    rule: str = "hebbian"
    beta: float = 1.0
    passes: int = 1
    gate: float = 1.0
    n_keys: int = 1000
    n_values: int = 8
    alpha: float = 0.0
    queries: str = "context"
    n_queries: int = 0
    embedding: str = "gaussian"
    dims: tuple[int, ...] = (8, 16, 32)
    n_pairs: tuple[int, ...] = ()
    contexts: int = 20
    tau: float = 0.99
    max_pairs: int = 10**5
    theory_contexts: int = 4
    seed: int = 0
    device: str = "cpu"

    def memory(self) -> Rule:
        """The rule with the parameters it takes."""
        taken = taken_fields(self.rule)
        return RULES[self.rule](**{name: getattr(self, name) for name in taken})

    def task(self, trial: int) -> Task:
        """The contexts of trial ``trial``: R of them, after those of the trials before."""
        return Task(
            self.n_keys, self.n_values, self.alpha, self.contexts, self.queries,
            self.embedding, self.seed, self.n_queries, first=trial * self.contexts,
        )  # fmt: skip


def taken_fields(rule: str | None) -> tuple[str, ...]:
    """The parameters of :data:`RULE_FIELDS` that ``rule`` takes (all of them for None; none
    for an unknown rule)."""
    if rule is None:
        return RULE_FIELDS
    taken = set(getattr(RULES.get(rule), "__dataclass_fields__", {}))
    return tuple(name for name in RULE_FIELDS if name in taken)


def check_incontext(cfg: InContextConfig) -> InContextConfig:
    """``cfg`` if every field is allowed, else a ConfigError naming the first at fault."""
    if cfg.rule not in RULES:
        raise unknown_name("rule", "memory rule", cfg.rule, list(RULES))
    taken = set(taken_fields(cfg.rule))
    for name in RULE_FIELDS:
        default = getattr(InContextConfig, name)
        if name not in taken and getattr(cfg, name) != default:
            raise ConfigError(name, f"the {cfg.rule} rule takes no {name} (leave it {default})")
    cfg.memory().check()
    for name, low in (("n_keys", 1), ("n_values", 2), ("n_queries", 0), ("contexts", 1)):
        int_at_least(name, getattr(cfg, name), low)
    int_at_least("max_pairs", cfg.max_pairs, 1)
    int_at_least("theory_contexts", cfg.theory_contexts, 0)
    if cfg.theory_contexts > cfg.contexts:
        raise ConfigError("theory_contexts", f"must be ≤ contexts ({cfg.contexts})")
    if not (isinstance(cfg.alpha, float) and math.isfinite(cfg.alpha) and cfg.alpha >= 0):
        raise ConfigError("alpha", f"must be a finite number ≥ 0, got {cfg.alpha!r}")
    if not 0 < cfg.tau < 1:
        raise ConfigError("tau", f"must be in (0, 1), got {cfg.tau!r}")
    check_queries(cfg.queries)
    check_kind("embedding", cfg.embedding)
    ints_at_least("dims", cfg.dims, 1)
    if cfg.n_pairs:
        ints_at_least("n_pairs", cfg.n_pairs, 1)
    return cfg


def make_rule(rule: str, beta: float = 1.0, passes: int = 1, gate: float = 1.0) -> Rule:
    """The registered rule ``rule`` with the parameters it takes."""
    return InContextConfig(rule=rule, beta=beta, passes=passes, gate=gate).memory()


def theory_capacity(cfg: InContextConfig, dim: int) -> float:
    """The theory's T*(d) for this run's rule and task (NaN where it has none)."""
    probs = Task(cfg.n_keys, cfg.n_values, cfg.alpha).probs().numpy()
    return capacity_theory(cfg.memory(), probs, cfg.n_values, dim, cfg.tau, cfg.max_pairs)


def _guess(cfg: InContextConfig, dim: int) -> int:
    """Where the capacity search starts: the theory's T* where there is one, else d."""
    found = theory_capacity(cfg, dim)
    return dim if math.isnan(found) else max(1, round(found))


def _theory(cfg: InContextConfig, contexts: Any) -> np.ndarray | None:
    """The Hebbian prediction (len(dims), len(n_pairs), theory_contexts), or None."""
    rule = cfg.memory()
    if not isinstance(rule, Hebbian) or not cfg.theory_contexts or not cfg.n_pairs:
        return None
    some = contexts.select(0, cfg.theory_contexts)
    by_t = [
        hebbian_error(
            some.prefix(t), cfg.dims, gate=rule.gate, queries=cfg.queries, embedding=cfg.embedding
        )  # fmt: skip
        for t in cfg.n_pairs
    ]
    return np.stack(by_t, axis=2).transpose(1, 2, 0)  # (D, T, R')


def _errors(cfg: InContextConfig, rule: Rule, task: Task) -> tuple[np.ndarray, np.ndarray, Any]:
    """Mean and sd over the contexts of the recall error at every (d, T), (D, T) each, and the
    contexts of the largest T (None without a grid). Without sampled queries the contexts of
    every T are prefixes of one draw; with them each T draws its own queries."""
    error = np.zeros((len(cfg.dims), len(cfg.n_pairs)))
    spread = np.full_like(error, math.nan)
    if not cfg.n_pairs:
        return error, spread, None
    longest = task.contexts_at(max(cfg.n_pairs))
    for j, t in enumerate(cfg.n_pairs):
        cut = longest.prefix(t) if not cfg.n_queries else task.contexts_at(t)
        for i, d in enumerate(cfg.dims):
            e = recall_error(
                rule, cut, d, queries=cfg.queries, embedding=cfg.embedding, seed=cfg.seed
            ).numpy()
            error[i, j] = e.mean()
            spread[i, j] = e.std(ddof=1) if e.size > 1 else math.nan
    return error, spread, longest


def run_incontext(cfg: InContextConfig, trial: int) -> dict[str, Any]:
    """The metrics document of one trial: per (d, T) the mean and standard deviation over the
    R contexts of the recall error, per d the capacity T*(d) (recall ≥ τ), and, for the
    Hebbian state, the predicted error on the first ``theory_contexts`` contexts (mean, sd)."""
    rule, task = cfg.memory(), cfg.task(trial)
    error, spread, longest = _errors(cfg, rule, task)
    found = [
        capacity(rule, task, d, tau=cfg.tau, max_pairs=cfg.max_pairs, guess=_guess(cfg, d))
        for d in cfg.dims
    ]
    theory = _theory(cfg, longest) if longest is not None else None
    spread_theory = theory.std(2, ddof=1) if theory is not None and theory.shape[2] > 1 else None
    return {
        "dims": list(cfg.dims),
        "n_pairs": list(cfg.n_pairs),
        "error": error.tolist(),
        "error_sd": spread.tolist(),
        "capacity": found,
        "predicted": None if theory is None else theory.mean(2).tolist(),
        "predicted_sd": None if spread_theory is None else spread_theory.tolist(),
    }


def work(cfg: InContextConfig) -> float:
    """A rough count of multiply-adds of one run: every (d, T) read once, the capacity search
    about twenty reads at the largest T."""
    rule = cfg.memory()
    longest = max(cfg.n_pairs, default=cfg.dims[-1])
    asked = cfg.n_queries or longest
    grid = sum(rule.cost(t, d, cfg.n_queries or t) for t in cfg.n_pairs for d in cfg.dims)
    search = 20 * sum(rule.cost(longest, d, asked) for d in cfg.dims)
    return float(cfg.contexts * (grid + search))

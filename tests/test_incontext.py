"""Memories written in context (assocmem.studies.incontext): the MQAR generator, pinned and
nested; each update rule's batched read against an explicit loop over one context's pairs; the
exact cases of the theory (orthonormal keys: the delta rule recalls every written key, the
Hebbian state's error under the law is the mass of the keys never written)."""

import pytest
import torch

from assocmem.config.errors import ConfigError
from assocmem.studies.incontext.contexts import mqar_contexts
from assocmem.studies.incontext.states import (
    DeltaRule,
    Hebbian,
    SoftmaxAttention,
    context_embeddings,
    key_weights,
    recall_error,
    wrong_at,
)


def test_the_generator_is_pinned():
    """Version 1's draws: a change here is a new GENERATOR_VERSION."""
    c = mqar_contexts(2, 6, 5, 3, alpha=1.0, n_queries=3, seed=7)
    assert c.keys.tolist() == [[0, 0, 0, 0, 0, 0], [0, 0, 0, 1, 2, 2]]
    assert c.values.tolist() == [[2, 2, 2, 2, 2, 2], [2, 2, 2, 2, 0, 0]]
    assert c.targets.tolist() == [[2, 2, 0, 1, 0], [2, 2, 0, 0, 0]]
    assert c.queries.tolist() == [[0, 0, 0], [0, 0, 2]]


def test_contexts_are_nested_in_t_and_independent_of_their_companions():
    long = mqar_contexts(3, 40, 50, 7, alpha=1.5, n_queries=5, seed=1)
    short = mqar_contexts(1, 25, 50, 7, alpha=1.5, n_queries=5, seed=1)
    assert torch.equal(short.keys[0], long.keys[0, :25])  # prefixes, whatever R
    assert torch.equal(short.targets[0], long.targets[0])
    assert torch.equal(long.values, long.targets.gather(1, long.keys))  # v_t = f(k_t)
    for r in range(3):  # queries from the context ask keys it wrote
        assert set(long.queries[r].tolist()) <= set(long.keys[r].tolist())
    other = mqar_contexts(3, 40, 50, 7, alpha=1.5, seed=2)
    assert not torch.equal(other.keys, long.keys)


@pytest.mark.parametrize(
    ("field", "kwargs"),
    [("n_values", {"n_values": 1}), ("n_pairs", {"n_pairs": 0}), ("queries", {"queries": "all"})],
)
def test_bad_arguments_name_their_field(field, kwargs):
    args = {"n_contexts": 2, "n_pairs": 5, "n_keys": 4, "n_values": 3} | kwargs
    with pytest.raises(ConfigError, match=f"^{field}"):
        mqar_contexts(**args)


def naive_read(rule, keys, values, query):
    """o(x) for one context by an explicit loop over its pairs (float64, no batching)."""
    d = keys.shape[1]
    if isinstance(rule, SoftmaxAttention):
        scores = torch.tensor([rule.beta * float(k @ query) for k in keys], dtype=torch.float64)
        weights = torch.exp(scores - scores.max())
        return sum(w * v for w, v in zip(weights / weights.sum(), values, strict=True))
    state = torch.zeros(d, d, dtype=torch.float64)
    passes = rule.passes if isinstance(rule, DeltaRule) else 1
    for _ in range(passes):
        for k, v in zip(keys, values, strict=True):
            state = rule.gate * state
            if isinstance(rule, DeltaRule):
                state = state + rule.beta * torch.outer(v - state @ k, k)
            else:
                state = state + torch.outer(v, k)
    return state @ query


@pytest.mark.parametrize(
    "rule",
    [
        Hebbian(),
        Hebbian(gate=0.9),
        DeltaRule(),
        DeltaRule(beta=0.5, passes=3),
        DeltaRule(beta=0.7, gate=0.95),
        SoftmaxAttention(beta=3.0),
    ],
)
def test_each_rule_reads_what_an_explicit_loop_reads(rule):
    c = mqar_contexts(3, 12, 9, 4, alpha=1.0, seed=3)
    e, u = context_embeddings(c, 6, seed=3)
    written_e = torch.stack([e[r, c.keys[r]] for r in range(3)])
    written_u = torch.stack([u[r, c.values[r]] for r in range(3)])
    batched = rule.read(written_e, written_u, e)
    for r in range(3):
        for x in range(9):
            expected = naive_read(rule, written_e[r], written_u[r], e[r, x])
            torch.testing.assert_close(batched[r, x], expected, rtol=1e-10, atol=1e-12)


def test_with_orthonormal_keys_the_delta_rule_recalls_every_written_key():
    """β = 1, one pass, d ≥ N orthonormal keys: each write sets S e_k = u_v exactly (a key
    written again rewrites the same value), whatever T."""
    c = mqar_contexts(4, 60, 20, 5, alpha=1.0, seed=0)
    errors = recall_error(DeltaRule(), c, 24, embedding="orthogonal")
    assert torch.equal(errors, torch.zeros(4, dtype=torch.float64))
    assert (recall_error(Hebbian(), c, 24, embedding="orthogonal") == 0).all()


def test_the_hebbian_law_error_with_one_hot_embeddings_is_the_unwritten_mass():
    """Keys and values embedded as the standard basis (exact in floats): o(x) = n_T(x) u_f(x),
    right wherever x was written and a tie at 0 (wrong) wherever it was not; so the law's error
    is Σ_x p(x) 1[n_T(x) = 0], the paper's finite-data floor for this context."""
    c = mqar_contexts(5, 30, 40, 8, alpha=1.0, seed=4)
    e = torch.eye(40, dtype=torch.float64).expand(5, -1, -1)
    u = torch.eye(40, dtype=torch.float64)[:8].expand(5, -1, -1)
    written = key_weights(c, "context") > 0
    every = torch.arange(40).expand(5, -1)
    assert torch.equal(wrong_at(Hebbian(), c, e, u, every), ~written)
    floor = (c.probs * ~written).sum(1)
    assert (floor > 0).all()  # T = 30 draws leave some of the 40 keys unwritten


def test_softmax_attention_at_low_temperature_recalls_every_written_key():
    c = mqar_contexts(3, 50, 30, 6, alpha=0.0, seed=5)
    e, u = context_embeddings(c, 32, embedding="orthogonal", seed=5)
    assert not wrong_at(SoftmaxAttention(beta=50.0), c, e, u, c.keys).any()


def test_recall_error_weighs_keys_as_they_are_asked():
    c = mqar_contexts(2, 10, 6, 3, seed=6)
    for queries in ("context", "law"):
        torch.testing.assert_close(
            key_weights(c, queries).sum(1), torch.ones(2, dtype=torch.float64)
        )
    errors = recall_error(Hebbian(), c, 2)
    assert ((errors >= 0) & (errors <= 1)).all()
    with pytest.raises(ConfigError, match="^gate"):
        recall_error(Hebbian(gate=1.5), c, 2)
    with pytest.raises(ConfigError, match="^beta"):
        recall_error(DeltaRule(beta=0.0), c, 2)


def test_the_capacity_is_the_last_t_whose_mean_recall_reaches_tau():
    """The search against its definition, at sizes where it brackets to one pair: recall ≥ τ
    at T* and below it at T* + 1; and a memory of more dimensions holds more pairs."""
    from assocmem.studies.incontext.capacity import Task, capacity, mean_recall

    task = Task(n_keys=64, n_values=64, contexts=6)
    found = {d: capacity(Hebbian(), task, d, tau=0.95) for d in (16, 48)}
    for d, t_star in found.items():
        assert mean_recall(Hebbian(), task, d, t_star) >= 0.95
        assert mean_recall(Hebbian(), task, d, t_star + 1) < 0.95
    assert found[48] > found[16] > 0


def test_both_errors_are_the_weighted_errors_of_every_key(monkeypatch):
    """The context's error (a mean over its positions) and the law's (in blocks of keys) are
    Σ_x w(x)·wrong(x) with :func:`key_weights`, every key read at once."""
    import assocmem.studies.incontext.states as states

    c = mqar_contexts(4, 25, 30, 5, alpha=1.0, seed=8)
    e, u = context_embeddings(c, 6, seed=8)
    every = wrong_at(DeltaRule(beta=0.5), c, e, u, torch.arange(30).expand(4, -1))
    monkeypatch.setattr(states, "LOGITS_BUDGET", 4 * 5 * 7)  # blocks of 7 keys
    for queries in ("context", "law"):
        expected = (key_weights(c, queries) * every).sum(1)
        measured = recall_error(DeltaRule(beta=0.5), c, 6, queries=queries, seed=8)
        torch.testing.assert_close(measured, expected, rtol=0, atol=1e-15)

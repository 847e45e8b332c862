import pytest
import torch

from assocmem.config.errors import ConfigError
from assocmem.schemes import REGISTRY, SizeRule, parse_scheme


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_contract_every_scheme(name):
    """Every scheme: weights ≥ 0 of shape (n_d or 1, ..., N), zero on unseen tokens if data."""
    scheme = parse_scheme(name)
    freq = torch.tensor([[5.0, 0.0, 3.0, 3.0, 1.0, 0.0]], dtype=torch.float64)
    q = scheme.weights(freq, [8, 16, 32])
    assert q.shape[-2:] == freq.shape and q.shape[0] in (1, 3)
    assert bool((q >= 0).all())
    if scheme.uses_data:
        assert bool((q[..., freq[0] == 0] == 0).all())
    assert scheme.uses_dim == (q.shape[0] == 3)


def test_spec_round_trip_and_defaults():
    assert parse_scheme("threshold").spec == "threshold:P=d/8"
    assert parse_scheme(" threshold:P=d / 12 ").spec == "threshold:P=d/12"
    assert parse_scheme("population:rho=0.5").spec == "population:rho=0.5"
    assert (
        parse_scheme("empirical_threshold:rho=1,P=d/12").spec == "empirical_threshold:P=d/12,rho=1"
    )


@pytest.mark.parametrize(
    ("rule", "d", "n", "size"),
    [
        ("d/8", 1000, 2000, 125),
        ("d/12", 10, 100, 1),
        ("d", 50, 20, 20),
        ("7", 3, 100, 7),
        ("d/log d", 100, 1000, 21),
    ],
)
def test_size_rules(rule, d, n, size):
    assert SizeRule.parse(rule).size(d, n) == size


def test_threshold_keeps_most_frequent_with_index_tiebreak():
    freq = torch.tensor([1.0, 3.0, 3.0, 0.0, 2.0], dtype=torch.float64)
    q = parse_scheme("empirical_threshold:P=2").weights(freq, [10])[0]
    assert q.tolist() == [0.0, 1.0, 1.0, 0.0, 0.0]
    q = parse_scheme("empirical_threshold:P=5").weights(freq, [10])[0]
    assert q.tolist() == [1.0, 1.0, 1.0, 0.0, 1.0]  # never stores an unseen token


@pytest.mark.parametrize(
    "text",
    [
        "nope",
        "threshold:P=abc",
        "threshold:Q=3",
        "population:rho=-1",
        "population:rho=x",
        "uniform:rho=1",
        "threshold:P=d/0",
    ],
)
def test_bad_specs(text):
    with pytest.raises(ConfigError, match="^schemes: "):
        parse_scheme(text)

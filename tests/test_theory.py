"""Theory: the exact finite-data sum (claim 6, docs/science/claims.md), exponents, Table 1."""

import json

import numpy as np
import pytest

from assocmem.analysis.theory import (
    compute_optimal_dim,
    compute_optimal_samples,
    data_exponent,
    finite_data_error,
    joint_error_shape,
    power_exponent,
    scheme_law,
    table1,
    theory_table,
    threshold_exponent,
    zipf,
)
from assocmem.cli import main
from assocmem.config.errors import ConfigError
from assocmem.schemes import REGISTRY, SchemeLaw, register_scheme


def test_finite_data_error_matches_naive_sum():
    p = zipf(50, 1.5)
    sizes = np.array([0, 1, 7, 100, 2500])
    naive = [sum(px * (1 - px) ** t for px in p) for t in sizes]
    np.testing.assert_allclose(finite_data_error(p, sizes), naive, rtol=1e-12)


def test_finite_data_error_edge_cases():
    assert finite_data_error([1.0], [0, 1, 10]).tolist() == [1.0, 0.0, 0.0]
    assert finite_data_error(zipf(10, 2.0), [0])[0] == pytest.approx(1.0)
    with pytest.raises(ConfigError):
        finite_data_error([0.5, 0.5], [-1])


@pytest.mark.parametrize("alpha", [2.0, 1.5, 3.0])
def test_claim6_finite_data_slope(alpha):
    """Claim 6 (docs/science/claims.md): Σ p(1−p)^T has log-log slope −(α−1)/α ± 0.02
    (N = 10⁶, T = 10²…10⁵)."""
    sizes = np.logspace(2, 5, 13)
    errors = finite_data_error(zipf(10**6, alpha), sizes)
    slope = np.polyfit(np.log(sizes), np.log(errors), 1)[0]
    assert abs(slope + (alpha - 1) / alpha) < 0.02


def test_exponents_at_alpha_2():
    assert data_exponent(2.0) == 0.5
    assert power_exponent(2.0, 1.0) == 0.25  # q = p: d^{-1/4}
    assert power_exponent(2.0, 0.5) == 0.5  # −1/(4ρ) at α = 2
    assert threshold_exponent(2.0) == 1.0
    assert compute_optimal_dim(1e4, 2.0) == pytest.approx(100.0)
    assert compute_optimal_samples(100.0, 2.0) == pytest.approx(1e4)
    # the two terms of the joint law balance at d = T^{1/α}
    assert joint_error_shape(100.0, 1e4, 2.0) == pytest.approx(0.02)


def test_validity_conditions():
    with pytest.raises(ConfigError, match="2ρα > 1"):
        power_exponent(2.0, 0.25)
    with pytest.raises(ConfigError, match="α > 1"):
        data_exponent(1.0)
    assert scheme_law("population:rho=0.2", 2.0).dim_exponent is None


def test_table1_rows_and_optimal_allocation():
    rows = {law.weighting: law for law in table1(3.0)}
    assert rows["q = p (n/T)"].dim_exponent == pytest.approx(2 / 6)
    assert rows["q = 1{x ≤ d}"].dim_exponent == 2.0
    assert rows["q = 1{x ≤ d}"].data_exponent == pytest.approx(2 / 3)
    assert rows["q = 1{x ≤ d}"].optimal_dim_power == pytest.approx(1 / 3)  # d* ≍ T^{1/α}


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_every_registered_scheme_has_a_law(name):
    law = scheme_law(name, 2.0)
    assert law.dim_exponent is None or law.dim_exponent > 0


def test_scheme_laws_follow_the_paper():
    assert scheme_law("threshold:P=d/8", 2.0).dim_exponent == 1.0
    assert scheme_law("threshold:P=50", 2.0).dim_exponent is None
    assert scheme_law("empirical_threshold:P=d/12", 2.0).data_exponent == 0.5
    assert scheme_law("uniform", 2.0).dim_exponent is None
    assert len(theory_table(2.0)) == 8
    with pytest.raises(ConfigError, match="no theory"):
        scheme_law("nonsense", 2.0)


def test_theory_cli_table_and_json(capsys):
    assert main(["theory", "--alpha", "2"]) == 0
    out = capsys.readouterr().out
    assert "threshold:P=d/8" in out and "Table 1" in out and "0.06825" in out  # Σ p(1−p)^100
    assert main(["theory", "--alpha", "3", "--format", "json", "--n-samples", "1000"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["finite_data"][0]["optimal_dim"] == pytest.approx(10.0)
    assert {row["scheme"] for row in payload["table1"]} == {"empirical", "empirical_threshold:P=d"}


@pytest.mark.parametrize(
    "args", [["--alpha", "1"], ["--schemes", "bogus"], ["--n-samples", "-3"], ["-N", "0"]]
)
def test_theory_cli_bad_input_is_one_line_exit_2(capsys, args):
    assert main(["theory", *args]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_removed_power_scheme_is_rejected_listing_the_registered_names():
    with pytest.raises(ConfigError) as err:
        scheme_law("power:rho=0.5", 2.0)
    message = str(err.value)
    assert "\n" not in message and all(name in message for name in REGISTRY)


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_scheme_law_delegates_to_the_scheme_class(name):
    from dataclasses import replace

    from assocmem.schemes import parse_scheme

    assert scheme_law(name, 3.0) == replace(parse_scheme(name).law(3.0), scheme=name)


def test_a_registered_scheme_appears_in_assocmem_theory(capsys):
    """docs/tutorials/add-scheme.md: a new scheme is listed by ``assocmem theory`` with its law,
    with no edit of the theory module or the CLI."""

    class Capped(REGISTRY["empirical"]):  # a new name; its own stated law
        name = "capped_for_test"

        def law(self, alpha):
            return SchemeLaw(self.spec, "q = min(n, cap)", None, None, "no theory yet")

    register_scheme(Capped)
    try:
        assert main(["theory", "--format", "json"]) == 0
        rows = json.loads(capsys.readouterr().out)["schemes"]
        assert rows[-1]["scheme"] == "capped_for_test" and rows[-1]["note"] == "no theory yet"
        assert [r["scheme"] for r in rows[:-1]] == [law.scheme for law in theory_table(2.0)[:-1]]
    finally:
        REGISTRY.pop("capped_for_test", None)
    assert "capped_for_test" not in [law.scheme for law in theory_table(2.0)]

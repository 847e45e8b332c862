"""One vocabulary for the reader: the command line and the Python API name a quantity the same
way, with the same sign, and accept the same spellings."""

import contextlib
import io
import json

import pytest

from assocmem import ClosedFormConfig
from assocmem.analysis.theory import scheme_law
from assocmem.cli import main
from assocmem.config.errors import ConfigError


def _run(argv: list[str]) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(argv) == 0
    return out.getvalue()


def test_theory_prints_the_slopes_the_api_returns():
    """`assocmem theory`'s "slope in d" is SchemeLaw.dim_slope (negative), −dim_exponent; the
    JSON carries both names with their signs."""
    law = scheme_law("population", 2.0)
    assert law.dim_slope == -law.dim_exponent == -0.25 and law.data_slope is None
    threshold = scheme_law("empirical_threshold:P=d/12", 2.0)
    assert (threshold.dim_slope, threshold.data_slope) == (-1.0, -0.5)
    text = _run(["theory", "--alpha", "2", "--schemes", "empirical_threshold:P=d/12"])
    header, _, row = text.split("\n\n")[1].splitlines()[:3]
    columns = [c.strip() for c in header.split("  ") if c.strip()]
    values = [c.strip() for c in row.split("  ") if c.strip()]
    shown = dict(zip(columns, values, strict=False))
    assert shown["slope in d"] == "-1" and shown["slope in T"] == "-0.5"
    assert "SchemeLaw.dim_slope" in text
    payload = json.loads(_run(["theory", "--alpha", "2", "--format", "json"]))
    for row in payload["schemes"]:
        assert row["dim_slope"] == (None if row["dim_exponent"] is None else -row["dim_exponent"])


def test_inf_is_infinite_data_in_python_as_on_the_command_line():
    """`--n-samples inf 100` on the command line; ``float("inf")`` or ``"inf"`` in Python: the same
    config as None (infinite data), and a wrong T names None and inf."""
    infinite = ClosedFormConfig(n_samples=(None, 100))
    assert ClosedFormConfig(n_samples=(float("inf"), 100)) == infinite
    assert ClosedFormConfig(n_samples=("inf", 100)) == infinite
    with pytest.raises(ConfigError, match=r"or None \(or inf\): infinite data; got 1.5"):
        ClosedFormConfig(n_samples=(1.5,))
    with pytest.raises(ConfigError, match="got -1"):
        ClosedFormConfig(n_samples=(-1,))


def test_closed_form_explains_its_columns_and_calls_only_sample_free_schemes_so():
    """Every printed column is explained in the footer (and the help); with T = inf among the
    sample sizes an empirical scheme has rows at T = inf too, yet it is not sample-free."""
    text = _run(["closed-form", "--dims", "10", "--trials", "2", "--n-samples", "inf", "100",
                 "--schemes", "population", "empirical"])  # fmt: skip
    assert "sem: its standard error" in text and "the 100 most probable tokens" in text
    assert "T = inf for population: sample-free" in text and "empirical: sample-free" not in text
    help_text = _run(["closed-form", "--help"])
    assert "columns: error, the population error" in help_text and "head and tail" in help_text


def test_claims_explains_margin_and_fragile_where_it_prints_them():
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        main(["claims", "--only", "6"])
    assert "margin: how far the measured statistic" in out.getvalue()
    assert "fragile: within its tolerance" in out.getvalue()

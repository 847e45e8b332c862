"""The paper's checkable claims (PAPER.md §6) on closed-form memories, at full scale: slow tier."""

import pytest

from assocmem.experiments.claims import CLAIMS, ClaimRunner


@pytest.fixture(scope="module")
def runner():
    return ClaimRunner(trials=100, seed=0)


@pytest.mark.slow
@pytest.mark.parametrize("claim_id", list(CLAIMS))
def test_claim(runner, claim_id):
    claim = CLAIMS[claim_id](runner)
    assert claim.passed, (claim.statement, claim.measured)


def test_claims_machinery_on_a_small_run():
    """Fast tier: the claim functions run end to end (with few trials; verdicts not asserted)."""
    runner = ClaimRunner(trials=2)
    claim = CLAIMS["4"](runner)
    assert claim.measured["dims_checked"] == 13
    assert CLAIMS["6"](None).passed  # exact, seed-free

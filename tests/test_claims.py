"""The paper's closed-form claims on fresh runs (full scale: slow tier), and the machinery that
measures them checked against independent computations (fast tier)."""

import numpy as np
import pytest

from assocmem.closed_form.values import expand_log_ranges
from assocmem.config.files import load_toml
from assocmem.experiments.claims import (
    CLAIMS,
    CLOSED_FORM,
    FIG1_DIMS,
    FIG1_SAMPLES,
    FIG4_DIMS,
    SWEEPS,
    ClaimRunner,
    check_claims,
)
from assocmem.experiments.measure import (
    cells_margin,
    margin,
    scale_z,
    slope_above,
    slope_se,
    trial_table,
)
from assocmem.experiments.tolerances import tolerances
from assocmem.sweep.spec import shipped_specs


@pytest.fixture(scope="module")
def runner():
    return ClaimRunner(trials=100, seed=0)


@pytest.mark.slow
@pytest.mark.parametrize("claim_id", list(CLAIMS))
def test_claim(runner, claim_id):
    claim = CLAIMS[claim_id](runner, "full")
    assert claim.passed, (claim.statement, claim.measured)


def _curve(frame, scheme):
    rows = frame[(frame["scheme"] == scheme) & np.isinf(frame["n_samples"].astype(float))]
    return rows.groupby("dim")["error"].mean()


def test_claims_machinery_on_a_small_run():
    """With 2 trials: claims 1 and 4 measure what an independent computation on the same runs
    gives, and their verdicts follow from the stated tolerances."""
    runner = ClaimRunner(trials=2)
    frame = runner.figure4
    thr, pop, uni = (_curve(frame, s) for s in ("threshold:P=d/8", "population", "uniform"))
    big = thr.index[thr.index >= 50]
    claim4 = CLAIMS["4"](runner, "quick")
    holding = int(((thr[big] < pop[big]) & (pop[big] < uni[big])).sum())
    assert claim4.measured == {"dims_checked": len(big), "dims_holding": holding}
    assert len(big) == 13 and claim4.passed == (holding == 13)
    claim1 = CLAIMS["1"](runner, "quick")
    slope = np.polyfit(np.log(big.to_numpy(float)), np.log(thr[big].to_numpy()), 1)[0]
    assert claim1.measured["slope"] == pytest.approx(slope, rel=1e-12)
    assert claim1.measured["error_d1000"] == pytest.approx(thr[1000], rel=1e-12)
    within = abs(slope + 1) <= 0.1 and abs(thr[1000] - 0.0034) <= 0.001
    assert claim1.passed == within


def test_claim6_is_exact_and_passes():
    (claim,) = check_claims(["6"])
    assert claim.passed and claim.figure == "finite-data"
    for alpha in (1.5, 2.0, 3.0):
        assert claim.measured[f"slope_alpha{alpha:g}"] == pytest.approx(
            -(alpha - 1) / alpha, abs=0.02
        )


def test_paper_settings_come_from_the_shipped_specs():
    """Figures 1 and 4: the claims, `predict --setting` and the sweeps read one source."""
    fig1, fig4 = (load_toml(shipped_specs()[name])["base"] for name in ("figure1", "figure4"))
    assert tuple(fig1["dims"]) == FIG1_DIMS and tuple(fig1["n_samples"]) == FIG1_SAMPLES
    assert tuple(expand_log_ranges("dims", fig4["dims"])) == FIG4_DIMS
    assert tuple(dict.fromkeys(round(10 ** (1 + 2 * i / 19)) for i in range(20))) == FIG4_DIMS


def test_the_claims_command_reads_only_the_papers_sweeps():
    """``assocmem claims`` judges the paper's closed-form claims 1–8: the studies beyond the
    paper (closed-form too) judge theirs with their own command, never here."""
    assert set(SWEEPS) == {
        "figure1", "figure4", "rho", "overflow_truncate", "overflow_renormalize",
    }  # fmt: skip
    ids = {claim_id for e in CLOSED_FORM for claim_id in e.claims}
    assert ids == {str(i) for i in range(1, 9)}


def test_slope_se_matches_the_jackknife_over_trials():
    """The s.e. of a claim's slope (first-order, from each trial's share) against the jackknife
    over the same 20 trials, recomputing the slope of the mean curve without each trial: the
    two agree within 20 % (the jackknife's own relative error at 20 trials is about 16 %)."""
    frame = ClaimRunner(trials=20).figure4
    for scheme in ("population", "uniform"):
        table = trial_table(frame, scheme)
        slopes = [
            slope_above({int(d): float(e) for d, e in table.drop(index=t).mean().items()})
            for t in table.index
        ]
        n = len(slopes)
        jackknife = np.sqrt((n - 1) / n * np.sum((np.array(slopes) - np.mean(slopes)) ** 2))
        assert slope_se(table) == pytest.approx(jackknife, rel=0.2)


def test_margins_agree_with_the_verdicts():
    """A claim passes exactly when its margin is at least −quick_z (0 at full scale); the
    margin is in s.e. of the statistic, so it is the same at both scales on the same runs."""
    runner = ClaimRunner(trials=3)
    for claim_id in ("1", "2", "3", "4", "5", "7", "8"):
        for scale in ("quick", "full"):
            claim = CLAIMS[claim_id](runner, scale)
            z = scale_z(tolerances(claim_id), scale)
            assert claim.passed == (claim.margin_se >= -z), (claim_id, scale, claim.margin_se)
            assert type(claim.passed) is bool and type(claim.margin_se) is float  # JSON-ready
    assert check_claims(["6"])[0].margin_se is None  # exact: no sampling error


def test_margin_helpers():
    assert margin(0.5, 0.0, 1.0, 0.1) == pytest.approx(5.0)
    assert margin(1.2, 0.0, 1.0, 0.1) == pytest.approx(-2.0)
    assert margin(0.5, 0.0, 1.0, 0.0) == np.inf and margin(2.0, 0.0, 1.0, 0.0) == -np.inf
    assert cells_margin([3.0, -1.0, 2.0, 0.5], 0.75) == 0.5  # 3 of 4 cells must pass
    assert cells_margin([3.0, -1.0, 2.0, 0.5], 1.0) == -1.0
    assert cells_margin([], 0.9) is None

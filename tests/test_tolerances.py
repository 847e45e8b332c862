"""The claims' tolerances live in the specs, carry their history, and cannot move without a
revision: the shipped specs agree with the lock, and the lock check fails on a silent change."""

import json
import math
from dataclasses import replace

import pytest

from assocmem.cli import main
from assocmem.config.errors import ConfigError
from assocmem.config.files import load_toml
from assocmem.experiments.claims import check_claims
from assocmem.experiments.registry import EXPERIMENTS
from assocmem.experiments.tolerances import (
    Revision,
    lock_path,
    lock_problems,
    read_lock,
    retired_claims,
    tolerance_tables,
    tolerances,
    write_lock,
)
from assocmem.sweep.spec import parse_spec, shipped_specs


def test_the_shipped_specs_agree_with_the_lock():
    """Fails when a spec's tolerance moved without a revision (or was never locked): record the
    change as a revision whose ``old`` is the locked value, then run ``assocmem claims --lock``."""
    assert lock_problems() == []


def test_every_judged_claim_of_the_paper_and_studies_has_its_table():
    judged = {cid for e in EXPERIMENTS.values() for cid in e.claims}
    assert judged - set(tolerance_tables()) == {"§4.7"}  # shown, not judged


def _changed(claim_id: str, revisions: tuple[Revision, ...]):
    table = tolerance_tables()[claim_id]
    values = table.values | {"min_fraction": 0.5}
    since = revisions[-1].date if revisions else table.since
    return {claim_id: replace(table, values=values, revisions=revisions, since=since)}


def test_a_changed_tolerance_fails_unless_its_last_revision_holds_the_locked_value():
    lock = read_lock()
    locked = lock["NT-1"]["tolerance"]
    silent = _changed("NT-1", ())
    (problem,) = lock_problems(silent, {"NT-1": lock["NT-1"]})
    assert problem.startswith("NT-1: tolerance") and "locked" in problem
    wrong = _changed("NT-1", (Revision("2030-01-01", locked | {"rel": 9.0}, "why"),))
    assert len(lock_problems(wrong, {"NT-1": lock["NT-1"]})) == 1
    recorded = _changed("NT-1", (Revision("2030-01-01", dict(locked), "why"),))
    assert lock_problems(recorded, {"NT-1": lock["NT-1"]}) == []
    undated = {"NT-1": replace(recorded["NT-1"], since="2029-12-31")}
    (problem,) = lock_problems(undated, {"NT-1": lock["NT-1"]})
    assert "last revision's date" in problem


def test_unlocked_and_vanished_claims_are_reported():
    tables = tolerance_tables()
    assert lock_problems({"1": tables["1"]}, {}) == ["1: not locked (run `assocmem claims --lock`)"]
    assert lock_problems({"1": tables["1"]}, {}, unlocked=False) == []
    gone = lock_problems({}, {"1": read_lock()["1"]})
    assert gone == ["1: locked, but no spec has its table"]


def test_nt3_loosening_is_recorded_as_a_revision():
    table = tolerance_tables()["NT-3"]
    revision, quick = table.revisions  # the loosening, then the quick scale's quick_z
    assert revision.old == {"min_noise": 0.3, "z": 2.0, "rel": 0.0, "min_fraction": 1.0}
    assert table.values["z"] == 3.0 and table.values["min_fraction"] == 0.95
    assert "after the results had been seen" in revision.reason and table.since == quick.date
    assert quick.old == {"min_noise": 0.3, "z": 3.0, "rel": 0.01, "min_fraction": 0.95}


def test_write_lock_refuses_a_silent_change_and_writes_nothing(tmp_path):
    lock = read_lock()
    lock["2"]["tolerance"] = lock["2"]["tolerance"] | {"slope_tolerance": 0.5}
    path = tmp_path / "claims.lock.json"
    path.write_text(json.dumps(lock))
    with pytest.raises(ConfigError, match="2: tolerance"):
        write_lock(path)
    assert json.loads(path.read_text()) == lock
    fresh = write_lock(tmp_path / "fresh.lock.json")
    assert json.loads(fresh.read_text()) == read_lock()


def test_claims_lock_command_rewrites_the_same_lock(capsys):
    before = lock_path().read_bytes()
    assert main(["claims", "--lock"]) == 0
    assert "locked the tolerances of" in capsys.readouterr().out
    assert lock_path().read_bytes() == before


def test_claims_carry_their_tolerance_history():
    (claim,) = check_claims(["6"])
    assert claim.tolerance_since == tolerance_tables()["6"].since
    assert claim.to_dict()["revisions"] == [] and "0.02" in claim.tolerance
    assert tolerances("6") == {"slope_tolerance": 0.02}


def test_specs_with_tolerance_history_still_parse_as_sweeps():
    """A tolerance's revisions (tables) and list values (§4.2's paper errors) are part of the
    spec: ``assocmem sweep run SPEC`` accepts every shipped spec that holds them."""
    holding = {t.spec for t in tolerance_tables().values()}
    assert {"figure4", "noise-threshold", "paper_training_grid"} <= holding
    for name in holding:
        spec = parse_spec(load_toml(shipped_specs()[name]), source=name)
        assert set(spec.claims) == {c for c, t in tolerance_tables().items() if t.spec == name}


def test_a_retired_claim_is_a_test_now_and_its_lock_entry_may_go():
    """hierarchy-1 and vocabulary-4 test code, not science: each is a ``[retired.ID]`` table
    naming the test that checks its property (the test exists), is judged by no experiment, and
    its lock entry may go only with its locked value as ``old``."""
    retired = retired_claims()
    assert set(retired) == {"hierarchy-1", "vocabulary-4"}
    judged = {cid for e in EXPERIMENTS.values() for cid in e.claims}
    root = lock_path().parents[3]  # the repository (src/assocmem/specs/…)
    for cid, entry in retired.items():
        assert cid not in judged and cid not in tolerance_tables()
        path, name = entry.test.split("::")
        assert f"def {name}(" in (root / path).read_text(encoding="utf-8"), entry.test
        locked = {"tolerance": dict(entry.old), "since": "2026-11-24"}
        assert lock_problems({}, {cid: locked}) == []
        moved = {"tolerance": dict(entry.old) | {"x": 1}, "since": "2026-11-24"}
        (problem,) = lock_problems({}, {cid: moved})
        assert "retired" in problem


def test_the_quick_scale_passes_a_claim_within_quick_z_standard_errors_only():
    """NT-4 has quick_z (5.7): a margin of −3 s.e. passes at the quick scale, not at full scale;
    −6 s.e., a part failing outright (−inf) or a claim without a margin keep their verdict."""
    from assocmem.experiments.experiment import quick_verdict
    from assocmem.report import Claim

    z = tolerances("NT-4")["quick_z"]
    assert z == 5.7
    claim = Claim("NT-4", "s", {"x": 1.0}, False, "t", margin_se=-3.0)
    assert quick_verdict(claim, "quick").passed is True
    assert "quick_z" in quick_verdict(claim, "quick").note
    assert quick_verdict(claim, "full").passed is False
    for margin in (-6.0, -math.inf, None):
        assert quick_verdict(replace(claim, margin_se=margin), "quick").passed is False
    assert quick_verdict(replace(claim, passed=True, margin_se=-9.0), "quick").passed is True
    paper = Claim("1", "s", {}, False, "slope within (0.05 + 6.5 s.e.)", margin_se=-1.0)
    assert quick_verdict(paper, "quick").note == ""  # its tolerance shows the widening


def test_a_quick_verdict_outside_the_tolerance_is_not_refuted_and_counted_apart():
    """Inside the quick band but outside the tolerance as stated, a claim is "not refuted at
    this scale": no pass in claims.json, the summary line or the report; within its tolerance
    it passes; past the band it fails; at full scale the band does not exist."""
    from assocmem.experiments.experiment import quick_verdict
    from assocmem.report import FAIL, NOT_REFUTED, PASS, Claim, verdict_counts

    claim = Claim("NT-4", "s", {"x": 1.0}, False, "t", margin_se=-3.0)
    judged = {m: quick_verdict(replace(claim, margin_se=m, passed=m >= 0), "quick") for m in (
        2.0, -3.0, -6.0
    )}  # fmt: skip
    assert [c.verdict for c in judged.values()] == [PASS, NOT_REFUTED, FAIL]
    assert [c.to_dict()["passed"] for c in judged.values()] == [True, False, False]
    assert judged[-3.0].to_dict()["verdict"] == "not refuted at this scale"
    assert quick_verdict(claim, "full").verdict == FAIL
    paper = Claim("1", "s", {}, True, "slope within (0.05 + 6.5 s.e.)", margin_se=-1.0)
    assert quick_verdict(paper, "quick").verdict == NOT_REFUTED  # a judge that widened itself
    claims = [replace(c, id=str(m)) for m, c in judged.items()]
    claims.append(Claim("x", "s", passed=None))
    assert (
        verdict_counts(claims)
        == "1 of 3 checked pass; not refuted at this scale: -3.0; failing: -6.0"
    )

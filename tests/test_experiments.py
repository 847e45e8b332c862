"""The experiment registry: unique names and claim ids, the --only items, sweeps that parse at
both scales, and claims that carry the id and figure they are registered under."""

import pytest

from assocmem.experiments.experiment import SCALES, Experiment
from assocmem.experiments.registry import (
    EXPERIMENTS,
    ONLY_CHOICES,
    PAPER_ITEMS,
    drawn,
    judged,
    only_choices,
)
from assocmem.experiments.reproduce import Reproduction
from assocmem.report import Claim


def test_claim_ids_are_unique_across_the_registry():
    ids = [cid for e in EXPERIMENTS.values() for cid in e.claims]
    assert len(ids) == len(set(ids))
    paper = [cid for e in EXPERIMENTS.values() if e.item != "beyond" for cid in e.claims]
    assert len(paper) == 17  # the closed-form claims 1–8 and the paper's findings
    assert all(name == e.name for name, e in EXPERIMENTS.items())


def test_only_items_are_unchanged():
    paper = ("1", "3", "4", "memory", "5", "6", "7", "8", "table1", "claims")
    assert paper == PAPER_ITEMS and (*paper, "beyond") == ONLY_CHOICES[:11]
    assert [e.name for e in drawn({"4", "table1"})] == ["figure-4", "table-1"]
    assert [e.name for e in judged({"4"})] == ["figure-4"]  # a figure judges its own claims
    assert {"figure-1", "rho", "figure-8"} <= {e.name for e in judged({"claims"})}
    assert not any(e.item == "beyond" for e in judged({"claims"}))
    assert all(e.item == "beyond" for e in judged({"beyond"}))  # the studies' own claims


def test_only_takes_each_experiment_by_name():
    """Each registered experiment's name is an ``--only`` choice (after the items, the name
    ``memory`` once) that selects it alone: its figure or table, and its own claims."""
    assert ONLY_CHOICES[11:] == tuple(n for n in EXPERIMENTS if n != "memory")
    assert only_choices() == ONLY_CHOICES  # the studies' folders are registered at import
    for name, e in EXPERIMENTS.items():
        assert drawn({name}) == [e], name
        assert judged({name}) == ([e] if e.claims else []), name
    assert [e.name for e in drawn({"beyond-capacity", "4"})] == ["figure-4", "beyond-capacity"]


@pytest.mark.parametrize("scale", SCALES)
def test_paper_sweeps_parse_with_one_setting_per_name(scale):
    """Every sweep name means one spec, whichever experiment reads it (Table 1 reads Figure 1's
    and Figure 4's sweeps)."""
    seen: dict[str, object] = {}
    for e in EXPERIMENTS.values():
        if e.item == "beyond":
            continue  # needs the optional word laws
        for name, spec in e.specs(scale, "cpu").items():
            assert spec.name == f"{name}-{scale}" and spec.base["device"] == "cpu"
            assert seen.setdefault(name, spec) == spec
    assert {"figure1", "figure3", "figure4", "update", "small_dim"} <= set(seen)


def test_judge_sets_the_figure_and_checks_the_id():
    def judge(frames, scale):
        return Claim("x1", "statement", {"value": frames}, frames > 0)

    e = Experiment("study", "Study", "caption", None, claims={"x1": judge})
    (claim,) = e.judge(2.0, "quick")
    assert claim.figure == "study" and claim.passed and claim.measured == {"value": 2.0}
    assert e.judge(2.0, "quick", only={"other"}) == []
    wrong = Experiment("study", "Study", "caption", None, claims={"x2": judge})
    with pytest.raises(ValueError, match="x2"):
        wrong.judge(1.0, "quick")


def test_summary_names_the_failing_claims(tmp_path):
    claims = [
        Claim("1", "a", {}, True),
        Claim("2", "b", {}, False),
        Claim("§4.7", "c", {}, None),
    ]
    pngs = [tmp_path / "figures" / "figure-4.png"]
    text = Reproduction(tmp_path / "report.html", claims, pngs, 12.34).summary()
    assert "1 of 2 checked pass; failing: 2 (1 shown, not judged)" in text
    assert "figures: 1 written" in text and "report.html" in text and "12.3 s" in text

"""Every scientific number the docs state is produced by something that checks it (issue 17).

- Numbers of a full reproduction: ``benchmarks/docs_numbers.py OUT`` checks them against
  ``assocmem reproduce --full --out OUT`` (and the study pages' against the studies' runs,
  ``--studies DIR``); here, that its quoted sentences still stand on their
  pages (so its table cannot rot) and that its rule (the measured value rounds to the stated
  one) accepts and refuses what it should.
- Exact arithmetic and seconds of compute: recomputed here.
- Numbers from the stored records of ``docs/beyond/*.json``: ``test_docs_numbers_records.py``;
  training cells and ``assocmem predict`` settings (slow tier): ``test_docs_numbers_runs.py``.
"""

import math
import re
from functools import cached_property

import numpy as np
import pytest
from docs_quotes import DN, ROOT, Q, assert_all_ok, flat, page_text

# --- the benchmark's table and rule ---------------------------------------------------------


@pytest.mark.parametrize(
    "quote",
    [*DN.QUOTES, *DN.LONG_QUOTES, *(q for quotes in DN.STUDY_QUOTES.values() for q in quotes)],
    ids=lambda q: f"{q.page}:{q.numbers[0]}",
)
def test_every_quoted_sentence_stands_on_its_page(quote):
    assert len(quote.numbers) == len(quote.sources), quote.plain
    assert flat(quote.plain) in page_text(quote.page), (
        f"{quote.page} no longer says {quote.plain!r}: update the page's number and "
        "benchmarks/docs_numbers.py together (and run it on a full reproduction)"
    )


class Fake:
    """A reproduction that measured only claim 1."""

    def __init__(self, slope: float, scale: str = "full") -> None:
        self.claims = {"1": {"slope": slope, "error_d1000": 0.0}}
        self.scale = scale


ONE = Q(
    "page.md", "slope ⟦−1.051⟧, error ⟦0⟧", (DN.claim("1", "slope"), DN.claim("1", "error_d1000"))
)


@pytest.mark.parametrize(
    ("slope", "scale", "status"),
    [
        (-1.0514, "full", "ok"),
        (-1.0506, "full", "ok"),
        (-1.0516, "full", "MISMATCH"),
        (-1.05, "full", "MISMATCH"),
        (-1.0516, "quick", "full only"),
    ],
)
def test_a_number_matches_within_the_rounding_of_its_digits(slope, scale, status):
    first, zero = DN.check(Fake(slope, scale), [ONE])
    assert (first.stated, first.status) == ("−1.051", status)
    assert zero.status == ("full only" if scale == "quick" else "ok")


@pytest.mark.parametrize(
    ("mean", "se", "status"),
    [
        (0.005973, 3e-5, "ok"),  # its digits
        (0.006008, 3e-5, "in law"),  # 1.2 s.e. away: another draw of the same law
        (0.006130, 3e-5, "in law"),  # 5.2 s.e.: within 4·√2 s.e. (5.66)
        (0.006150, 3e-5, "MISMATCH"),  # 5.9 s.e.
        (0.006008, 0.0, "MISMATCH"),  # no s.e.: digits only
    ],
)
def test_a_monte_carlo_estimate_is_checked_in_law(mean, se, status):
    """An :class:`Estimate` may lie within LAW_Z·√2 of its s.e. of the stated value (two
    hosts' draws), past its digits; reported apart from the numbers that hold their digits."""
    quote = Q("page.md", "MC mean ⟦0.005973⟧", (("mc", lambda m: DN.Estimate(mean, se)),))
    (checked,) = DN.check(Fake(0.0), [quote])
    assert checked.status == status
    assert checked.measured == mean


def test_a_stated_zero_is_exact_and_a_count_is_a_count():
    assert DN.stated_value("0") == (0.0, 1e-12)
    assert DN.stated_value("13")[1] == pytest.approx(0.5)
    assert DN.stated_value("+0.020") == (0.02, pytest.approx(0.0005))


@pytest.mark.parametrize("order", [("quick", "full"), ("full", "quick")])
def test_a_quote_of_any_scale_is_checked_at_every_scale_held(order):
    """A quote that holds at both scales is measured at each scale the folders hold, whatever
    their order (it was measured at the first folder's scale only), and a quote of one scale
    where no folder holds it is listed, not measured."""
    measured = {"quick": Fake(-1.0512, "quick"), "full": Fake(-1.0516)}
    held = {scale: measured[scale] for scale in order}
    anywhere = Q("page.md", "slope ⟦−1.051⟧", (DN.claim("1", "slope"),), "any")
    found = {c.status for c in DN.check_held(anywhere, held)}
    assert found == {"ok", "MISMATCH"}  # the full scale's −1.0516 is caught in either order
    quick = Q("page.md", "slope ⟦−1.051⟧", (DN.claim("1", "slope"),), "quick")
    assert [c.status for c in DN.check_held(quick, {"full": measured["full"]})] == ["quick only"]


DIM_NAMED = re.compile(r"\bd=(\d+)|'dim': (\d+)")


def grid_dims(name: str, scale: str) -> set[int]:
    """Every d the runs of a study's sweeps at ``scale`` hold (``dim``, or ``dims`` of a run)."""
    from assocmem.sweep.plan import expand_runs

    study = DN.STUDIES.STUDIES[name][0]
    dims: set[int] = set()
    for spec in (study.specs_at(scale) or {}).values():
        for run in expand_runs(spec):
            one = getattr(run.config, "dim", None)
            dims |= set(getattr(run.config, "dims", None) or ([] if one is None else [one]))
    return dims


@pytest.mark.parametrize("name", sorted(DN.STUDIES.STUDIES))
def test_a_study_quote_reads_only_the_dims_of_the_scales_it_is_checked_at(name):
    """Each d a study quote's measures name ("d=1024", "'dim': 512") is a d of the grid of every
    scale the quote is checked at. The hierarchy's row of the full grid's d (64 … 4096) was
    marked as holding at any scale, so a folder of the quick scale alone (d ≤ 512) crashed
    ``--studies`` with KeyError: 1024."""
    grids = {scale: grid_dims(name, scale) for scale in ("quick", "full")}
    for quote in DN.STUDY_QUOTES[name]:
        scales = ("quick", "full") if quote.scale == "any" else (quote.scale,)
        for what, _ in quote.sources:
            for match in DIM_NAMED.finditer(what):
                dim = int(match.group(1) or match.group(2))
                for scale in scales:
                    assert not grids[scale] or dim in grids[scale], (
                        f"{quote.page}: {what!r} is checked at the {scale} scale, whose grid "
                        f"has no d = {dim}: {quote.plain[:80]!r}"
                    )


def test_a_folder_that_is_not_a_reproduction_is_one_line(tmp_path, capsys):
    with pytest.raises(SystemExit) as stop:
        DN.main([str(tmp_path)])
    assert stop.value.code == 2
    assert "no claims.json and runs.db" in capsys.readouterr().err
    with pytest.raises(SystemExit) as stop:
        DN.main([])  # neither a folder nor --long
    assert stop.value.code == 2


# --- exact arithmetic and seconds of compute --------------------------------------------------


class Exact:
    """Numbers the pages derive from the Zipf law itself (N = 100, α = 2, M = 5 unless named)."""

    scale = "full"

    @cached_property
    def p(self) -> np.ndarray:
        from assocmem.analysis.theory import zipf

        return np.asarray(zipf(100, 2.0), float)

    def distinct(self, batch: int) -> float:
        """Expected number of distinct tokens in a batch of ``batch`` samples."""
        return float((1 - (1 - self.p) ** batch).sum())

    def floor(self, n_samples: int) -> float:
        from assocmem.analysis.theory import finite_data_error

        return float(finite_data_error(self.p, [n_samples])[0])

    @cached_property
    def claim6(self) -> dict[str, float]:
        from assocmem.experiments.claims import check_claims

        (claim,) = check_claims(["6"])
        return claim.measured

    @cached_property
    def tutorial_floor(self) -> list[float]:
        """The closed-form tutorial's T = 10 errors at d ≥ 50 (its own config: 10 trials)."""
        from assocmem import ClosedFormConfig, run_closed_form

        cfg = ClosedFormConfig(
            schemes=("empirical_threshold:P=d/12",),
            dims=(10, 20, 50, 100, 200, 1000),
            n_samples=(10, 100, 1_000, 10_000),
            trials=10,
        )
        frame = run_closed_form(cfg).to_frame()
        means = frame[frame["n_samples"] == 10].groupby("dim")["error"].mean()
        return [float(e) for d, e in means.items() if d >= 50]


SAMPLING, OPTIMISATION = "docs/kernels-sampling.md", "docs/science/optimisation.md"
THEORY, CLAIMS, TRAINING = DN.THEORY, DN.CLAIMS, DN.TRAINING
TUTORIAL = "docs/tutorials/closed-form.md"
EXACT_QUOTES = [
    Q(
        OPTIMISATION,
        "scores the error of always answering 0 (⟦0.3586⟧ at N = 100, α = 2, M = 5)",
        (("1 − p(x mod 5 = 0)", lambda e: 1 - e.p[::5].sum()),),
    ),
    Q(
        DN.KERNELS,
        "on average ⟦5⟧, ⟦10⟧, ⟦20⟧, ⟦38⟧ at B = 16, 64, 256, 1024 under Zipf α = 2",
        tuple((f"distinct B={b}", lambda e, b=b: e.distinct(b)) for b in (16, 64, 256, 1024)),
    ),
    Q(
        DN.KERNELS,
        "B = 16 (k ≈ ⟦5⟧ distinct tokens) and 3–5 ms at B = 1024 (k ≈ ⟦38⟧)",
        (
            ("distinct B=16", lambda e: e.distinct(16)),
            ("distinct B=1024", lambda e: e.distinct(1024)),
        ),
    ),
    Q(
        CLAIMS,
        "the finite-data floor $\\sum p(1-p)^{T}$ is ⟦0.0018⟧",
        (("floor", lambda e: e.floor(10240)),),
    ),
    Q(TRAINING, "floor Σp(1−p)^T = ⟦0.0018⟧", (("floor", lambda e: e.floor(10240)),)),
    *(
        Q(
            THEORY,
            f"| {a:g} | ⟦{m}⟧ | ⟦{t}⟧ |",
            (
                (f"claim 6 α={a:g}", lambda e, a=a: e.claim6[f"slope_alpha{a:g}"]),
                (f"−(α−1)/α, α={a:g}", lambda e, a=a: -(a - 1) / a),
            ),
        )
        for a, m, t in (
            (2.0, "−0.4996", "−0.5"),
            (1.5, "−0.3378", "−0.3333"),
            (3.0, "−0.6662", "−0.6667"),
        )
    ),
    Q(
        TUTORIAL,
        "at T = 10 it is flat at about ⟦0.2⟧",
        (("lowest", lambda e: min(e.tutorial_floor)),),
    ),
    Q(
        TUTORIAL,
        "at T = 10 it is flat at about ⟦0.2⟧",
        (("highest", lambda e: max(e.tutorial_floor)),),
    ),
]


def test_the_numbers_the_pages_derive_by_arithmetic():
    assert_all_ok(Exact(), EXACT_QUOTES)


def test_the_sampler_costs_of_the_sampling_page():
    """docs/kernels-sampling.md: N = 10⁶, d up to 16,384 (five dims), q = p and a top-d/8
    threshold: 1.6·10¹⁰ numbers (66 GB) explicit, about 10⁸ in law; memory_gb = 2 admits the
    in-law run and refuses the explicit one."""
    from assocmem import ClosedFormConfig, ConfigError
    from assocmem.closed_form import cost

    fields = {
        "n_inputs": 10**6,
        "schemes": ("population", "threshold:P=d/8"),
        "dims": (64, 256, 1024, 4096, 16384),
        "trials": 1,
        "memory_gb": 2,
    }
    costs = cost.costs(ClosedFormConfig(**fields))
    assert round(costs["explicit"].numbers / 1e10, 1) == 1.6
    assert round(10**6 * 16384 * 4 / 1e9) == 66  # E alone, N·d_max float32 numbers
    assert round(math.log10(costs["in_law"].numbers)) == 8
    page = page_text(SAMPLING)
    assert "1.6·10¹⁰ numbers (66 GB in float32)" in page and "about 10⁸ numbers" in page
    assert "`memory_gb = 2` admits N = 10⁶ with d up to 16,384 in law" in page
    ClosedFormConfig(**fields, sampler="in_law")
    with pytest.raises(ConfigError, match="memory_gb"):
        ClosedFormConfig(**fields, sampler="explicit")


def test_the_theory_block_is_what_assocmem_theory_prints(capsys):
    from assocmem.cli import main

    assert main(["theory", "--alpha", "2"]) == 0
    printed = [line.rstrip() for line in capsys.readouterr().out.splitlines()]
    page = (ROOT / THEORY).read_text(encoding="utf-8")
    head = "$ assocmem theory --alpha 2\n"
    start = page.index(head) + len(head)
    shown = page[start : page.index("\n...\n", start)].splitlines()
    assert printed[: len(shown)] == shown

"""The numbers of the beyond-the-paper pages (noise, word laws, capacity) are those of their
stored records, ``docs/beyond/*.json``, refitted with the code of the commands that wrote them
(issue 17: every number the docs state is checked)."""

import json
import math
from functools import cached_property
from typing import Any

import pytest
from docs_quotes import ROOT, Q, assert_all_ok

from assocmem.analysis.frontier import FrontierPoint, fit_frontier
from assocmem.studies.real_data.trained import same_window

BEYOND = ROOT / "docs" / "beyond"


class Records:
    """The records of docs/beyond/*.json, refitted as the commands that wrote them fit."""

    scale = "full"

    @staticmethod
    def load(name: str) -> Any:
        return json.loads((BEYOND / f"{name}.json").read_text(encoding="utf-8"))

    def noise(self, name: str) -> dict[float, Any]:
        """ε → the curve of ``assocmem compare-trained noise`` (excess error, one window)."""
        records = self.load(name)["results"][0]["records"]
        noises = sorted({r["label_noise"] for r in records})
        groups = [[r for r in records if r["label_noise"] == e] for e in noises]
        return dict(zip(noises, same_window(groups, noises, "excess_error"), strict=True))

    @cached_property
    def onepass(self) -> dict[float, Any]:
        return self.noise("noise_onepass")

    @cached_property
    def fullbatch(self) -> dict[float, Any]:
        return self.noise("noise_fullbatch")

    @cached_property
    def laws(self) -> dict[tuple[str, str], Any]:
        """(language, "real" | "zipf", one-pass or full-batch file) → curve; also α̂."""
        out = {}
        for name in ("laws_en_onepass", "laws_en_fullbatch", "laws_frzh_onepass"):
            for result in self.load(name)["results"]:
                records, lang = result["records"], result["language"]
                laws = [f"words:{lang}", f"zipf:{result['alpha']:.6g}"]
                groups = [[r for r in records if r["law"] == law] for law in laws]
                real, zipf = same_window(groups, laws, "error")
                mode = "fullbatch" if "fullbatch" in name else "onepass"
                out |= {
                    (lang, "real", mode): real,
                    (lang, "zipf", mode): zipf,
                    (lang, "alpha", mode): result["alpha"],
                }
        return out

    def frontier(self, *names: str) -> Any:
        """``fit_frontier`` of the points of ``names`` pooled by d (as the capacity figure)."""
        pooled: dict[int, list[int]] = {}
        for name in names:
            for point in self.load(name)["points"]:
                pooled.setdefault(point["dim"], []).extend(point["n_star"])
        return fit_frontier([FrontierPoint(d, tuple(n)) for d, n in sorted(pooled.items())])

    @cached_property
    def hebbian_n(self) -> Any:
        return self.frontier("hebbian_MN")

    @cached_property
    def hebbian_5(self) -> Any:
        return self.frontier("hebbian_M5")

    @cached_property
    def trained_n(self) -> Any:
        return self.frontier("trained_MN", *(f"trained_MN_256_seed{s}" for s in range(3)))

    @cached_property
    def trained_5(self) -> Any:
        return self.frontier("trained_M5", "trained_M5_512")


def at(curve: Any, field: str, dim: int) -> float:
    """A per-d value of a curve: ``error``, ``excess_error``, … or ``lr``."""
    values = curve.lr if field == "lr" else curve.extra[field]
    return float(values[curve.dims.index(dim)])


def fitted(curve: Any) -> tuple[float, float, float]:
    return curve.fit.slope, curve.fit.ci_low, curve.fit.ci_high


def noise_row(eps: float, with_excess: bool) -> tuple[Any, ...]:
    errors = [
        (f"ε={eps} error d={d}", lambda r, d=d: at(r.onepass[eps], "error", d))
        for d in (10, 100, 1000)
    ]
    excess = [
        (f"ε={eps} excess d={d}", lambda r, d=d: at(r.onepass[eps], "excess_error", d))
        for d in (10, 100, 1000)
    ]
    slope = [(f"ε={eps} slope {i}", lambda r, i=i: fitted(r.onepass[eps])[i]) for i in range(3)]
    return (*errors, *(excess if with_excess else ()), *slope)


def lr_below_1000(records: Records, eps: float) -> float:
    """The best lr at every d < 1000 (NaN if it changes with d)."""
    lrs = {at(records.onepass[eps], "lr", d) for d in (10, 20, 50, 100, 200, 500)}
    return lrs.pop() if len(lrs) == 1 else math.nan


def ratio_at_1000(records: Records, pick: Any) -> float:
    """min or max over ε = 0.1, 0.3 and error / excess error of its ratio to ε = 0, at d = 1000."""
    base = at(records.onepass[0.0], "error", 1000)
    return pick(
        at(records.onepass[e], f, 1000) / base
        for e in (0.1, 0.3)
        for f in ("error", "excess_error")
    )


def zero_from(curve: Any) -> float:
    """The smallest d from which the error is exactly 0 at every larger d."""
    nonzero = [d for d, e in zip(curve.dims, curve.extra["error"], strict=True) if e > 0]
    return float(min(d for d in curve.dims if d > max(nonzero)))


NOISE, WORDS, CAPACITY = "docs/beyond/noise.md", "docs/beyond/words.md", "docs/beyond/capacity.md"
NOISE_QUOTES = [
    Q(
        NOISE,
        "slopes of the excess error over d = ⟦10⟧…⟦100⟧, the window chosen on ε = 0",
        (
            ("window low", lambda r: r.onepass[0.0].fit.window[0]),
            ("window high", lambda r: r.onepass[0.0].fit.window[1]),
        ),
    ),
    Q(
        NOISE,
        "| 0 | ⟦0.035⟧ / ⟦0.0034⟧ / ⟦0.0018⟧ | same | ⟦−1.01⟧ [⟦−1.07⟧, ⟦−0.94⟧] | "
        "⟦10⟧ (⟦100⟧ at d = 1000) |",
        (
            *noise_row(0.0, False),
            ("lr d<1000", lambda r: lr_below_1000(r, 0.0)),
            ("lr d=1000", lambda r: at(r.onepass[0.0], "lr", 1000)),
        ),
    ),
    Q(
        NOISE,
        "| 0.1 | ⟦0.051⟧ / ⟦0.014⟧ / ⟦0.0072⟧ | ⟦0.045⟧ / ⟦0.012⟧ / ⟦0.0063⟧ | ⟦−0.54⟧ "
        "[⟦−0.67⟧, ⟦−0.40⟧] | ⟦1⟧ |",
        (*noise_row(0.1, True), ("lr", lambda r: min(r.onepass[0.1].lr))),
    ),
    Q(
        NOISE,
        "| 0.3 | ⟦0.060⟧ / ⟦0.016⟧ / ⟦0.0090⟧ | ⟦0.038⟧ / ⟦0.010⟧ / ⟦0.0056⟧ | ⟦−0.56⟧ "
        "[⟦−0.70⟧, ⟦−0.41⟧] | ⟦1⟧ |",
        (*noise_row(0.3, True), ("lr", lambda r: max(r.onepass[0.3].lr))),
    ),
    Q(
        NOISE,
        "(−1 → ⟦−0.55⟧) and leaves a ⟦3⟧–⟦5⟧× higher error at large d",
        (
            (
                "mean slope ε > 0",
                lambda r: (r.onepass[0.1].fit.slope + r.onepass[0.3].fit.slope) / 2,
            ),
            ("smallest ratio", lambda r: ratio_at_1000(r, min)),
            ("largest ratio", lambda r: ratio_at_1000(r, max)),
        ),
    ),
    Q(
        NOISE,
        "d^⟦−0.98⟧ [⟦−1.02⟧, ⟦−0.95⟧] (ε = 0.1) and d^⟦−0.74⟧ [⟦−0.75⟧, ⟦−0.72⟧] (ε = 0.3) "
        "over d = ⟦10⟧…⟦1000⟧, to ⟦3⟧·10⁻⁴ and ⟦8⟧·10⁻⁴ at d = 1000, while the noiseless memory is "
        "exact from d = ⟦50⟧.",
        (
            *(
                (f"full batch ε=0.1 slope {i}", lambda r, i=i: fitted(r.fullbatch[0.1])[i])
                for i in range(3)
            ),
            *(
                (f"full batch ε=0.3 slope {i}", lambda r, i=i: fitted(r.fullbatch[0.3])[i])
                for i in range(3)
            ),
            ("window low", lambda r: r.fullbatch[0.1].fit.window[0]),
            ("window high", lambda r: r.fullbatch[0.1].fit.window[1]),
            ("excess ε=0.1 ×10⁴", lambda r: 1e4 * at(r.fullbatch[0.1], "excess_error", 1000)),
            ("excess ε=0.3 ×10⁴", lambda r: 1e4 * at(r.fullbatch[0.3], "excess_error", 1000)),
            ("exact from d", lambda r: zero_from(r.fullbatch[0.0])),
        ),
    ),
]


def law(lang: str, which: str, mode: str = "onepass") -> Any:
    return lambda r: r.laws[(lang, which, mode)]


def law_values(lang: str, which: str, mode: str, dims: tuple[int, ...]) -> tuple[Any, ...]:
    return tuple(
        (f"{lang} {which} d={d}", lambda r, d=d: at(law(lang, which, mode)(r), "error", d))
        for d in dims
    )


def law_slope(lang: str, which: str, mode: str = "onepass") -> tuple[Any, ...]:
    return tuple(
        (f"{lang} {which} {mode} slope {i}", lambda r, i=i: fitted(law(lang, which, mode)(r))[i])
        for i in range(3)
    )


def largest_exponent_gap(r: Records) -> float:
    pairs = [("en", "onepass"), ("fr", "onepass"), ("zh", "onepass"), ("en", "fullbatch")]
    return max(
        abs(r.laws[(lang, "real", m)].fit.slope - r.laws[(lang, "zipf", m)].fit.slope)
        for lang, m in pairs
    )


def word_slope(lang: str) -> float:
    from assocmem.laws.words import word_distribution

    return float(word_distribution(lang, 1000).alpha_slope)


def n_languages(_: Any) -> float:
    import wordfreq

    return float(len(wordfreq.available_languages()))


WORDS_QUOTES = [
    Q(WORDS, "Word-frequency lists of ⟦42⟧ languages", (("wordfreq languages", n_languages),)),
    Q(
        WORDS,
        "English (α̂ = ⟦0.927⟧) has error ⟦0.527⟧ → ⟦0.248⟧ → ⟦0.057⟧ at d = 10, 100, 1000 and "
        "slope ⟦−0.62⟧ [⟦−0.64⟧, ⟦−0.60⟧]; its Zipf fit has ⟦0.526⟧ → ⟦0.285⟧ → ⟦0.058⟧ and slope "
        "⟦−0.64⟧ [⟦−0.65⟧, ⟦−0.63⟧]",
        (
            ("α̂ en", law("en", "alpha")),
            *law_values("en", "real", "onepass", (10, 100, 1000)),
            *law_slope("en", "real"),
            *law_values("en", "zipf", "onepass", (10, 100, 1000)),
            *law_slope("en", "zipf"),
        ),
    ),
    Q(
        WORDS,
        "log-log slope ⟦1.01⟧ against α̂ = ⟦0.93⟧",
        (("rank slope en", lambda r: word_slope("en")), ("α̂ en", law("en", "alpha"))),
    ),
    Q(
        WORDS,
        "both reach zero error at d = ⟦500⟧",
        (
            (
                "zero from d",
                lambda r: max(zero_from(r.laws[("en", w, "fullbatch")]) for w in ("real", "zipf")),
            ),
        ),
    ),
    Q(
        WORDS,
        "over d = ⟦50⟧…⟦200⟧ the slopes are ⟦−0.63⟧ [⟦−0.67⟧, ⟦−0.58⟧] (English) and ⟦−0.58⟧ "
        "[⟦−0.61⟧, ⟦−0.55⟧] (Zipf)",
        (
            ("window low", lambda r: r.laws[("en", "real", "fullbatch")].fit.window[0]),
            ("window high", lambda r: r.laws[("en", "real", "fullbatch")].fit.window[1]),
            *law_slope("en", "real", "fullbatch"),
            *law_slope("en", "zipf", "fullbatch"),
        ),
    ),
    Q(
        WORDS,
        "French (α̂ = ⟦0.957⟧) and Chinese (α̂ = ⟦0.836⟧): slopes ⟦−0.60⟧ [⟦−0.61⟧, ⟦−0.58⟧] (fr) "
        "against ⟦−0.64⟧ [⟦−0.65⟧, ⟦−0.62⟧] for its Zipf fit over d = 50…1000, and ⟦−0.77⟧ "
        "[⟦−0.78⟧, ⟦−0.75⟧] (zh) against ⟦−0.79⟧ [⟦−0.80⟧, ⟦−0.77⟧] over d = 100…1000; errors at "
        "d = 1000: ⟦0.052⟧ vs ⟦0.056⟧ (fr), ⟦0.060⟧ vs ⟦0.057⟧ (zh)",
        (
            ("α̂ fr", law("fr", "alpha")),
            ("α̂ zh", law("zh", "alpha")),
            *law_slope("fr", "real"),
            *law_slope("fr", "zipf"),
            *law_slope("zh", "real"),
            *law_slope("zh", "zipf"),
            *law_values("fr", "real", "onepass", (1000,)),
            *law_values("fr", "zipf", "onepass", (1000,)),
            *law_values("zh", "real", "onepass", (1000,)),
            *law_values("zh", "zipf", "onepass", (1000,)),
        ),
    ),
    Q(WORDS, "to within about ⟦0.05⟧ in the exponent", (("largest gap", largest_exponent_gap),)),
]


def cap(fit: str, field: str, dim: int, index: int | None = None) -> Any:
    """A per-d field of a frontier fit (``index``: an end of its interval)."""

    def measure(r: Records) -> float:
        frontier = getattr(r, fit)
        value = getattr(frontier, field)[frontier.dims.index(dim)]
        return float(value if index is None else value[index])

    return f"{fit} {field} d={dim}", measure


def n_over_d(fit: str, dim: int, end: int) -> Any:
    """An end of the interval of N*/d (that of d/N*, reversed)."""

    def measure(r: Records) -> float:
        frontier = getattr(r, fit)
        return 1 / frontier.d_over_n_ci[frontier.dims.index(dim)][1 - end]

    return f"{fit} N*/d d={dim} CI {end}", measure


def capacity_row(dim: int, hebbian: bool = True) -> tuple[Any, ...]:
    constant = (
        cap("hebbian_n", "constant", dim),
        cap("hebbian_n", "constant_ci", dim, 0),
        cap("hebbian_n", "constant_ci", dim, 1),
    )
    trained = (
        cap("trained_n", "n_star", dim),
        cap("trained_n", "constant", dim),
        cap("trained_n", "constant_ci", dim, 0),
        cap("trained_n", "constant_ci", dim, 1),
        (f"trained N*/d d={dim}", lambda r: r.trained_n.n_star[r.trained_n.dims.index(dim)] / dim),
    )
    return (cap("hebbian_n", "n_star", dim), *(constant if hebbian else ()), *trained)


def small_m_row(dim: int, hebbian: bool = True) -> tuple[Any, ...]:
    ratio = (
        f"trained M=5 N*/d d={dim}",
        lambda r: 1 / r.trained_5.d_over_n[r.trained_5.dims.index(dim)],
    )
    return (
        *((cap("hebbian_5", "n_star", dim),) if hebbian else ()),
        cap("trained_5", "n_star", dim),
        ratio,
        n_over_d("trained_5", dim, 0),
        n_over_d("trained_5", dim, 1),
    )


def searches_256(r: Records) -> list[int]:
    """N* of the three searches at d = 256, M = N, in increasing order."""
    return sorted(r.load(f"trained_MN_256_seed{s}")["points"][0]["n_star"][0] for s in range(3))


CAPACITY_QUOTES = [
    Q(
        CAPACITY,
        "| N | 32 | ⟦12⟧ | ⟦34⟧ [⟦23⟧, ⟦75⟧] | ⟦177⟧ | ⟦1.12⟧ [⟦1.10⟧, ⟦1.12⟧] | ⟦5.5⟧ |",
        capacity_row(32),
    ),
    Q(
        CAPACITY,
        "| N | 64 | ⟦65⟧ | ⟦15.1⟧ [⟦14.3⟧, ⟦16.3⟧] | ⟦566⟧ | ⟦1.14⟧ [⟦1.14⟧, ⟦1.18⟧] | ⟦8.8⟧ |",
        capacity_row(64),
    ),
    Q(
        CAPACITY,
        "| N | 128 | ⟦342⟧ | ⟦8.2⟧ [⟦7.9⟧, ⟦9.0⟧] | ⟦1768⟧ | ⟦1.24⟧ [⟦1.22⟧, ⟦1.24⟧] | ⟦13.8⟧ |",
        capacity_row(128),
    ),
    Q(
        CAPACITY,
        "| N | 256 | ⟦1498⟧ | ⟦5.98⟧ [⟦5.88⟧, ⟦6.02⟧] | ⟦5800⟧ (⟦5741⟧, ⟦5800⟧, ⟦5900⟧) | ⟦1.30⟧ "
        "[⟦1.28⟧, ⟦1.32⟧] | ⟦22.7⟧ |",
        (
            *capacity_row(256)[:5],
            *((f"search {i}", lambda r, i=i: searches_256(r)[i]) for i in range(3)),
            *capacity_row(256)[5:],
        ),
    ),
    Q(CAPACITY, "| 5 | 64 | ⟦15⟧ | — | ⟦197⟧ | — | ⟦3.08⟧ [⟦2.94⟧, ⟦3.25⟧] |", small_m_row(64)),
    Q(CAPACITY, "| 5 | 128 | ⟦44⟧ | — | ⟦372⟧ | — | ⟦2.91⟧ [⟦2.71⟧, ⟦2.95⟧] |", small_m_row(128)),
    Q(CAPACITY, "| 5 | 256 | ⟦79⟧ | — | ⟦754⟧ | — | ⟦2.95⟧ [⟦2.86⟧, ⟦2.95⟧] |", small_m_row(256)),
    Q(
        CAPACITY,
        "| 5 | 512 | — | — | ⟦1500⟧ | — | ⟦2.93⟧ [⟦2.85⟧, ⟦2.97⟧] |",
        small_m_row(512, False),
    ),
    Q(
        CAPACITY,
        "d²/(N* log N*) rises from ⟦1.1⟧ at d = 16 to ⟦1.24⟧ at d = 128 and ⟦1.30⟧ [⟦1.28⟧, "
        "⟦1.32⟧] at d = 256",
        (
            cap("trained_n", "constant", 16),
            cap("trained_n", "constant", 128),
            cap("trained_n", "constant", 256),
            cap("trained_n", "constant_ci", 256, 0),
            cap("trained_n", "constant_ci", 256, 1),
        ),
    ),
    Q(
        CAPACITY,
        "N* ∝ d^⟦1.67⟧ [⟦1.66⟧, ⟦1.69⟧] over d = 16…256",
        (
            ("exponent", lambda r: r.trained_n.exponent),
            *((f"exponent CI {i}", lambda r, i=i: r.trained_n.exponent_ci[i]) for i in range(2)),
        ),
    ),
    Q(
        CAPACITY,
        "The outer-product memory needs d²/(N log N) ≈ ⟦6⟧ at d = 256 (and more at smaller "
        "d): ⟦3.9⟧× fewer associations (⟦1498⟧ against ⟦5800⟧)",
        (
            cap("hebbian_n", "constant", 256),
            ("ratio", lambda r: r.trained_n.n_star[-1] / r.hebbian_n.n_star[-1]),
            cap("hebbian_n", "n_star", 256),
            cap("trained_n", "n_star", 256),
        ),
    ),
    Q(
        CAPACITY,
        "the trained memory stores N* ≈ ⟦2.9⟧·d (N* ∝ d^⟦1.01⟧ [⟦0.99⟧, ⟦1.02⟧] over d = 16…512)",
        (
            ("N*/d at d = 512", lambda r: r.trained_5.n_star[-1] / 512),
            ("exponent", lambda r: r.trained_5.exponent),
            *((f"exponent CI {i}", lambda r, i=i: r.trained_5.exponent_ci[i]) for i in range(2)),
        ),
    ),
    Q(
        CAPACITY,
        "the outer-product memory stores ≈ ⟦0.3⟧·d",
        (("hebbian M=5 N*/d at d = 256", lambda r: r.hebbian_5.n_star[-1] / 256),),
    ),
    Q(
        CAPACITY,
        "the trained constants are ⟦1.25⟧, ⟦1.23⟧, ⟦1.26⟧, ⟦1.30⟧ at d = 16, 32, 64, 128",
        tuple(
            (f"lr 0.1 constant d={d}", lambda r, i=i: r.frontier("trained_lr0.1_MN").constant[i])
            for i, d in enumerate((16, 32, 64, 128))
        ),
    ),
]


@pytest.mark.parametrize(
    "quotes", [NOISE_QUOTES, WORDS_QUOTES, CAPACITY_QUOTES], ids=["noise", "words", "capacity"]
)
def test_the_numbers_of_the_beyond_pages_are_those_of_their_records(quotes):
    if quotes is WORDS_QUOTES:
        pytest.importorskip("wordfreq")
    assert_all_ok(Records(), quotes)

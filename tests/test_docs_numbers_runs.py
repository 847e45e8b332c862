"""Numbers the docs take from seconds to a minute of compute (slow tier, issue 17): the training
cells that ``assocmem reproduce`` does not run, and the two ``assocmem predict`` settings of the
predictions page."""

import json
import math
import statistics
from functools import cached_property
from typing import Any

import numpy as np
import pytest
from docs_quotes import DN, Q, assert_all_ok

CLAIMS, TRAINING = DN.CLAIMS, DN.TRAINING


class Trained:
    """The cells of the training findings the reproduction does not run (10 seeds unless named)."""

    scale = "full"

    @staticmethod
    def runs(seeds: int = 10, **grid: Any) -> list[Any]:
        import itertools

        from assocmem.training import TrainConfig, train

        lists = {k: v if isinstance(v, list) else [v] for k, v in grid.items()}
        configs = [
            TrainConfig.from_flat(dict(zip(lists, combo, strict=True)) | {"seed": s})
            for combo in itertools.product(*lists.values())
            for s in range(seeds)
        ]
        return train(configs)

    @cached_property
    def gap_d100(self) -> float:
        """Finding 1 at d = 100 with Figure 5's protocol (100 seeds, error after every step)."""
        runs = self.runs(
            100,
            dim=100,
            model=["matrix", "qupdate"],
            optimizer="sgd",
            batch_size=1000,
            n_samples=100_000,
            lr=1.0,
            init="zero",
            eval_every=1,
        )
        curves = {
            m: np.mean([[e for _, e in r.curve] for r in runs if r.config.model == m], 0)
            for m in ("matrix", "qupdate")
        }
        return float(np.abs(curves["matrix"] - curves["qupdate"]).max())

    @cached_property
    def sign_adam_full_batch(self) -> list[float]:
        """Finding 4b for sign-like Adam at lr 1: the error after 10, 100 and 1000 steps."""
        runs = self.runs(
            n_inputs=10,
            dim=10,
            full_batch=True,
            n_steps=1000,
            init="zero",
            optimizer="adam",
            lr=1.0,
            eval_every=10,
        )
        return [statistics.fmean(r.curve[i][1] for r in runs) for i in (1, 10, 100)]

    @cached_property
    def tuned_layer_norm(self) -> dict[bool, float]:
        """Finding 5 with the lr tuned over {0.1, 1, 10, 100} (lowest seed-averaged error)."""
        runs = self.runs(
            dim=1000,
            optimizer="adam",
            batch_size=1024,
            n_samples=10240,
            lr=[0.1, 1.0, 10.0, 100.0],
            layer_norm=[False, True],
        )
        means = {
            (ln, lr): statistics.fmean(
                r.error for r in runs if (r.config.layer_norm, r.config.lr) == (ln, lr)
            )
            for ln in (False, True)
            for lr in (0.1, 1.0, 10.0, 100.0)
        }
        return {ln: min(e for (k, _), e in means.items() if k == ln) for ln in (False, True)}


TRAINED_QUOTES = [
    Q(
        TRAINING,
        "max gap along training 0.0035 (d = 1000), ⟦0.0089⟧ (d = 100)",
        (("gap d=100", lambda t: t.gap_d100),),
    ),
    Q(
        TRAINING,
        "sign-Adam lr 1: ⟦0.051⟧ / ⟦0⟧ / ⟦0⟧",
        tuple(
            (f"step {s}", lambda t, i=i: t.sign_adam_full_batch[i])
            for i, s in enumerate((10, 100, 1000))
        ),
    ),
    Q(
        TRAINING,
        "tuned lr: LN ⟦0.0029⟧ vs ⟦0.0021⟧",
        (
            ("LN", lambda t: t.tuned_layer_norm[True]),
            ("no LN", lambda t: t.tuned_layer_norm[False]),
        ),
    ),
    Q(
        CLAIMS,
        "with the step tuned the advantage disappears (⟦0.0029⟧ against ⟦0.0021⟧)",
        (
            ("LN", lambda t: t.tuned_layer_norm[True]),
            ("no LN", lambda t: t.tuned_layer_norm[False]),
        ),
    ),
]


@pytest.mark.slow
def test_the_training_cells_outside_the_reproduction():
    assert_all_ok(Trained(), TRAINED_QUOTES)


class Predicted:
    """``assocmem predict --setting fig4`` and ``--setting fig1``, as the predictions page runs
    them (100 trials)."""

    scale = "full"

    @staticmethod
    def run(setting: str) -> dict[str, Any]:
        import contextlib
        import io

        from assocmem.cli import main

        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            assert main(["predict", "--setting", setting, "--quiet", "--format", "json"]) == 0
        return json.loads(out.getvalue())

    @cached_property
    def fig4(self) -> dict[str, Any]:
        return self.run("fig4")

    @cached_property
    def fig1(self) -> dict[str, Any]:
        return self.run("fig1")

    def summary(self, setting: str, scheme: str, n_samples: int | None, key: str) -> Any:
        """A summary of the relative errors over d, in %, as a Monte Carlo estimate: its s.e.
        bounds the largest s.e. of the relative errors it reads (a median or a maximum of them
        moves by no more than the largest of their moves)."""
        rows = getattr(self, setting)["summary"]
        (row,) = [r for r in rows if (r["scheme"], r["n_samples"]) == (scheme, n_samples)]
        read = [
            r
            for r in getattr(self, setting)["records"]
            if (r["scheme"], r["n_samples"]) == (scheme, n_samples)
            and (r["dim"] >= 30 or not key.endswith("large_d"))
            and r["rel_error"] is not None  # None: an MC mean of 0, not in the summary
        ]
        return DN.Estimate(100 * row[key], rel_se(read))

    def largest_rel(self, dims: Any) -> Any:
        """The largest |relative error| in % over both settings' records at ``dims``, as a
        Monte Carlo estimate (its s.e.: the largest of theirs, as in :meth:`summary`)."""
        rows = [
            r
            for s in ("fig4", "fig1")
            for r in getattr(self, s)["records"]
            if dims(r["dim"]) and r["rel_error"] is not None  # None: an MC mean of 0
        ]
        return DN.Estimate(100 * max(abs(r["rel_error"]) for r in rows), rel_se(rows))

    def trials(self, setting: str) -> int:
        return int(getattr(self, setting)["config"]["trials"])

    def record(self, setting: str, scheme: str, n_samples: int | None, dim: int) -> dict[str, Any]:
        rows = getattr(self, setting)["records"]
        (row,) = [
            r for r in rows if (r["scheme"], r["n_samples"], r["dim"]) == (scheme, n_samples, dim)
        ]
        return row

    def worst(self, setting: str, scheme: str, n_samples: int | None) -> dict[str, Any]:
        """The record of the largest |relative error| of one curve."""
        rows = [
            r
            for r in getattr(self, setting)["records"]
            if (r["scheme"], r["n_samples"]) == (scheme, n_samples)
        ]
        return max(rows, key=lambda r: abs(r["rel_error"]))


def rel_se(records: list[dict[str, Any]]) -> float:
    """The largest s.e. in % of the relative errors pred/MC − 1 of ``records`` (delta method:
    pred·sem/MC²), a bound on the s.e. of their median or maximum."""
    return 100 * max(r["predicted"] * r["mc_sem"] / r["mc_mean"] ** 2 for r in records)


PREDICT = "docs/beyond/predict.md"
SUMMARY = ("median_abs_rel", "max_abs_rel", "max_abs_rel_large_d")
ETS = "empirical_threshold:P=d/12"


def summary(setting: str, scheme: str, n_samples: int | None, *keys: str) -> tuple[Any, ...]:
    return tuple(
        (
            f"{setting} {scheme} T={n_samples} {k}",
            lambda p, k=k: p.summary(setting, scheme, n_samples, k),
        )
        for k in keys
    )


def point(setting: str, scheme: str, n_samples: int | None, dim: int) -> tuple[Any, ...]:
    """The prediction (its digits), and the Monte Carlo mean and s.e. (in law: the s.e. of an
    s.e. over n trials is s.e./√(2(n − 1)))."""

    def mc(p: Predicted, key: str) -> Any:
        row, trials = p.record(setting, scheme, n_samples, dim), p.trials(setting)
        se = row["mc_sem"] / (1 if key == "mc_mean" else math.sqrt(2 * (trials - 1)))
        return DN.Estimate(row[key], se)

    return (
        (
            f"{setting} {scheme} T={n_samples} d={dim} predicted",
            lambda p: p.record(setting, scheme, n_samples, dim)["predicted"],
        ),
        *((f"{setting} {scheme} T={n_samples} d={dim} {k}", lambda p, k=k: mc(p, k)) for k in (
            "mc_mean", "mc_sem"
        )),
    )  # fmt: skip


def worst_dim(setting: str, scheme: str, n_samples: int | None) -> Any:
    return f"{setting} {scheme} worst d", lambda p: p.worst(setting, scheme, n_samples)["dim"]


PREDICT_QUOTES = [
    Q(
        PREDICT,
        "| Fig. 4 | `q = 1` | ∞ | ⟦4.8⟧ % | ⟦8.4⟧ % | ⟦8.4⟧ % (MC sem ≈ ⟦4⟧ %) |",
        (
            *summary("fig4", "uniform", None, *SUMMARY),
            (
                "relative sem at the worst d",
                lambda p: (
                    100 * (lambda r: r["mc_sem"] / r["mc_mean"])(p.worst("fig4", "uniform", None))
                ),
            ),
        ),
    ),
    Q(
        PREDICT,
        "| Fig. 4 | `q = p` | ∞ | ⟦2.0⟧ % | ⟦7.7⟧ % | ⟦7.7⟧ % |",
        summary("fig4", "population", None, *SUMMARY),
    ),
    Q(
        PREDICT,
        "| Fig. 4 | threshold d/8 | ∞ | ⟦0.7⟧ % | ⟦8.6⟧ % (d = ⟦10⟧) | ⟦1.4⟧ % |",
        (
            *summary("fig4", "threshold:P=d/8", None, *SUMMARY[:2]),
            worst_dim("fig4", "threshold:P=d/8", None),
            *summary("fig4", "threshold:P=d/8", None, SUMMARY[2]),
        ),
    ),
    Q(
        PREDICT,
        "| Fig. 1 | empirical threshold d/12 | 10 | ⟦1.5⟧ % | ⟦8.7⟧ % (d = ⟦10⟧) | ⟦1.8⟧ % |",
        (
            *summary("fig1", ETS, 10, *SUMMARY[:2]),
            worst_dim("fig1", ETS, 10),
            *summary("fig1", ETS, 10, SUMMARY[2]),
        ),
    ),
    Q(
        PREDICT,
        "| Fig. 1 | | 10² | ⟦1.0⟧ % | ⟦8.6⟧ % | ⟦1.9⟧ % |",
        summary("fig1", ETS, 100, *SUMMARY),
    ),
    Q(
        PREDICT,
        "| Fig. 1 | | 10³ | ⟦1.0⟧ % | ⟦8.6⟧ % | ⟦1.0⟧ % |",
        summary("fig1", ETS, 1000, *SUMMARY),
    ),
    Q(
        PREDICT,
        "| Fig. 1 | | 10⁴ | ⟦0.5⟧ % | ⟦8.6⟧ % | ⟦0.7⟧ % |",
        summary("fig1", ETS, 10_000, *SUMMARY),
    ),
    Q(
        PREDICT,
        "| 1000 | ⟦0.003405⟧ vs ⟦0.003386⟧ ± ⟦0.000009⟧ | ⟦0.0588⟧ vs ⟦0.0595⟧ ± ⟦0.0016⟧ | "
        "⟦0.005962⟧ vs ⟦0.005973⟧ ± ⟦0.000031⟧ |",
        (
            *point("fig4", "threshold:P=d/8", None, 1000),
            *point("fig4", "population", None, 1000),
            *point("fig1", ETS, 10_000, 1000),
        ),
    ),
    Q(
        PREDICT,
        "| 100 / 113 | ⟦0.0331⟧ vs ⟦0.0334⟧ ± ⟦0.0003⟧ | ⟦0.1037⟧ vs ⟦0.0998⟧ ± ⟦0.0030⟧ | "
        "⟦0.0571⟧ vs ⟦0.0567⟧ ± ⟦0.0005⟧ |",
        (
            *point("fig4", "threshold:P=d/8", None, 113),
            *point("fig4", "population", None, 113),
            *point("fig1", ETS, 10_000, 100),
        ),
    ),
    Q(
        PREDICT,
        "| 10 | ⟦0.320⟧ vs ⟦0.350⟧ ± ⟦0.011⟧ | ⟦0.229⟧ vs ⟦0.244⟧ ± ⟦0.014⟧ | ⟦0.320⟧ vs ⟦0.351⟧ "
        "± ⟦0.011⟧ |",
        (
            *point("fig4", "threshold:P=d/8", None, 10),
            *point("fig4", "population", None, 10),
            *point("fig1", ETS, 10_000, 10),
        ),
    ),
    Q(
        PREDICT,
        "and errors of up to ⟦9⟧ % remain",
        (("largest |rel| at d < 30", lambda p: p.largest_rel(lambda d: d < 30)),),
    ),
]


@pytest.mark.slow
def test_the_predictions_page_tables():
    assert_all_ok(Predicted(), PREDICT_QUOTES)


@pytest.mark.slow
def test_the_seeded_coverage_of_the_theory_guide():
    """tests/test_fit.py's 200 experiments of 100 trials (about 10 s)."""
    quote = Q(
        DN.THEORY,
        "the seeded run gives ⟦96⟧ %",
        (("coverage, 200 × 100 trials", lambda p: p.coverage(200, 100)),),
    )
    assert_all_ok(DN.LongRuns(), [quote])

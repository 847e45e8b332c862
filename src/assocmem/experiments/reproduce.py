"""``assocmem reproduce``: the paper's closed-form figures, Table 1 and claims, from sweeps run
through the results database, into a self-contained report.

Every experiment is a sweep written to ``OUT/runs.db``: an interrupted reproduction resumes, a
second one reuses every stored run and only redraws (seconds), and ``--full`` reuses the trials
that ``--quick`` already computed wherever the settings coincide. Figures, claims and Table 1 are
functions of the stored records only.
"""

import functools
import json
import platform
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch
from matplotlib.figure import Figure

from assocmem import __version__
from assocmem.analysis.capacity import (
    FrontierPoint,
    fit_frontier,
    hebbian_frontier,
    trained_frontier,
)
from assocmem.analysis.fit import fit_scaling
from assocmem.analysis.theory import table1
from assocmem.closed_form import trial_scores
from assocmem.closed_form.config import ClosedFormConfig
from assocmem.config.errors import ConfigError
from assocmem.experiments.claims import CLAIMS, EXPERIMENTS, format_measured
from assocmem.experiments.findings import FINDINGS, LRS, schedules_row
from assocmem.figures import figure1, figure3, figure4, memory_matrices, save
from assocmem.figures.beyond import capacity_figure, frontier_frame, laws_figure, noise_figure
from assocmem.figures.training import figure5, figure7, figure8
from assocmem.figures.update_map import figure6
from assocmem.laws.tokens import mod_targets, zipf_probabilities
from assocmem.laws.words import word_distribution
from assocmem.report import ClaimRow, FigureEntry, Report, Table, write_report
from assocmem.runtime import intra_op_threads
from assocmem.sweep.execute import run_sweep
from assocmem.sweep.plan import expand_runs
from assocmem.sweep.results import load_curves, load_results
from assocmem.sweep.spec import SweepSpec, build_train, parse_spec
from assocmem.training.engine import stack_runs
from assocmem.training.kernels import AutogradKernel
from assocmem.training.optimizers import schedule_factor

SCALES = ("quick", "full")
FIGURE3 = {
    "n_inputs": 100,
    "alpha": 0.5,
    "schemes": ("seen_once", "empirical"),
    "dims": ("log:10:1000:30",),
    "n_samples": ("log:10:10000:30",),
}
# Trials per setting, and the thinned Figure 3 grid, of the quick scale (the full one: 100).
QUICK_TRIALS = 20
QUICK_FIGURE3 = {"dims": ("log:10:1000:12",), "n_samples": ("log:10:10000:12",)}
QUICK_FIGURE3_TRIALS = 10


@dataclass(frozen=True)
class FigureJob:
    """A paper figure: the experiment whose stored records it draws, and how."""

    key: str
    title: str
    caption: str
    experiment: str
    draw: Callable[[pd.DataFrame], Figure]


FIGURES = {
    "1": FigureJob(
        "figure-1",
        "Figure 1: the joint law of empirical thresholding",
        "Error of the empirical threshold scheme (the P = d/12 most frequent seen tokens) vs d for "
        "each T (left), vs T for each d (middle), and over (d, T) (right); N = 1000, M = 5, α = 2. "
        "Dashed: 5·d^-1 and 0.5·T^-1/2. Bands: 95 % intervals of the mean over trials.",
        "figure1",
        lambda frame: figure1(frame),
    ),
    "3": FigureJob(
        "figure-3",
        "Figure 3: (d, T) contours without threshold",
        "Error over (d, T) for the seen-once scheme and the frequency-weighted scheme n(x); "
        "N = 100, M = 5, α = 0.5.",
        "figure3",
        lambda frame: figure3(frame),
    ),
    "4": FigureJob(
        "figure-4",
        "Figure 4: infinite data, three weightings",
        "Error vs d for q = 1, q = p and q = 1{x ≤ d/8} with infinite data; N = 1000, M = 5, "
        "α = 2. "
        "Dashed: 0.35·d^-1/4 and 3.5·d^-1.",
        "figure4",
        lambda frame: figure4(frame),
    ),
}
SMALL_DIM = {
    "model": "learned",
    "full_batch": True,
    "n_steps": 3000,
    "optimizer": "adam",
    "betas": [0.9, 0.999],
    "lr_scaling": "none",
    "lr": 0.1,
}
# Slices of the authors' training grid behind Figures 7 and 8 (N = 100, M = 5, α = 2).
TRAINING: dict[str, dict[str, Any]] = {
    "step_size": {
        "base": {"optimizer": "sgd", "batch_size": 64, "n_samples": 10240},
        "axes": {"lr": LRS},
    },
    "batch_size": {
        "base": {"optimizer": "adam", "n_samples": 1024},
        "axes": {"batch_size": [16, 1024], "lr": LRS},
    },
    "optimizers": {
        "base": {"batch_size": 256, "n_samples": 10240},
        "axes": {"optimizer": ["sgd", "adam"], "lr": LRS},
    },
    "layer_norm": {
        "base": {"optimizer": "adam", "batch_size": 1024, "n_samples": 10240, "lr": 1.0},
        "axes": {"layer_norm": [False, True]},
    },
    "learned": {
        "base": {"optimizer": "sgd", "batch_size": 16, "n_samples": 10240, "lr": 1.0},
        "axes": {"model": ["matrix", "learned"]},
    },
    # Figure 5: SGD vs the Eq. 16 approximation, B = 1000, 100 steps of fresh data, W₀ = 0.
    "update": {
        "base": {
            "optimizer": "sgd",
            "batch_size": 1000,
            "n_samples": 100_000,
            "lr": 1.0,
            "init": "zero",
            "eval_every": 1,
        },
        "axes": {"dim": [10, 1000], "model": ["matrix", "qupdate"]},
        "seeds": {"quick": 20, "full": 100},
    },
    # Figure 7, schedules: batch 1, N = 10, d = 5, α = 1.5, 1000 steps.
    "schedules": {
        "base": {
            "n_inputs": 10,
            "alpha": 1.5,
            "optimizer": "sgd",
            "batch_size": 1,
            "n_samples": 1000,
            "eval_every": 10,
            "decay_steps": [100],
            "decay_factor": 0.03,
        },
        "axes": {"dim": [5]},
        "zip": {"schedule": ["constant", "constant", "step"], "lr": [10.0, 0.1, 10.0]},
        "seeds": {"quick": 20, "full": 100},
    },
    # Figure 8: full-batch GD, sign-GD and normalised GD on N = d = 10 from W₀ = 0.
    "full_batch": {
        "base": {
            "n_inputs": 10,
            "full_batch": True,
            "n_steps": 1000,
            "init": "zero",
            "eval_every": 1,
        },
        "axes": {
            "dim": [10],
            "optimizer": ["sgd", "sign_sgd", "normalized_sgd"],
            "lr": [0.01, 0.1, 1.0, 10.0],
        },
        "seeds": {"quick": 10, "full": 10},
    },
    # Figure 8: d = 2, E, W and U learned by full-batch Adam(0.9, 0.999), error vs M.
    "small_dim": {
        "base": SMALL_DIM,
        "axes": {"dim": [2], "n_outputs": [5, 10, 20, 30, 40]},
        "seeds": {"quick": 3, "full": 10},
    },
}
TRAIN_DIMS = {"quick": [10, 100, 1000], "full": [10, 20, 50, 100, 200, 500, 1000]}
TRAIN_SEEDS = {"quick": 3, "full": 10}
# Beyond the paper (issue 7), trained memories: sign-like Adam, B = 256, T = 10240.
BEYOND_BASE = {"optimizer": "adam", "batch_size": 256, "n_samples": 10240}
BEYOND_LRS = {"quick": [1.0, 10.0], "full": LRS}
BEYOND_LANGUAGE = "en"  # real word law of the laws panel, against Zipf at its fitted α̂
# Capacity frontiers: (memory, M or None for M = N) → dims, trials, repeats per scale.
CAPACITY = {
    "quick": {"dims": [16, 32, 64], "hebbian": (3, 3), "trained": (1, 2)},
    "full": {"dims": [16, 32, 64, 128], "hebbian": (5, 5), "trained": (2, 3)},
}
PAPER_ITEMS = (*FIGURES, "memory", "5", "6", "7", "8", "table1", "claims")
ONLY_CHOICES = (*PAPER_ITEMS, "beyond")  # beyond the paper: only when asked for
# The training slices each figure draws (the claims read all of them).
FIGURE_TRAINING = {
    "5": ("update",),
    "7": ("step_size", "batch_size", "schedules"),
    "8": ("optimizers", "layer_norm", "learned", "full_batch", "small_dim"),
}


@functools.cache
def beyond_training(scale: str) -> dict[str, dict[str, Any]]:
    """The trained experiments beyond the paper: label noise ε ∈ {0, 0.1, 0.3} (N = 100), and
    the word law of :data:`BEYOND_LANGUAGE` against Zipf at its KL-fitted α̂ (N = 1000)."""
    try:
        alpha = word_distribution(BEYOND_LANGUAGE, 1000).alpha_kl
    except ConfigError as error:  # wordfreq is an optional extra
        raise ConfigError("only", f"beyond needs real word laws: {error}") from None
    lrs = BEYOND_LRS[scale]
    laws = {**BEYOND_BASE, "n_inputs": 1000}
    return {
        "noise": {"base": BEYOND_BASE, "axes": {"label_noise": [0.0, 0.1, 0.3], "lr": lrs}},
        "laws_words": {"base": {**laws, "words": BEYOND_LANGUAGE}, "axes": {"lr": lrs}},
        "laws_zipf": {"base": {**laws, "alpha": round(alpha, 6)}, "axes": {"lr": lrs}},
    }


def capacity_payloads(out: Path, scale: str) -> list[dict[str, Any]]:
    """Hebbian and trained capacity frontiers (M = N and M = 5) as ``assocmem capacity`` JSON
    payloads, kept in ``OUT/capacity-SCALE.json`` (each search is run once, then reused)."""
    cache = out / f"capacity-{scale}.json"
    stored = json.loads(cache.read_text()) if cache.exists() else {}
    plan, payloads = CAPACITY[scale], []
    for memory, search in (("hebbian", hebbian_frontier), ("trained", trained_frontier)):
        trials, repeats = plan[memory]
        for outputs in (None, 5):
            key = f"{memory}:M={outputs or 'N'}:d={plan['dims']}:{trials}x{repeats}"
            if key not in stored:
                points = search(plan["dims"], n_outputs=outputs, trials=trials, repeats=repeats)
                stored[key] = {
                    "memory": memory,
                    "settings": {"n_outputs": outputs, "trials": trials, "repeats": repeats},
                    "points": [{"dim": p.dim, "n_star": list(p.n_star)} for p in points],
                }
                partial = cache.with_suffix(".partial")
                partial.write_text(json.dumps(stored, indent=1))
                partial.replace(cache)
            payloads.append(stored[key])
    return payloads


def capacity_table(payloads: Sequence[dict[str, Any]]) -> Table:
    """Measured frontier constants at the largest d, with 95 % intervals over repeats."""
    rows = []
    for payload in payloads:
        points = [FrontierPoint(p["dim"], tuple(p["n_star"])) for p in payload["points"]]
        fit, last = fit_frontier(points), len(points) - 1
        m = payload["settings"]["n_outputs"]
        low, high = fit.constant_ci[last] if m is None else fit.d_over_n_ci[last]
        value = fit.constant[last] if m is None else fit.d_over_n[last]
        rows.append(
            [
                payload["memory"],
                "N" if m is None else str(m),
                f"{fit.dims[last]}",
                f"{fit.n_star[last]:g}",
                ("d²/(N log N) = " if m is None else "d/N = ") + f"{value:.3g}",
                f"[{low:.3g}, {high:.3g}]",
                f"{fit.exponent:.2f} [{fit.exponent_ci[0]:.2f}, {fit.exponent_ci[1]:.2f}]",
            ]
        )
    return Table(
        "Capacity frontier: the largest N stored with top-1 accuracy ≥ 0.99",
        ["memory", "M", "largest d", "N* (median)", "constant", "95% CI", "N* ∝ d^k: k"],
        rows,
        "References for M = N: trained linear memories reach d² ≈ 1.3·N·log N (Nichani, Lee, "
        "Bietti 2025); the sharp threshold is conjectured at d² ≈ 2·N·log N (Barnfield et al. "
        "2026). With a small M the logits depend on W only through U W (M·d numbers): N* grows "
        "like d.",
    )


def experiment_spec(name: str, scale: str, device: str) -> SweepSpec:
    """The sweep of one experiment at one scale (quick: fewer trials, a thinner Figure 3 grid)."""
    values = dict(FIGURE3) if name == "figure3" else {"n_inputs": 1000, **EXPERIMENTS[name]}
    trials = 100
    if scale == "quick":
        trials = QUICK_TRIALS
        if name == "figure3":
            values.update(QUICK_FIGURE3)
            trials = QUICK_FIGURE3_TRIALS
    base = {k: list(v) if isinstance(v, tuple) else v for k, v in values.items()}
    if "n_samples" not in base:
        base["n_samples"] = ["inf"]
    base["device"] = device
    raw = {"name": f"{name}-{scale}", "kind": "closed_form", "trials": trials, "base": base}
    return parse_spec(raw, source=f"reproduce:{name}")


def training_spec(name: str, scale: str, device: str) -> SweepSpec:
    """One training experiment at one scale (grid slices at quick: d ∈ {10, 100, 1000}, 3
    seeds; the other experiments fix their own d and seeds)."""
    part = TRAINING[name] if name in TRAINING else beyond_training(scale)[name]
    base = {"n_inputs": 100, "n_outputs": 5, "alpha": 2.0, "device": device, **part["base"]}
    axes = {"dim": TRAIN_DIMS[scale], **part["axes"]}
    varied = {*axes, *part.get("zip", {})}
    base = {k: v for k, v in base.items() if k not in varied}
    raw = {
        "name": f"{name}-{scale}",
        "kind": "train",
        "seeds": part.get("seeds", TRAIN_SEEDS)[scale],
        "base": base,
        "axes": axes,
    }
    if "zip" in part:
        raw["zip"] = part["zip"]
    return parse_spec(raw, source=f"reproduce:{name}")


class StoredFrames:
    """Record frames of each experiment, read from the database; ``frames.figure4`` etc. (named
    as the experiments, as the claims expect)."""

    def __init__(self, db: Path, specs: dict[str, SweepSpec]) -> None:
        self.db = db
        self.all = load_results(db)
        self.keys = {name: {run.key for run in expand_runs(spec)} for name, spec in specs.items()}
        self.frames = {name: self._select(self.all, keys) for name, keys in self.keys.items()}
        self._curves: pd.DataFrame | None = None

    @staticmethod
    def _select(frame: pd.DataFrame, keys: set[str]) -> pd.DataFrame:
        return frame[frame["hash"].isin(keys)].dropna(axis=1, how="all").reset_index(drop=True)

    def curves(self, name: str) -> pd.DataFrame:
        """The error-along-training rows of one training experiment's runs."""
        if self._curves is None:
            self._curves = load_curves(self.db)
        return self._select(self._curves, self.keys[name])

    def __getattr__(self, name: str) -> pd.DataFrame:
        try:
            return self.__dict__["frames"][name]
        except KeyError:
            raise AttributeError(name) from None


def _trial_matrix(frame: pd.DataFrame, by: str) -> tuple[np.ndarray, np.ndarray]:
    """x values and per-trial errors (n_trials, n_x) of one curve."""
    table = frame.pivot_table(index="trial", columns=by, values="error")
    return table.columns.to_numpy(float), table.to_numpy()


def table_one(frames: StoredFrames, alpha: float = 2.0) -> Table:
    """Table 1 of the paper: theory exponents next to measured slopes with 95 % intervals."""
    pop, thr = table1(alpha)  # the q = p row and the thresholding row
    rows = []

    def add(label: str, exponent: float | None, frame: pd.DataFrame, by: str, window: Any) -> None:
        theory = None if exponent is None else -exponent
        x, errors = _trial_matrix(frame, by)
        fit = fit_scaling(x, errors, theory_slope=theory, window=window, n_boot=1000)
        rows.append(
            [
                label,
                "—" if theory is None else f"{theory:.3g}",
                f"{fit.slope:.3f}",
                f"[{fit.ci_low:.3f}, {fit.ci_high:.3f}]",
                f"{fit.window[0]:g}–{fit.window[1]:g}",
                fit.verdict,
            ]
        )

    f4, f1 = frames.figure4, frames.figure1
    et = f1[f1["scheme"] == "empirical_threshold:P=d/12"]
    add(
        "q = p: slope in d (T = ∞)",
        pop.dim_exponent,
        f4[f4["scheme"] == "population"],
        "dim",
        (50, 1000),
    )
    add(
        "q = 1{x ≤ d/8}: slope in d (T = ∞)",
        thr.dim_exponent,
        f4[f4["scheme"] == "threshold:P=d/8"],
        "dim",
        (50, 1000),
    )
    add(
        "threshold d/12 seen: slope in d (T = 10⁴)",
        thr.dim_exponent,
        et[et["n_samples"] == 10_000],
        "dim",
        (50, 1000),
    )
    add(
        "threshold d/12 seen: slope in T (d = 1000)",
        thr.data_exponent,
        et[et["dim"] == 1000],
        "n_samples",
        (10, 10_000),
    )
    return Table(
        f"Table 1 at α = {alpha:g}: theory and measured slopes (95 % trial-bootstrap intervals)",
        ["quantity", "theory", "measured", "95% CI", "fit window", "verdict"],
        rows,
        "A 'finite-size miss' is an interval that excludes the asymptotic slope: at N = 1000 the "
        "curves bend (the other term of the joint law acts as a floor), so fitted slopes run a "
        "little steeper than the asymptotic exponent while staying within the paper's tolerances.",
    )


def add_memory_pictures(report: Report, out: Path) -> None:
    """The memory-matrix pictures: one trial computed directly (a picture of one memory)."""
    cfg = ClosedFormConfig(
        n_inputs=10,
        n_outputs=5,
        alpha=1.0,
        dims=(10,),
        n_samples=(1000,),
        schemes=("empirical:rho=0", "empirical:rho=1"),
        trials=1,
    )
    scores = {f"ρ = {c.scheme[-1]}": s.numpy() for (c, _), s in trial_scores(cfg).items()}
    fig = memory_matrices(scores, mod_targets(10, 5).numpy())
    caption = (
        "Softmax of the N×M scores of the memories q = n(x)^ρ for ρ = 0 (seen once) and ρ = 1 "
        "(frequency), N = 10, M = 5, d = 10, α = 1, T = 1000; circles mark f*(x). One trial, "
        "computed directly (it is a picture of one memory, not a statistic)."
    )
    add_figure(report, out, "memory", "Memory-matrix pictures", caption, cfg.to_dict(), fig)


def small_dim_geometry(cache: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One d = 2 memory of the Figure 8 panel (M = 5, seed 0), trained directly: the hidden
    ``W e_x`` of every input, the output embeddings and the targets (a picture of one memory;
    the error-vs-M panel next to it is read from stored runs). Kept in ``cache`` (an .npz)
    so that a re-run only redraws."""
    cfg = build_train({**SMALL_DIM, "dim": 2, "n_outputs": 5})
    if cache.exists():
        with np.load(cache) as stored:
            if str(stored["config"]) == repr(cfg.to_dict()):
                return stored["hidden"], stored["outputs"], stored["targets"]
    inputs = stack_runs([cfg])
    targets = mod_targets(cfg.n_inputs, cfg.n_outputs)
    kernel = AutogradKernel(cfg, inputs, targets)
    probs = zipf_probabilities(cfg.n_inputs, cfg.alpha).to(torch.float32)[None]
    with intra_op_threads(1):  # 100×2 tensors: one thread is fastest
        for t in range(cfg.steps):
            kernel.step(t + 1, None, probs, inputs.lr * schedule_factor(cfg, t))
    state = kernel.state
    hidden = torch.einsum("rij,rnj->rni", state["W"], state["E"])[0].numpy()
    outputs, labels = state["U"][0].numpy(), targets.numpy()
    partial = cache.with_suffix(".partial.npz")
    np.savez(partial, config=repr(cfg.to_dict()), hidden=hidden, outputs=outputs, targets=labels)
    partial.replace(cache)
    return hidden, outputs, labels


TRAINING_FIGURES = [
    (
        "5",
        "Figure 5: SGD against the Eq. 16 approximation",
        "Error along training of the matrix memory trained by SGD and of the q-update of Eq. 16 "
        "on the same embeddings and data (N = 100, M = 5, α = 2, B = 1000, a fresh batch each "
        "step, lr = 1, W₀ = 0). Left: d = 10 < N, where the approximation degrades; right: "
        "d = 1000 ≥ N, where it tracks SGD. Bands: 95 % intervals over seeds.",
        lambda frames: figure5(frames.curves("update")),
    ),
    (
        "7",
        "Figure 7: step size, batch size and schedules",
        "Trained matrix memories (N = 100, M = 5, α = 2), error vs d. Left: SGD, B = 64, "
        "T = 10240, one curve per step size. Middle: sign-like Adam, T = 1024, B = 16 vs 1024 at "
        "the tuned lr (best seed-averaged error). Right: SGD with batch 1 on N = 10, M = 5, "
        "d = 5, α = 1.5, error along training for lr = 10, lr = 0.1, and lr = 10 decayed ×0.03 "
        "at step 100. Bands: 95 % intervals over seeds.",
        lambda frames: figure7(frames.step_size, frames.batch_size, frames.curves("schedules")),
    ),
    (
        "8",
        "Figure 8: Adam vs SGD, layer norm, learned embeddings, full batch, d = 2",
        "Top: SGD vs sign-like Adam, B = 256, T = 10240, tuned lr; sign-like Adam with and "
        "without layer norm at lr = 1, B = 1024, T = 10240; SGD at lr = 1, B = 16, T = 10240, "
        "learning W only vs learning W, E and U. Bottom: full-batch GD, sign-GD and normalised "
        "GD on N = d = 10 from W₀ = 0, each at its tuned lr of {0.01, 0.1, 1, 10}; d = 2 with E, "
        "W and U learned by full-batch Adam(0.9, 0.999), lr = 0.1, 3000 steps: error vs the "
        "number of classes M (N = 100); and the geometry of one such memory (M = 5, trained "
        "directly for the picture): inputs cluster by class along the output directions.",
        lambda frames: figure8(
            frames.optimizers,
            frames.layer_norm,
            frames.learned,
            frames.curves("full_batch"),
            frames.small_dim,
            small_dim_geometry(frames.db.parent / "figure-8-geometry.npz"),
        ),
    ),
]


def _git_revision() -> str | None:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
            cwd=Path(__file__).parent,
        )
    except OSError:
        return None
    return out.stdout.strip() or None


BEYOND_FIGURES = [
    (
        "beyond-noise",
        "Beyond the paper: noisy associations (trained)",
        "Trained matrix memories (N = 100, M = 5, α = 2, sign-like Adam, B = 256, T = 10240, "
        "best seed-averaged lr) when a sample's label is f*(x) with probability 1 − ε, else one "
        "of the other outputs. Left: excess error over the Bayes error ε; right: error against "
        "the noisy labels, dashed the Bayes floors.",
        lambda frames: noise_figure(frames.noise),
    ),
    (
        "beyond-laws",
        "Beyond the paper: a real word law against Zipf (trained)",
        f"Trained matrix memories on the {BEYOND_LANGUAGE} word-frequency law of the 1000 most "
        "frequent words (wordfreq; credits in the README) and on the Zipf law at its KL-fitted "
        "α̂ (M = 5, sign-like Adam, B = 256, T = 10240, best seed-averaged lr).",
        lambda frames: laws_figure(pd.concat([frames.laws_words, frames.laws_zipf])),
    ),
]


def add_figure(
    report: Report, out: Path, key: str, title: str, caption: str, settings: Any, fig: Figure
) -> None:
    """Save ``fig`` as OUT/figures/KEY.png and .svg, and add it to the report."""
    save(fig, out / "figures" / key, formats=("png", "svg"))
    report.figures.append(FigureEntry.from_figure(key, title, caption, settings, fig))


def add_beyond(
    report: Report, frames: StoredFrames, out: Path, scale: str, specs: dict[str, SweepSpec]
) -> None:
    """Issue 7's figures and the capacity table, after the paper's."""
    for key, title, caption, draw in BEYOND_FIGURES:
        names = ("noise",) if key == "beyond-noise" else ("laws_words", "laws_zipf")
        settings = {n: specs[n].base | specs[n].axes for n in names}
        add_figure(report, out, key, title, caption, settings, draw(frames))
    payloads = capacity_payloads(out, scale)
    caption = (
        "Capacity frontier: the largest N whose associations are all retrieved with top-1 "
        "accuracy ≥ 0.99 (uniform over the N inputs, Gaussian E and U), for the outer-product "
        "memory and for W trained by full-batch Adam; each input its own output (M = N, d² vs "
        "N log N) and M = 5 (N* vs d). Searches are cached in OUT/capacity-SCALE.json."
    )
    title = "Beyond the paper: capacity frontier"
    fig = capacity_figure(frontier_frame(payloads))
    add_figure(report, out, "beyond-capacity", title, caption, CAPACITY[scale], fig)
    report.tables.append(capacity_table(payloads))


def reproduce(
    out: str | Path,
    *,
    scale: str = "quick",
    only: Sequence[str] | None = None,
    executor: str = "local",
    workers: int | None = None,
    device: str = "cpu",
    progress: bool = False,
) -> Path:
    """Run (or resume) every experiment, then write figures and ``report.html`` under ``out``."""
    if scale not in SCALES:
        raise ConfigError("scale", f"unknown scale {scale!r}; allowed: {', '.join(SCALES)}")
    wanted = list(only or PAPER_ITEMS)
    for item in wanted:
        if item not in ONLY_CHOICES:
            raise ConfigError("only", f"unknown item {item!r}; allowed: {', '.join(ONLY_CHOICES)}")
    out = Path(out)
    start = time.perf_counter()
    names = {FIGURES[k].experiment for k in wanted if k in FIGURES}
    if "claims" in wanted:
        names |= set(EXPERIMENTS)
    if "table1" in wanted:
        names |= {"figure1", "figure4"}
    specs = {name: experiment_spec(name, scale, device) for name in sorted(names)}
    training = set(TRAINING) if "claims" in wanted else set()
    for key in wanted:
        training |= set(FIGURE_TRAINING.get(key, ()))
    if "beyond" in wanted:
        training |= set(beyond_training(scale))
    specs |= {name: training_spec(name, scale, device) for name in sorted(training)}
    out.mkdir(parents=True, exist_ok=True)
    db = out / "runs.db"
    reports = [
        run_sweep(spec, db, executor=executor, workers=workers, progress=progress)
        for spec in specs.values()
    ]
    frames = StoredFrames(db, specs)
    report = Report(
        title="assocmem: Scaling Laws for Associative Memories, reproduced",
        subtitle=f"{scale} scale — Cabannes, Dohmatob, Bietti (ICLR 2024); assocmem {__version__}",
    )
    for key in (k for k in FIGURES if k in wanted):
        job = FIGURES[key]
        fig = job.draw(getattr(frames, job.experiment))
        settings = specs[job.experiment].base | {"trials": specs[job.experiment].trials}
        add_figure(report, out, job.key, job.title, job.caption, settings, fig)
    if "memory" in wanted:
        add_memory_pictures(report, out)

    def add_training_figures(keys: Sequence[str]) -> None:
        for key, title, caption, draw in TRAINING_FIGURES:
            if key in keys and key in wanted:
                settings = {
                    n: specs[n].base | specs[n].axes | specs[n].zipped for n in FIGURE_TRAINING[key]
                }
                add_figure(report, out, f"figure-{key}", title, caption, settings, draw(frames))

    add_training_figures(("5",))
    if "6" in wanted:
        caption = (
            "Left: the Eq. 16 update map iterated, f^n(0) vs n, for several step sizes γ (M = 10). "
            "Right: the weighting q(x) = f^{n(x)}(0) it implies for p ∝ (x+3)^-2 over 100 tokens "
            "(counts p(x)/min p, capped at 100), against p, p^0.35 and p^0.05, each normalised to "
            "sum 1: small steps store q ∝ p, large steps flatten q towards thresholding. "
            "Pure arithmetic (no runs)."
        )
        settings = {"n_outputs": 10, "gammas": [1e-3, 1e-1, 1, 10], "n_inputs": 100, "cap": 100}
        title = "Figure 6: the update map"
        add_figure(report, out, "figure-6", title, caption, settings, figure6())
    add_training_figures(("7", "8"))
    if "table1" in wanted:
        report.tables.append(table_one(frames))
    if "beyond" in wanted:
        add_beyond(report, frames, out, scale, specs)
    if "claims" in wanted:
        for judge in CLAIMS.values():
            claim = judge(frames)
            report.claims.append(
                ClaimRow(claim.id, claim.statement, format_measured(claim.measured), claim.passed)
            )
        for finding in FINDINGS.values():
            claim = finding(frames, scale)
            report.claims.append(
                ClaimRow(claim.id, claim.statement, format_measured(claim.measured), claim.passed)
            )
        report.claims.append(schedules_row(frames))
    report.notes += [
        "Figure 2 of the paper is a diagram (three memories, one wrong answer) and is omitted.",
    ]
    statuses: dict[str, int] = {}
    for rep in reports:
        for status, count in rep.statuses.items():
            statuses[status] = statuses.get(status, 0) + count
    runs = frames.all.drop_duplicates("hash")
    report.provenance = {
        "scale": scale,
        "database": str(db),
        "runs_stored": int(len(runs)),
        "runs_written_now": int(sum(r.written for r in reports)),
        "statuses_now": statuses,
        "compute_seconds_stored": float(runs["wall_seconds"].fillna(0).sum()),
        "hosts": sorted(set(runs["host"].dropna())),
        "assocmem": __version__,
        "git": _git_revision(),
        "torch": torch.__version__,
        "python": platform.python_version(),
        "device": device,
        "wall_seconds_this_invocation": round(time.perf_counter() - start, 2),
    }
    return write_report(report, out / "report.html")

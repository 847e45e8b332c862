"""Beyond the paper: trained memories under label noise and on a real word law against
Zipf. (The capacity frontiers of Hebbian and trained memories are the facts study's:
:mod:`assocmem.studies.facts.frontier_experiment`.)"""

import functools

import pandas as pd
from matplotlib.figure import Figure

from assocmem.config.errors import ConfigError
from assocmem.experiments.experiment import Context, Experiment, RawSpec, training_sweep
from assocmem.experiments.findings import LRS
from assocmem.laws.words import word_distribution
from assocmem.studies.real_data.figure import laws_figure, noise_figure

# Trained memories: sign-like Adam, B = 256, T = 10240.
BASE = {"optimizer": "adam", "batch_size": 256, "n_samples": 10240}
LRS_BY_SCALE = {"quick": [1.0, 10.0], "full": LRS}
LANGUAGE = "en"  # real word law of the laws panel, against Zipf at its fitted α̂


def noise_sweeps(scale: str) -> dict[str, RawSpec]:
    """Label noise ε ∈ {0, 0.1, 0.3} at N = 100."""
    axes = {"label_noise": [0.0, 0.1, 0.3], "lr": LRS_BY_SCALE[scale]}
    return {"noise": training_sweep({"base": BASE, "axes": axes}, scale)}


@functools.cache
def zipf_fit(language: str) -> float:
    """The KL-fitted Zipf exponent α̂ of a real word law (N = 1000)."""
    try:
        return word_distribution(language, 1000).alpha_kl
    except ConfigError as error:  # wordfreq is an optional extra
        raise ConfigError("only", f"beyond needs real word laws: {error}") from None


def laws_sweeps(scale: str) -> dict[str, RawSpec]:
    """The word law of :data:`LANGUAGE` against Zipf at its KL-fitted α̂ (N = 1000)."""
    laws, axes = {**BASE, "n_inputs": 1000}, {"lr": LRS_BY_SCALE[scale]}
    zipf = {**laws, "alpha": round(zipf_fit(LANGUAGE), 6)}
    return {
        "laws_words": training_sweep({"base": {**laws, "words": LANGUAGE}, "axes": axes}, scale),
        "laws_zipf": training_sweep({"base": zipf, "axes": axes}, scale),
    }


def draw_laws(ctx: Context) -> Figure:
    return laws_figure(pd.concat([ctx.frames.laws_words, ctx.frames.laws_zipf]))


NOISE = Experiment(
    name="beyond-noise",
    title="Beyond the paper: noisy associations (trained)",
    caption="Trained matrix memories (N = 100, M = 5, α = 2, sign-like Adam, B = 256, T = 10240, "
    "best seed-averaged lr) when a sample's label is f*(x) with probability 1 − ε, else one "
    "of the other outputs. Left: excess error over the Bayes error ε; right: error against "
    "the noisy labels, dashed the Bayes floors.",
    item="beyond",
    sweeps=noise_sweeps,
    draw=lambda ctx: noise_figure(ctx.frames.noise),
)
LAWS = Experiment(
    name="beyond-laws",
    title="Beyond the paper: a real word law against Zipf (trained)",
    caption=f"Trained matrix memories on the {LANGUAGE} word-frequency law of the 1000 most "
    "frequent words (wordfreq; credits in the README) and on the Zipf law at its KL-fitted "
    "α̂ (M = 5, sign-like Adam, B = 256, T = 10240, best seed-averaged lr).",
    item="beyond",
    sweeps=laws_sweeps,
    draw=draw_laws,
)

"""Experiments that compute directly instead of reading sweeps: the memory-matrix pictures (one
memory each) and Figure 6 (pure arithmetic of the Eq. 16 update map)."""

from typing import Any

from matplotlib.figure import Figure

from assocmem.closed_form import trial_scores
from assocmem.closed_form.config import ClosedFormConfig
from assocmem.experiments.experiment import Context, Experiment
from assocmem.figures import memory_matrices
from assocmem.figures.update_map import figure6
from assocmem.laws.tokens import mod_targets

MEMORY_CONFIG = ClosedFormConfig(
    n_inputs=10,
    n_outputs=5,
    alpha=1.0,
    dims=(10,),
    n_samples=(1000,),
    schemes=("empirical:rho=0", "empirical:rho=1"),
    trials=1,
)
UPDATE_MAP: dict[str, Any] = {
    "n_outputs": 10,
    "gammas": [1e-3, 1e-1, 1, 10],
    "n_inputs": 100,
    "cap": 100,
}


def draw_memory(ctx: Context) -> Figure:
    """The softmax scores of one trial of each memory, with the targets f*(x)."""
    cfg = MEMORY_CONFIG
    scores = {f"ρ = {c.scheme[-1]}": s.numpy() for (c, _), s in trial_scores(cfg).items()}
    return memory_matrices(scores, mod_targets(cfg.n_inputs, cfg.n_outputs).numpy())


def _memory_settings(ctx: Context) -> dict[str, Any]:
    return MEMORY_CONFIG.to_dict()


MEMORY = Experiment(
    name="memory",
    title="Memory-matrix pictures",
    caption=r"Softmax of the N×M scores of the memories $q = n(x)^{\rho}$ for ρ = 0 (seen "
    "once) and ρ = 1 (frequency), N = 10, M = 5, d = 10, α = 1, T = 1000; circles mark f*(x). "
    "One trial, computed directly (it is a picture of one memory, not a statistic).",
    item="memory",
    draw=draw_memory,
    settings=_memory_settings,
)
FIGURE_6 = Experiment(
    name="figure-6",
    title="Figure 6: the update map",
    caption="Left: the Eq. 16 update map iterated, $f^{n}(0)$ vs n, for several step sizes γ "
    r"(M = 10). Right: the weighting $q(x) = f^{n(x)}(0)$ it implies for $p \propto (x+3)^{-2}$ "
    "over 100 tokens (counts p(x)/min p, capped at 100), against p, $p^{0.35}$ and $p^{0.05}$, "
    "each normalised to sum 1: small steps store q ∝ p, large steps flatten q towards "
    "thresholding. Pure arithmetic (no runs).",
    item="6",
    draw=lambda ctx: figure6(**UPDATE_MAP),
    settings=lambda ctx: UPDATE_MAP,
)

r"""Figure 6 of the paper: the Eq. 16 update map and the weighting it implies.

Each occurrence of token x moves its stored weight by
:math:`q \leftarrow f(q) = q + \gamma / (1 + e^q/(M-1))` (Cabannes et al. 2024, Eq. (16); see the
docs: science/optimisation.md), so after n occurrences :math:`q = f^n(0)`. With a small step γ the
map is nearly linear (:math:`q \propto n \propto p`: the poor frequency weighting); with a large γ
it saturates after a few occurrences and flattens q (close to thresholding). Pure arithmetic: no
runs are needed.
"""

from collections.abc import Sequence

import numpy as np
from matplotlib.figure import Figure

from assocmem.figures.style import colors, new_figure

REFERENCE_STYLES = ("--", ":", "-.", (0, (5, 1, 1, 1, 1, 1)))


def iterate_update(gamma: float, n_outputs: int, n_max: int) -> np.ndarray:
    """:math:`f^n(0)` for n = 0..n_max (Eq. 16 with step γ and M outputs), shape (n_max + 1,)."""
    q = np.zeros(n_max + 1)
    for n in range(n_max):
        q[n + 1] = q[n] + gamma / (1.0 + np.exp(q[n]) / (n_outputs - 1))
    return q


def implied_weights(probs: np.ndarray, gamma: float, n_outputs: int, cap: int = 100) -> np.ndarray:
    r""":math:`q(x) = f^{n(x)}(0)` with :math:`n(x) = \min(p(x)/\min p, \mathrm{cap})` rounded: a
    sample in which the rarest token occurs once, counts capped at ``cap`` (they only bound the
    iteration)."""
    counts = np.minimum(np.rint(probs / probs.min()), cap).astype(int)
    weights: np.ndarray = iterate_update(gamma, n_outputs, cap)[counts]
    return weights


def figure6(
    gammas: Sequence[float] = (1e-3, 1e-1, 1.0, 10.0),
    n_outputs: int = 10,
    n_inputs: int = 100,
    cap: int = 100,
    powers: Sequence[float] = (1.0, 0.35, 0.05),
) -> Figure:
    r"""The Eq. (16) update map and the weighting it implies (Figure 6).

    Pure arithmetic: no runs are needed.

    Parameters
    ----------
    gammas : sequence of float, default (1e-3, 1e-1, 1.0, 10.0)
        The per-sample steps γ.
    n_outputs : int, default 10
        M.
    n_inputs : int, default 100
        Tokens of the law :math:`p \propto (x+3)^{-2}`.
    cap : int, default 100
        Counts are capped here.
    powers : sequence of float, default (1.0, 0.35, 0.05)
        The references :math:`p^\rho` drawn against the implied q.

    Returns
    -------
    matplotlib.figure.Figure
        Left: :math:`f^n(0)` against n for each γ. Right: the implied q(x) against :math:`p^\rho`
        (each normalised to sum 1).

    Notes
    -----
    Cabannes et al. (2024), Figure 6 and Eq. (16); see the docs: science/figures.md.
    """
    fig, (left, right) = new_figure(2)
    x = np.arange(n_inputs)
    p = (x + 3.0) ** -2
    p /= p.sum()
    n = np.arange(cap + 1)
    for gamma, color in zip(gammas, colors(len(gammas)), strict=True):
        q = iterate_update(gamma, n_outputs, cap)
        left.plot(n[1:], q[1:] / q[-1], color=color, label=f"γ = {gamma:g}")
        w = implied_weights(p, gamma, n_outputs, cap)
        right.plot(x + 1, w / w.sum(), color=color, label=f"$q_\\gamma$, γ = {gamma:g}")
    for i, power in enumerate(powers):  # one line style per reference, all black
        ref, style = p**power, REFERENCE_STYLES[i % len(REFERENCE_STYLES)]
        right.plot(
            x + 1, ref / ref.sum(), ls=style, color="black", lw=1, label=f"$p^{{{power:g}}}$"
        )
    left.set(
        xscale="log",
        xlabel="occurrences n",
        ylabel="$f^{n}(0)\\,/\\,f^{100}(0)$",
        title="Eq. 16 update map (M = 10)",
    )
    right.set(
        xscale="log",
        yscale="log",
        xlabel="token rank x + 1",
        ylabel="q(x) / Σ q",
        title="Implied weighting vs powers of p",
    )
    left.legend(fontsize=7)
    right.legend(fontsize=7)
    return fig

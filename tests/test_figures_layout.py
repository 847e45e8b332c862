"""Every figure the project draws reads cleanly (issue 35, criterion 5): checked as drawn, before
saving, by :func:`assocmem.figures.layout.layout_problems`, from small real runs."""

import numpy as np
import pytest
from matplotlib.figure import Figure

from assocmem import run_study
from assocmem.experiments.registry import EXPERIMENTS
from assocmem.figures import layout_problems
from assocmem.figures.layout import MARKED_OFF_AXES
from assocmem.figures.style import new_figure

# The cheapest real runs that draw each figure: the study commands' tiny scale, or the quick
# sweeps cut to these settings (seconds each). None: the experiment computes directly.
SETTINGS = {
    "figure-1": {"trials": 2},
    "figure-3": {"trials": 2},
    "figure-4": {"trials": 2},
    "memory": None,
    "figure-5": {"seeds": 1},
    "figure-6": None,
    "figure-7": {"seeds": 1},
    "figure-8": {"seeds": 1},
    "beyond-noise": {"seeds": 1},
    "beyond-laws": {"seeds": 1},
    "beyond-capacity": {"dims": [16, 32]},
}
TINY = (
    "superposition",
    "hierarchy",
    "vocabulary",
    "noise-threshold",
    "editing",
    "similar",
    "facts",
    "incontext",
)


def test_every_drawn_experiment_is_checked():
    drawn = {name for name, e in EXPERIMENTS.items() if e.draw is not None}
    tiny = {f"beyond-{name}" for name in TINY}
    assert drawn == set(SETTINGS) | tiny


def _drawn(name: str) -> Figure:
    if SETTINGS.get(name, {}) is None:  # no runs: the figure is computed directly
        draw = EXPERIMENTS[name].draw
        assert draw is not None
        return draw(None)  # type: ignore[arg-type]  # its context is not read
    if name in TINY:
        figure = run_study(name, scale="tiny").figure
    else:
        figure = run_study(name, settings=SETTINGS[name]).figure
    assert figure is not None
    return figure


SLOW = {"beyond-capacity", "facts", "incontext"}  # frontier searches: ~35 s (capacity), ~80 s
# (facts, tiny); the in-context capacities at large T ~30 s


def _case(name: str) -> object:
    return pytest.param(name, marks=[pytest.mark.slow] * (name in SLOW))


@pytest.mark.parametrize("name", [_case(name) for name in [*SETTINGS, *TINY]])
def test_figure_reads_cleanly(name):
    """No text or legend overlaps another or the data, no point lies outside its axes, every
    line is in a legend or the caption, and every exponent or subscript is mathtext."""
    caption = EXPERIMENTS[name if name in EXPERIMENTS else f"beyond-{name}"].caption
    assert layout_problems(_drawn(name), caption) == []


def _clean() -> Figure:
    fig, (ax,) = new_figure(1)
    x = np.array([1.0, 10.0, 100.0])
    ax.plot(x, 1 / x, color="C0", label="measured")
    ax.plot(x, 2 / x, color="C0", ls="--", label=r"$2\,d^{-1}$")
    ax.set(xscale="log", yscale="log", xlabel="$d$", ylabel="error", title="a clean panel")
    ax.legend(loc="best")
    return fig


def test_a_clean_figure_has_no_problem():
    assert layout_problems(_clean()) == []


def test_each_kind_of_defect_is_found():
    """One defect at a time on the clean figure: each is reported, naming what is wrong."""
    fig = _clean()
    ax = fig.axes[0]
    ax.set_xlabel("d^-1")
    ascii_math = [p for p in layout_problems(fig) if "ASCII" in p]
    assert ascii_math == ["text 'd^-1': ASCII math outside $...$"]
    fig = _clean()
    fig.axes[0].plot([1.0, 100.0], [0.5, 0.5], color="red")  # no label, no legend
    assert any("no legend entry" in p for p in layout_problems(fig))
    fig = _clean()
    fig.axes[0].set_ylim(0.02, 2)  # the point (100, 0.01) falls below the axis
    assert any("outside the axes" in p for p in layout_problems(fig))
    fig.axes[0].lines[0].set_gid(MARKED_OFF_AXES)
    fig.axes[0].lines[1].set_gid(MARKED_OFF_AXES)
    assert not any("outside the axes" in p for p in layout_problems(fig))
    fig = _clean()
    fig.axes[0].plot([1.0, 100.0], [0.0, 1.0], color="C0", label="zero")  # 0 on a log axis
    fig.axes[0].legend()
    assert any("outside the axes" in p for p in layout_problems(fig))
    fig = _clean()
    fig.axes[0].legend(loc="center")  # over the curves
    assert any("covers data" in p for p in layout_problems(fig))
    fig = _clean()
    fig.axes[0].plot([1.0, 100.0], [0.3, 0.003], color="C0", ls="--", label="another")
    fig.axes[0].legend()
    assert any("drawn alike" in p for p in layout_problems(fig))
    fig = _clean()
    fig.axes[0].text(10.0, 0.1, "a note over the data")
    assert any("covers data" in p for p in layout_problems(fig))
    fig = _clean()
    fig.axes[0].set_title("a title long enough to run into its neighbour " * 8)
    assert any("leaves the figure" in p for p in layout_problems(fig))
    fig, axes = new_figure(2, width=1.2)
    for panel in axes:
        panel.set_ylabel("a long label " * 3)
        panel.set_title("a long title " * 4)
    assert any("overlaps" in p for p in layout_problems(fig))

"""Figures are drawn from records alone, with the paper's axes, curves and reference lines."""

import json

import numpy as np
import pytest
from matplotlib.figure import Figure

from assocmem.cli import main
from assocmem.closed_form import run_closed_form, trial_scores
from assocmem.closed_form.config import ClosedFormConfig
from assocmem.figures import figure1, figure3, figure4, frame_from_records, memory_matrices, save
from assocmem.figures.closed_form import scheme_label


@pytest.fixture(scope="module")
def joint():
    cfg = ClosedFormConfig(
        n_inputs=200,
        schemes=("empirical_threshold:P=d/12", "seen_once"),
        dims=(12, 48, 200),
        n_samples=(10, 100, 1000),
        trials=3,
    )
    return run_closed_form(cfg)


def test_frame_from_records_equals_to_frame(joint):
    from_records = frame_from_records(joint.records)
    direct = joint.to_frame()
    key = ["scheme", "dim", "n_samples", "trial"]
    a = from_records.sort_values(key).reset_index(drop=True)
    b = direct.sort_values(key).reset_index(drop=True)
    np.testing.assert_allclose(a["error"], b["error"])
    assert list(a["dim"]) == list(b["dim"])


def test_figure1_panels(joint, tmp_path):
    frame = joint.to_frame()
    fig = figure1(frame[frame["scheme"] == "empirical_threshold:P=d/12"])
    vs_d, vs_t, contour = fig.axes[:3]
    assert vs_d.get_xscale() == "log" and vs_d.get_yscale() == "log"
    assert len(vs_d.get_lines()) == 3 + 1  # one curve per T, plus the dashed 5/d
    assert len(vs_t.get_lines()) == 3 + 1  # one curve per d, plus the dashed 0.5/√T
    assert vs_d.get_lines()[-1].get_linestyle() == "--"
    paths = save(fig, tmp_path / "fig1")
    assert all(p.stat().st_size > 1000 for p in paths)


def test_figure4_and_figure3(tmp_path):
    cfg = ClosedFormConfig(n_inputs=100, dims=(10, 30, 100), trials=2)
    fig = figure4(run_closed_form(cfg).to_frame())
    labels = [line.get_label() for line in fig.axes[0].get_lines()]
    assert labels == ["q = 1", "q = p", "q = 1{x ≤ d/8}", r"$0.35\,d^{-1/4}$", r"$3.5\,d^{-1}$"]
    assert [line.get_linestyle() for line in fig.axes[0].get_lines()[3:]] == ["--", ":"]
    cfg3 = ClosedFormConfig(
        n_inputs=50,
        alpha=0.5,
        schemes=("seen_once", "empirical"),
        dims=(10, 50),
        n_samples=(10, 100),
        trials=2,
    )
    assert len(figure3(run_closed_form(cfg3).to_frame()).axes) == 4  # two panels, two colour bars


def test_memory_matrices():
    cfg = ClosedFormConfig(
        n_inputs=10,
        alpha=1.0,
        dims=(10,),
        n_samples=(1000,),
        schemes=("empirical:rho=0", "empirical"),
        trials=1,
    )
    scores = {f"{c.scheme}": s.numpy() for (c, _), s in trial_scores(cfg).items()}
    fig = memory_matrices(scores, np.arange(10) % 5)
    assert len(fig.axes[0].get_images()) == 1


def test_figure_command(tmp_path, capsys, joint):
    source = tmp_path / "records.json"
    records = [r for r in joint.records if r["scheme"].startswith("empirical_threshold")]
    source.write_text(json.dumps({"kind": "closed_form", "records": records}))  # Figure 1's scheme
    out = tmp_path / "figs" / "fig1"
    assert main(["figure", "1", "--from", str(source), "--out", str(out)]) == 2  # no folder figs
    (tmp_path / "figs").mkdir()  # an output file's folder must exist (issue 36)
    assert main(["figure", "1", "--from", str(source), "--out", str(out)]) == 0
    assert (tmp_path / "figs" / "fig1.png").exists() and (tmp_path / "figs" / "fig1.svg").exists()
    (tmp_path / "bad.json").write_text("{")
    assert main(["figure", "1", "--from", str(tmp_path / "bad.json"), "--out", str(out)]) == 2


def test_update_map_small_step_is_linear_large_step_saturates():
    from assocmem.figures.update_map import figure6, implied_weights, iterate_update

    small = iterate_update(1e-4, 10, 100)
    assert np.allclose(small, 1e-4 * 0.9 * np.arange(101), rtol=1e-3)  # γ/(1 + 1/9) per step
    large = iterate_update(10.0, 10, 100)
    assert large[1] > 0.9 * large[100]  # one occurrence nearly fills the weight
    p = (np.arange(100) + 3.0) ** -2
    q = implied_weights(p, 1e-4, 10)
    counts = np.minimum(np.rint(p / p.min()), 100)
    assert np.allclose(q / q.max(), counts / counts.max(), rtol=1e-3)
    assert len(figure6().axes) == 2


def test_figures_draw_one_curve_per_scheme_never_a_pool():
    """Three schemes in one frame: figure1 draws one row of panels per scheme (its curves are
    that scheme's trial means), figure4 one curve per (scheme, T) named in the legend."""
    schemes = ("empirical_threshold:P=d/12", "seen_once", "empirical")
    cfg = ClosedFormConfig(
        n_inputs=100, schemes=schemes, dims=(10, 40), n_samples=(30, 300), trials=2
    )
    frame = run_closed_form(cfg).to_frame()
    fig = figure1(frame)
    assert isinstance(fig, Figure)
    panels = [ax for ax in fig.axes if ax.get_title()]  # colour bars have no title
    assert len(panels) == 3 * len(schemes)
    for row, scheme in enumerate(schemes):
        vs_d = panels[3 * row]
        assert vs_d.get_title().startswith(scheme_label(scheme))
        means = frame[frame["scheme"] == scheme].groupby(["n_samples", "dim"])["error"].mean()
        for line, t in zip(vs_d.get_lines(), (30, 300), strict=False):
            np.testing.assert_allclose(line.get_ydata(), means[t].to_numpy())
    labels = [line.get_label() for line in figure4(frame).axes[0].get_lines()]
    assert labels[:6] == [f"{scheme_label(s)}, T = {t}" for s in schemes for t in (30, 300)]

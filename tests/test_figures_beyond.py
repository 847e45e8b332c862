"""Figures beyond the paper are drawn from stored records alone (issue 7)."""

import json

import numpy as np
import pytest

from assocmem.cli import main
from assocmem.studies.facts.frontier_figure import capacity_figure, frontier_frame
from assocmem.studies.real_data.figure import laws_figure, noise_figure, training_frame
from assocmem.studies.real_data.trained import noise_curves, run_records

PAYLOADS = [
    {"memory": "hebbian", "settings": {"n_outputs": None},
     "points": [{"dim": 16, "n_star": [3, 4]}, {"dim": 64, "n_star": [60, 66]}]},
    {"memory": "trained", "settings": {"n_outputs": None},
     "points": [{"dim": 16, "n_star": [50, 52]}, {"dim": 64, "n_star": [500, 520]}]},
    {"memory": "trained", "settings": {"n_outputs": 5},
     "points": [{"dim": 16, "n_star": [37, 39]}, {"dim": 64, "n_star": [184, 181]}]},
]  # fmt: skip


def test_frontier_frame_and_capacity_figure(tmp_path):
    frame = frontier_frame(PAYLOADS)
    assert len(frame) == 12 and set(frame["outputs"]) == {"N", "5"}
    fig = capacity_figure(frame)
    left, right = fig.axes
    assert left.get_xlabel() == "N* log N*" and left.get_ylabel() == "d²"
    labels = [t.get_text() for t in left.get_legend().get_texts()]
    assert any("1.3" in text for text in labels) and any("d² = 2" in text for text in labels)
    assert any(text.startswith("fit: d²") for text in labels)
    assert "M = 5" in right.get_title()
    fig.savefig(tmp_path / "capacity.png")


def test_frontier_frame_reads_cli_json(capsys):
    assert main(["capacity", "--memory", "trained", "--dims", "6", "8", "--outputs", "3",
                 "--trials", "1", "--repeats", "1", "--format", "json"]) == 0  # fmt: skip
    frame = frontier_frame([json.loads(capsys.readouterr().out)])
    assert set(frame["memory"]) == {"trained"} and set(frame["outputs"]) == {"3"}


@pytest.fixture(scope="module")
def noisy_records():
    spec = {"n_inputs": 30, "dims": [6, 12, 24], "n_samples": 256, "batch_size": 32,
            "seeds": 2, "lrs": [1.0, 10.0], "optimizers": ["adam"]}  # fmt: skip
    return noise_curves(spec, [0.0, 0.2])


def test_noise_curves_keep_one_lr_per_setting(noisy_records):
    records, curves = noisy_records
    assert len(records) == 2 * 3 * 2  # ε × d × seeds, one lr each
    assert [c.label for c in curves] == ["ε = 0", "ε = 0.2"]
    for c in curves:
        assert c.metric == "excess_error" and len(c.dims) == 3 and c.fit is not None


def test_noise_figure_from_records(noisy_records, tmp_path):
    records, _ = noisy_records
    fig = noise_figure(training_frame(records))
    left, right = fig.axes
    assert left.get_xscale() == "log" and "excess" in left.get_ylabel()
    assert len(left.get_lines()) >= 2
    assert any(np.allclose(line.get_ydata(), 0.2) for line in right.get_lines())  # Bayes floor
    fig.savefig(tmp_path / "noise.png")


def test_laws_figure_from_train_json(capsys, tmp_path):
    pytest.importorskip("wordfreq")
    args = ["train", "--quiet", "-N", "40", "--dims", "6", "12", "--n-samples", "128",
            "--batch-sizes", "32", "--distribution", "words:en", "zipf:1.1", "--seeds", "2",
            "--format", "json"]  # fmt: skip
    assert main(args) == 0
    runs = json.loads(capsys.readouterr().out)["runs"]
    frame = training_frame(runs)
    assert set(frame["law"]) == {"words:en", "zipf:1.1"}
    fig = laws_figure(frame)
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert labels == ["words (en)", "Zipf α = 1.1"] or set(labels) == {"words (en)", "Zipf α = 1.1"}
    fig.savefig(tmp_path / "laws.png")


def test_training_frame_fills_noise_columns_for_old_rows():
    import pandas as pd

    old = pd.DataFrame([{"alpha": 2.0, "words": None, "n_outputs": 5, "dim": 8, "seed": 0,
                         "lr": 1.0, "error": 0.1}])  # fmt: skip
    frame = training_frame(old)
    assert frame.loc[0, "law"] == "zipf:2" and frame.loc[0, "excess_error"] == pytest.approx(0.1)


def test_run_records_are_flat():
    (record,) = run_records({"n_inputs": 20, "dims": 8, "n_samples": 64, "batch_size": 16})
    assert record["law"] == "zipf:2" and "curve" not in record and 0 <= record["error"] <= 1


def test_compare_trained_cli(capsys):
    args = ["compare-trained", "noise", "--quiet", "-N", "20", "--dims", "6", "12", "24",
            "--n-samples", "128", "--batch-sizes", "32", "--seeds", "2", "--lrs", "1",
            "--label-noise", "0", "0.3"]  # fmt: skip
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "excess_error" in out and "ε = 0.3" in out
    assert main(["compare-trained", "laws", "--quiet"]) == 2  # no language
    assert main(["compare-trained", "noise", "en", "--quiet"]) == 2
    assert main(["compare-trained", "noise", "--label-noise", "0.9", "--quiet"]) == 2

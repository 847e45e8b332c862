"""Real word-frequency laws (wordfreq ships its data: nothing is downloaded)."""

import numpy as np
import pytest

from assocmem.cli import main
from assocmem.closed_form import run_closed_form
from assocmem.closed_form.config import ClosedFormConfig
from assocmem.config.errors import ConfigError
from assocmem.laws.tokens import zipf_probabilities
from assocmem.laws.words import zipf_alpha_kl, zipf_alpha_slope

pytest.importorskip("wordfreq")

from assocmem.laws.words import word_distribution  # noqa: E402
from assocmem.studies.real_data.closed_form import compare_with_zipf  # noqa: E402


@pytest.mark.parametrize("alpha", [0.6, 1.0, 2.0])
def test_alpha_estimators_recover_exact_zipf(alpha):
    p = zipf_probabilities(500, alpha).numpy()
    assert zipf_alpha_kl(p) == pytest.approx(alpha, abs=1e-3)
    assert zipf_alpha_slope(p) == pytest.approx(alpha, abs=1e-9)


def test_english_top_words():
    law = word_distribution("en", 300)
    p = law.probabilities
    assert p.shape == (300,) and p.sum() == pytest.approx(1.0)
    assert np.all(np.diff(p) <= 0) and len(set(law.words)) == 300
    assert law.words[0] == "the"
    assert 0.2 < law.truncated_mass < 0.8  # words beyond the top 300 still carry real mass
    assert 0.6 < law.alpha_kl < 1.4  # Zipf's law of natural language: α close to 1


def test_closed_form_on_words_and_errors():
    cfg = ClosedFormConfig(n_inputs=100, words="fr", dims=(10, 100), trials=2)
    assert run_closed_form(cfg).errors.shape == (2, 3, 2)
    with pytest.raises(ConfigError, match="^words:"):
        ClosedFormConfig(n_inputs=3, words="en", probabilities=(0.5, 0.3, 0.2))
    with pytest.raises(ConfigError, match="^words: unknown language"):
        ClosedFormConfig(words="klingon")


def test_compare_with_zipf_small():
    comp = compare_with_zipf(
        "en", n_inputs=100, schemes=("threshold:P=d/8",), dims=(5, 20, 100), trials=4
    )
    (row,) = comp.rows
    assert row["slope_real"] < 0 and row["slope_zipf"] < 0
    assert row["ci_real"][0] <= row["slope_real"] <= row["ci_real"][1]


def test_words_command(capsys):
    assert main(["words", "en", "de", "-N", "200"]) == 0
    out = capsys.readouterr().out
    assert "wordfreq" in out and "CC BY-SA" in out and " de " in out

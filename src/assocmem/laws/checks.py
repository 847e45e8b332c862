"""Validation of a token law's user inputs: a Zipf exponent, a word list, a label-noise level."""

import math
from typing import Any

from assocmem.config.errors import ConfigError


def check_words(words: Any, n_inputs: int) -> None:
    """A language of the optional wordfreq lists with at least ``n_inputs`` words."""
    if not isinstance(words, str):
        raise ConfigError("words", f"must be a language code such as 'en', got {words!r}")
    from assocmem.laws.words import word_distribution

    word_distribution(words, n_inputs)  # checks the language and N


def check_label_noise(noise: Any, n_outputs: int) -> None:
    """ε in [0, (M−1)/M): beyond it, f* is no longer the Bayes rule."""
    noise_max = (n_outputs - 1) / n_outputs
    ok = isinstance(noise, int | float) and not isinstance(noise, bool)
    if not ok or not (noise == 0 or 0 < noise < noise_max):
        allowed = f"[0, (M-1)/M) = [0, {noise_max:.3g})"
        raise ConfigError("label_noise", f"must be in {allowed}, got {noise!r}")


def check_token_alpha(alpha: Any) -> float:
    """The Zipf exponent of a token law: a finite number ≥ 0 (0: the uniform law).

    Raises
    ------
    ConfigError
        Naming ``alpha`` and what is allowed.
    """
    ok = isinstance(alpha, int | float) and not isinstance(alpha, bool)
    if not ok or not math.isfinite(alpha) or alpha < 0:
        raise ConfigError("alpha", f"must be a finite number ≥ 0 (0: uniform), got {alpha!r}")
    return float(alpha)

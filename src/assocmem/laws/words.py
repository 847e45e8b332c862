"""Real token distributions: word frequencies of natural languages as the input law p.

Uses the optional ``wordfreq`` package (``pip install 'assocmem[words]'``), whose word lists ship
inside the package: nothing is downloaded at run time. The top N words are renormalised to a law
over N tokens (ordered by frequency, so token 0 is the most frequent word); the mass of the words
left out is recorded, and the Zipf exponent α is estimated two ways.

Credits (required by the licence of the data): word frequencies from wordfreq by Robyn Speer
(Apache-2.0 code; data CC BY-SA 4.0), built from Google Books Ngrams, Wikipedia, the Leeds
Internet Corpus, ParaCrawl, OPUS OpenSubtitles 2018 (OpenSubtitles), SUBTLEX word lists by Marc
Brysbaert et al. (freely available data) and Twitter word statistics.
"""

import math
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np
from scipy.optimize import minimize_scalar

from assocmem.config.checks import int_at_least
from assocmem.config.errors import ConfigError, unknown_name

CREDITS = (
    "Word frequencies: wordfreq by Robyn Speer (code Apache-2.0; data CC BY-SA 4.0, "
    "https://creativecommons.org/licenses/by-sa/4.0/), from Google Books Ngrams "
    "(http://books.google.com/ngrams), Wikipedia, the Leeds Internet Corpus, ParaCrawl, "
    "OPUS OpenSubtitles 2018 (opensubtitles.org), SUBTLEX word lists by Marc Brysbaert et al. "
    "(freely available data), and Twitter word statistics."
)


@dataclass(frozen=True)
class WordDistribution:
    """The top ``n_inputs`` words of a language as a law over tokens 0..N-1 (by frequency)."""

    language: str
    words: tuple[str, ...]
    probabilities: np.ndarray  # (N,), sums to 1, non-increasing
    truncated_mass: float  # share of the language's word frequency left out by the top-N cut
    alpha_kl: float  # α of the Zipf law over N tokens closest in KL(p ‖ Zipf_α)
    alpha_slope: float  # minus the least-squares slope of log p(x) vs log(x+1), ranks 10..N


def _wordfreq() -> Any:  # an optional dependency, without type hints
    try:
        import wordfreq
    except ImportError:
        raise ConfigError(
            "words", "needs the optional package wordfreq: pip install 'assocmem[words]'"
        ) from None
    return wordfreq


def available_languages() -> list[str]:
    return sorted(_wordfreq().available_languages(wordlist=WORDLIST))


WORDLIST = "best"  # wordfreq's largest list of each language ("large" where it has one)


def _check_language(language: Any) -> Any:
    """wordfreq, once ``language`` is known to be one of its languages."""
    wordfreq = _wordfreq()
    if not isinstance(language, str) or language not in wordfreq.available_languages(
        wordlist=WORDLIST
    ):
        raise unknown_name("words", "language", language, available_languages())
    return wordfreq


@cache
def vocabulary_size(language: str) -> int:
    """The number of words in ``language``'s list (wordfreq's best: ``"large"`` where it exists).

    Parameters
    ----------
    language : str
        A wordfreq language code (``"en"``).

    Returns
    -------
    int
        N of the full vocabulary: ``n_inputs = "all"`` in a closed-form config with
        ``words = language`` (321,180 for ``en`` with wordfreq 3.1, its ``large`` list).

    Raises
    ------
    ConfigError
        For an unknown language or without the optional wordfreq package.

    Notes
    -----
    See the docs: beyond/vocabulary.md.
    """
    wordfreq = _check_language(language)
    return len(wordfreq.get_frequency_dict(language, wordlist=WORDLIST))


@cache
def word_distribution(language: str, n_inputs: int) -> WordDistribution:
    """The law of the ``n_inputs`` most frequent words of ``language`` (wordfreq's best list)."""
    int_at_least("n_inputs", n_inputs, 2)  # a word law needs two words
    wordfreq = _check_language(language)
    freqs = wordfreq.get_frequency_dict(language, wordlist=WORDLIST)
    if n_inputs > len(freqs):
        raise ConfigError(
            "n_inputs", f"{language} has {len(freqs)} words; got n_inputs = {n_inputs}"
        )
    ranked = sorted(freqs.items(), key=lambda item: (-item[1], item[0]))[:n_inputs]
    total = float(sum(freqs.values()))
    kept = np.array([f for _, f in ranked], dtype=np.float64)
    probs = kept / kept.sum()
    return WordDistribution(
        language=language,
        words=tuple(w for w, _ in ranked),
        probabilities=probs,
        truncated_mass=1.0 - float(kept.sum()) / total,
        alpha_kl=zipf_alpha_kl(probs),
        alpha_slope=zipf_alpha_slope(probs),
    )


def zipf_alpha_kl(probs: np.ndarray) -> float:
    r"""α minimising :math:`\operatorname{KL}(p \| \operatorname{Zipf}_\alpha)` over the same N
    tokens: the maximum-likelihood Zipf fit.

    :math:`\operatorname{KL} = \sum p \log p + \alpha \sum p \log(x+1) + \log \sum (x+1)^{-\alpha}`
    is convex in α; solved by SciPy.
    """
    log_rank = np.log(np.arange(1, len(probs) + 1))
    mean_log_rank = float(probs @ log_rank)

    def objective(alpha: float) -> float:
        log_z = np.logaddexp.reduce(-alpha * log_rank)
        return alpha * mean_log_rank + float(log_z)

    return float(minimize_scalar(objective, bounds=(1e-3, 10.0), method="bounded").x)


def zipf_alpha_slope(probs: np.ndarray, first_rank: int = 10) -> float:
    """Minus the least-squares slope of ``log p(x)`` vs ``log(x+1)`` over ranks ≥ first_rank."""
    ranks = np.arange(1, len(probs) + 1)
    keep = (ranks >= min(first_rank, len(probs) // 2 + 1)) & (probs > 0)
    if keep.sum() < 2:
        return float("nan")
    return -float(np.polyfit(np.log(ranks[keep]), np.log(probs[keep]), 1)[0])


DISTRIBUTION_SPELLINGS = "zipf, zipf:ALPHA or words:LANG"


def parse_distribution(text: str) -> dict[str, Any]:
    """A token law spelled ``zipf``, ``zipf:ALPHA`` or ``words:LANG``, as config fields.

    Returns ``{"words": None}`` (Zipf at the config's α), ``{"words": None, "alpha": ALPHA}``
    or ``{"words": LANG}``: the same fields (``alpha``, ``words``) in the closed-form and the
    training configs, so both commands accept the same values.
    """
    kind, _, value = str(text).strip().partition(":")
    if kind == "zipf" and not value:
        return {"words": None}
    if kind == "zipf":
        try:
            alpha = float(value)
        except ValueError:
            alpha = math.nan
        if not (math.isfinite(alpha) and alpha > 0):
            raise ConfigError("distribution", f"bad Zipf exponent in {text!r}; must be > 0")
        return {"words": None, "alpha": alpha}
    if kind == "words" and value:
        return {"words": value}
    raise ConfigError("distribution", f"unknown law {text!r}; allowed: {DISTRIBUTION_SPELLINGS}")

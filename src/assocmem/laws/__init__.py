"""Token laws: Zipf and any probability vector, real word-frequency laws, targets, sampling and
label noise."""

from assocmem.laws.checks import check_label_noise, check_token_alpha, check_words

__all__ = ["check_label_noise", "check_token_alpha", "check_words"]

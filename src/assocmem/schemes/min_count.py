r""":math:`q = \mathbb{1}\{n(x) \ge k\}\, \mathbb{1}\{x \in S_P\}`, S_P the P most frequent seen
tokens: store a token only once it has been seen k times, at most P of them, the most
frequent first (docs: beyond/noise-threshold.md).
"""

from collections.abc import Sequence

import torch

from assocmem.config.errors import ConfigError
from assocmem.schemes.base import FIELD, ThresholdedScheme, top_mask
from assocmem.schemes.law import SchemeLaw, data_exponent, threshold_exponent


class MinCount(ThresholdedScheme):
    r""":math:`q = \mathbb{1}\{n(x) \ge k\}\, \mathbb{1}\{x \in S_P\}`, S_P the P most frequent
    seen tokens (P default d/8).

    The tokens seen at least k times come first in the order by count, so this stores the
    :math:`\min(P, \#\{x: n(x) \ge k\})` most frequent tokens: the capacity cap P and the count
    threshold k are two limits on the same list. With noisy labels, a token seen k times carries the
    majority vote of k labels. ``k = 1`` is ``empirical_threshold`` (ρ = 0).

    With infinite data (T = ∞: the frequencies are the law p, not counts) every token of
    positive probability counts as seen infinitely often, so it passes any k: a frequency row
    that is not all whole numbers is read as a law.
    """

    name = "min_count"
    uses_data = True
    params = {
        **ThresholdedScheme.params,
        "k": "store a token only once seen at least k times: an integer ≥ 1 (default 1)",
    }

    @classmethod
    def theory_specs(cls, rhos: Sequence[float]) -> tuple[str, ...]:
        """None: at its default k = 1 it is ``empirical_threshold`` (listed); ask for a k with
        ``assocmem theory --schemes min_count:k=K``."""
        return ()

    def __init__(self, **values: str) -> None:
        text = values.get("k", "1")
        try:
            k = int(text)
        except ValueError:
            k = 0
        if k < 1:
            raise ConfigError(FIELD, f"{self.name}: k must be an integer ≥ 1, got {text!r}")
        super().__init__(**{**values, "k": str(k)})

    @property
    def min_count(self) -> int:
        """k: the fewest observations of a stored token."""
        return int(self.values["k"])

    def weights(self, freq: torch.Tensor, dims: Sequence[int]) -> torch.Tensor:
        counts = freq.eq(freq.round()).all(dim=-1, keepdim=True)  # (..., 1): a row of counts
        seen_enough = (freq >= self.min_count) | ~counts  # a law (T = ∞) passes every k
        mask = top_mask(freq, dims, self.rule) & seen_enough.unsqueeze(0)
        return mask.to(freq.dtype)

    def law(self, alpha: float) -> SchemeLaw:
        r""":math:`d^{-(\alpha -1)} + k^{(\alpha -1)/\alpha} T^{-(\alpha -1)/\alpha}` with
        :math:`P \propto d`: the capacity term of thresholding (Theorem 1), and the tokens never
        stored because :math:`T p(x) < k`, a Zipf tail of mass
        :math:`\asymp (k/T)^{(\alpha -1)/\alpha}` (Proposition 4's data term, k times fewer
        samples). A fixed P has no power law in d."""
        b = data_exponent(alpha)
        weighting = f"q = 1{{n ≥ {self.min_count}, top P seen}}"
        if not self.rule.uses_dim:
            return SchemeLaw(self.spec, weighting, None, b, "fixed P: no power law in d")
        return SchemeLaw(
            self.spec, weighting, threshold_exponent(alpha), b, "P ∝ d; data term ∝ k^{(α−1)/α}"
        )

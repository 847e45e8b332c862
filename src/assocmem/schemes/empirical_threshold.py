r""":math:`q = \mathbb{1}\{x \in S_P\}\, n(x)^\rho`, S_P the P most frequent seen tokens
(Proposition 4 at ρ = 0)."""

from collections.abc import Sequence

import torch

from assocmem.schemes.base import ThresholdedScheme, power, rho_value, top_mask
from assocmem.schemes.law import SchemeLaw, data_exponent, threshold_exponent


class EmpiricalThreshold(ThresholdedScheme):
    r""":math:`q = \mathbb{1}\{x \in S_P\}\, n(x)^\rho`, S_P the P most frequent seen tokens
    (Proposition 4; ρ = 0)."""

    name = "empirical_threshold"
    uses_data = True
    params = {**ThresholdedScheme.params, "rho": "weight the stored tokens by n(x)^ρ (default 0)"}

    @classmethod
    def theory_specs(cls, rhos: Sequence[float]) -> tuple[str, ...]:
        """The paper's choice P = d/12."""
        return ("empirical_threshold:P=d/12",)

    def weights(self, freq: torch.Tensor, dims: Sequence[int]) -> torch.Tensor:
        mask = top_mask(freq, dims, self.rule).to(freq.dtype)
        return mask * power(freq, rho_value(self, "0"))

    def law(self, alpha: float) -> SchemeLaw:
        r""":math:`d^{-(\alpha -1)/\max(1, 2\rho \alpha)} + T^{-(\alpha -1)/\alpha}` with
        :math:`P \propto d` (Proposition 4 at ρ = 0; for ρ > 0 Theorem 1's retrieval condition on
        the stored tokens: our derivation, not stated in the paper). A fixed P has no power law in
        d."""
        rho = rho_value(self, "0")
        weighting = "q = 1{top P seen}" + (f" n^{rho:g}" if rho else "")
        b = data_exponent(alpha)
        if not self.rule.uses_dim:
            return SchemeLaw(self.spec, weighting, None, b, "fixed P: no power law in d")
        exponent = threshold_exponent(alpha) / max(1.0, 2.0 * rho * alpha)
        return SchemeLaw(self.spec, weighting, exponent, b, "P ∝ d")

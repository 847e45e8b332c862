r""":math:`q = \mathbb{1}\{x \text{ among the } P \text{ most frequent tokens of } p\}`: the optimal
scheme of Theorem 2."""

from collections.abc import Sequence

import torch

from assocmem.schemes.base import ThresholdedScheme, top_mask
from assocmem.schemes.law import SchemeLaw, threshold_exponent


class Threshold(ThresholdedScheme):
    r""":math:`q = \mathbb{1}\{x \text{ among the } P \text{ most frequent tokens of } p\}` (optimal
    rate :math:`d^{-\alpha +1}`)."""

    name = "threshold"
    uses_data = False

    @classmethod
    def theory_specs(cls, rhos: Sequence[float]) -> tuple[str, ...]:
        """The paper's choice P = d/8."""
        return ("threshold:P=d/8",)

    def weights(self, freq: torch.Tensor, dims: Sequence[int]) -> torch.Tensor:
        return top_mask(freq, dims, self.rule).to(freq.dtype)

    def law(self, alpha: float) -> SchemeLaw:
        r""":math:`d^{-(\alpha -1)}` with :math:`P \propto d` (Theorem 1); a fixed P is a floor, no
        power law."""
        if not self.rule.uses_dim:
            return SchemeLaw(self.spec, "q = 1{x ≤ P}", None, None, "fixed P: floor, no power law")
        return SchemeLaw(self.spec, "q = 1{x ≤ P}", threshold_exponent(alpha), None, "P ∝ d")

r""":math:`q = p^\rho`: the population law to a power (ρ = 1: what one large-batch gradient step
stores)."""

from collections.abc import Sequence

import torch

from assocmem.schemes.base import Scheme, power, rho_value
from assocmem.schemes.law import SchemeLaw, power_law_or_none


class Population(Scheme):
    r""":math:`q = p^\rho` (ρ = 1: frequency weighting, what one large-batch gradient step
    stores)."""

    name = "population"
    uses_data = False
    params = {"rho": "exponent ρ ≥ 0 (default 1)"}

    @classmethod
    def theory_specs(cls, rhos: Sequence[float]) -> tuple[str, ...]:
        """One row ``population:rho=ρ`` per ρ asked for."""
        return tuple(f"population:rho={r:g}" for r in rhos)

    def weights(self, freq: torch.Tensor, dims: Sequence[int]) -> torch.Tensor:
        return power(freq, rho_value(self, "1")).unsqueeze(0)

    def law(self, alpha: float) -> SchemeLaw:
        r""":math:`d^{-(\alpha -1)/(2\rho \alpha)}` when 2ρα > 1 (Theorem 1); infinite data: no term
        in T."""
        rho = rho_value(self, "1")
        exponent, note = power_law_or_none(alpha, rho)
        return SchemeLaw(self.spec, f"q = p^{rho:g}", exponent, None, note or "infinite data")

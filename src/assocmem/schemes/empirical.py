r""":math:`q = n(x)^\rho`: the empirical counts of T samples to a power."""

from collections.abc import Sequence

import torch

from assocmem.schemes.base import Scheme, power, rho_value
from assocmem.schemes.law import SchemeLaw, data_exponent, power_law_or_none


class Empirical(Scheme):
    r""":math:`q = n(x)^\rho`: empirical counts (:math:`\rho = 1` is :math:`n(x)/T` up to scale)."""

    name = "empirical"
    uses_data = True
    params = {"rho": "exponent ρ ≥ 0 (default 1)"}

    def weights(self, freq: torch.Tensor, dims: Sequence[int]) -> torch.Tensor:
        return power(freq, rho_value(self, "1")).unsqueeze(0)

    def law(self, alpha: float) -> SchemeLaw:
        r""":math:`d^{-(\alpha-1)/(2\rho\alpha)}` plus :math:`T^{-(\alpha-1)/\alpha}`.

        Theorem 1 (when :math:`2\rho\alpha > 1`) and Table 1.
        """
        rho = rho_value(self, "1")
        exponent, note = power_law_or_none(alpha, rho)
        return SchemeLaw(self.spec, f"q = n^{rho:g}", exponent, data_exponent(alpha), note)

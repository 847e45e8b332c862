""":math:`q = 1`: store every token equally."""

from collections.abc import Sequence

import torch

from assocmem.schemes.base import Scheme
from assocmem.schemes.law import SchemeLaw


class Uniform(Scheme):
    """:math:`q = 1` on every token: store everything equally."""

    name = "uniform"
    uses_data = False

    def weights(self, freq: torch.Tensor, dims: Sequence[int]) -> torch.Tensor:
        return torch.ones_like(freq).unsqueeze(0)

    def law(self, alpha: float) -> SchemeLaw:
        """No power law: the error stays near its start until d approaches N."""
        return SchemeLaw(self.spec, "q = 1", None, None, "no power law until d ≈ N")

r""":math:`q = \mathbb{1}\{n(x) > 0\}`: every seen token stored equally ("fill")."""

from collections.abc import Sequence

import torch

from assocmem.schemes.base import Scheme
from assocmem.schemes.law import SchemeLaw


class SeenOnce(Scheme):
    r""":math:`q = \mathbb{1}\{n(x) > 0\}`: every seen token stored equally (it overflows once
    T^{1/α} ≳ d)."""

    name = "seen_once"
    uses_data = True

    def weights(self, freq: torch.Tensor, dims: Sequence[int]) -> torch.Tensor:
        return (freq > 0).to(freq.dtype).unsqueeze(0)

    def law(self, alpha: float) -> SchemeLaw:
        """No power law in T: the error rises with T at fixed d once the memory overflows."""
        return SchemeLaw(
            self.spec, "q = 1{n > 0}", None, None, "overflow: error rises with T at fixed d"
        )

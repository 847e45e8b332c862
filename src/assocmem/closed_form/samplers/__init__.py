"""Closed-form samplers: how a trial's input-embedding randomness is drawn. One module each,
registered here by the name a config's ``sampler`` field takes:

- ``explicit`` (:mod:`.explicit`): the embeddings E themselves, N·d_max numbers; any embedding;
- ``in_law`` (:mod:`.in_law`): only the Gaussian quantities the scores depend on, exact in law
  for i.i.d. Gaussian input embeddings.

``auto`` (a config's default) resolves from the config alone by
:func:`assocmem.closed_form.cost.resolve`.
"""

from assocmem.closed_form.cost import SAMPLERS
from assocmem.closed_form.samplers.base import Sampler, TrialWeights
from assocmem.closed_form.samplers.explicit import Explicit
from assocmem.closed_form.samplers.in_law import InLaw

REGISTRY: dict[str, Sampler] = {sampler.name: sampler for sampler in (Explicit(), InLaw())}
assert tuple(REGISTRY) == SAMPLERS  # the names a config accepts (closed_form.cost)


def get_sampler(name: str) -> Sampler:
    """The registered sampler called ``name`` (a config's resolved sampler)."""
    return REGISTRY[name]


__all__ = ["REGISTRY", "Sampler", "TrialWeights", "get_sampler"]

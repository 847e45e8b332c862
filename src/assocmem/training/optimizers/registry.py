"""Every optimiser by its config name (``optimizer = "…"`` in TOML, ``--optimizers`` on the CLI).

Adding an optimiser: one file with its :class:`AbstractOptimizer` subclass, one line here.
"""

from assocmem.training.optimizers.adam import Adam
from assocmem.training.optimizers.base import AbstractOptimizer
from assocmem.training.optimizers.nesterov import NesterovSGD
from assocmem.training.optimizers.normalized_sgd import NormalizedSGD
from assocmem.training.optimizers.sgd import SGD
from assocmem.training.optimizers.sign_sgd import SignSGD

OPTIMIZERS: dict[str, type[AbstractOptimizer]] = {
    entry.name: entry for entry in (SGD, Adam, SignSGD, NormalizedSGD, NesterovSGD)
}

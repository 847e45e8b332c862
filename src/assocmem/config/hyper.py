"""The optimisers' hyper-parameters, declared once with their documentation (torch-free).

:class:`HyperParameters` declares each hyper-parameter an optimiser of the registry may take:
its name, the value a flat record holds for an optimiser without it, and its documentation (the
``doc`` metadata of :func:`~assocmem.config.problem.described`, also its command-line help).
An optimiser dataclass declares the ones it has with :func:`hyper_parameter`, at its own default
where it differs (Nesterov's momentum 0.9). ``assocmem train`` derives a flag from each field
here without importing torch; a new hyper-parameter is one field here and one in its optimiser.
"""

from dataclasses import MISSING, Field, dataclass, field, fields
from typing import Any

from assocmem.config.problem import described


@dataclass(frozen=True)
class HyperParameters:
    """Every optimiser hyper-parameter, at the value a record holds for an optimiser without it.

    Parameters
    ----------
    momentum : float, default 0.0
        μ in [0, 1): SGD's momentum (Nesterov's: 0.9 by default, > 0).
    weight_decay : float, default 0.0
        λ ≥ 0: L2 weight decay, added to the gradient.
    betas : tuple of float, default (0.0, 0.0)
        Adam's (β₁, β₂), each in [0, 1); (0, 0) is the paper's sign-like Adam.
    eps : float, default 1e-08
        Adam's ε.
    """

    momentum: float = described(0.0, "SGD momentum μ in [0, 1); nesterov's default is 0.9")
    weight_decay: float = described(0.0, "L2 weight decay λ ≥ 0")
    betas: tuple[float, float] = described(
        (0.0, 0.0), "Adam's β₁ β₂, each in [0, 1); 0 0 is the paper's sign-like Adam", nargs=2
    )
    eps: float = described(1e-8, "Adam's ε")


RECORDED = ("momentum", "weight_decay", "betas", "eps")
"""The hyper-parameters every flat record holds (at :class:`HyperParameters`' default when the
optimiser lacks one); a hyper-parameter declared after these is recorded only away from its
default, so the runs stored before it keep their identity."""


def hyper_parameter_fields() -> dict[str, Field[Any]]:
    """The fields of :class:`HyperParameters` by name (read when called: a test may extend it)."""
    return {item.name: item for item in fields(HyperParameters)}


def hyper_parameter(name: str, default: Any = MISSING) -> Any:
    """The declaration of the hyper-parameter ``name`` for an optimiser dataclass, at ``default``
    (else the :class:`HyperParameters` one): ``momentum: float = hyper_parameter("momentum")``.

    Raises
    ------
    KeyError
        If ``name`` is not declared by :class:`HyperParameters`.
    """
    declared = hyper_parameter_fields()[name]
    value = declared.default if default is MISSING else default
    return field(default=value, metadata=declared.metadata)

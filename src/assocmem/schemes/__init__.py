r"""Memory schemes: the weighting q of :math:`W_q = \sum_x q(x)\, u_{f^*(x)} e_x^\top` (Cabannes et
al. 2024).

One class per module, each stating its weights and its asymptotic law; the registry below maps
the config name to the class (adding a scheme is one module and one line here). A scheme is
written ``name`` or ``name:key=value,...`` (see :mod:`assocmem.schemes.base`).
"""

from typing import TypeVar

from assocmem.config.errors import ConfigError, unknown_name
from assocmem.schemes.base import FIELD, Scheme, SizeRule, rho_value
from assocmem.schemes.empirical import Empirical
from assocmem.schemes.empirical_threshold import EmpiricalThreshold
from assocmem.schemes.law import SchemeLaw
from assocmem.schemes.min_count import MinCount
from assocmem.schemes.population import Population
from assocmem.schemes.seen_once import SeenOnce
from assocmem.schemes.threshold import Threshold
from assocmem.schemes.uniform import Uniform

SchemeT = TypeVar("SchemeT", bound=Scheme)

REGISTRY: dict[str, type[Scheme]] = {
    "population": Population,
    "uniform": Uniform,
    "threshold": Threshold,
    "empirical": Empirical,
    "seen_once": SeenOnce,
    "empirical_threshold": EmpiricalThreshold,
    "min_count": MinCount,
}
"""The memory schemes q by config name (``"threshold"`` → :class:`Threshold`, …): what
:func:`parse_scheme` reads a spec string ``name:key=value`` against; :func:`register_scheme`
adds one (docs: science/schemes.md, tutorials/add-scheme.md)."""


def register_scheme(cls: type[SchemeT]) -> type[SchemeT]:
    r"""Add a scheme class to :data:`REGISTRY` under its ``name``; usable as a class decorator.

    Parameters
    ----------
    cls : type of Scheme
        A concrete :class:`Scheme` subclass with a class attribute ``name`` (the config name),
        ``uses_data``, and ``params`` (its ``name:key=value`` parameters, name → help text).

    Returns
    -------
    type of Scheme
        ``cls`` itself, so that ``@register_scheme`` leaves the class unchanged.

    Raises
    ------
    TypeError
        If ``cls`` is not a subclass of :class:`Scheme`.
    ValueError
        If another class is already registered under ``cls.name`` (registering the same class
        again is a no-op).

    Notes
    -----
    A scheme is a weighting ``q`` of :math:`W_q = \sum_x q(x)\, u_{f^*(x)} e_x^\top`
    (Cabannes et al., 2024); see the docs: science/schemes.md, and architecture.md, "Extending
    assocmem".
    """
    if not (isinstance(cls, type) and issubclass(cls, Scheme)):
        raise TypeError(f"register_scheme takes a Scheme subclass, got {cls!r}")
    held = REGISTRY.get(cls.name)
    if held is not None and held is not cls:
        raise ValueError(f"scheme {cls.name!r} is already registered by {held.__name__}")
    REGISTRY[cls.name] = cls
    return cls


def unknown_scheme(name: str) -> ConfigError:
    """The one-line error for a name that is not registered."""
    return unknown_name(FIELD, "scheme", name, sorted(REGISTRY))


def parse_scheme(text: str) -> Scheme:
    """Parse ``name`` or ``name:key=value,...`` into a registered scheme.

    Parameters
    ----------
    text : str
        A scheme spec: a name of :data:`REGISTRY` (e.g. ``"population"``), optionally followed
        by ``:`` and comma-separated parameters (``"threshold:P=d/8"``,
        ``"empirical_threshold:P=d/12,rho=0.5"``). A size ``P`` is a constant or :math:`d/k`.

    Returns
    -------
    Scheme
        The scheme instance; its :attr:`Scheme.spec` is the canonical spelling used as the
        scheme's key in results.

    Raises
    ------
    ConfigError
        For an unknown name or parameter, or an invalid value (field ``schemes``).

    Notes
    -----
    See the docs: science/schemes.md, for every scheme and its parameters.
    """
    name, _, rest = text.strip().partition(":")
    if name not in REGISTRY:
        raise unknown_scheme(name)
    cls = REGISTRY[name]
    values: dict[str, str] = {}
    for item in filter(None, (part.strip() for part in rest.split(","))):
        key, sep, value = item.partition("=")
        if not sep or key.strip() not in cls.params:
            allowed = ", ".join(cls.params) or "none"
            raise ConfigError(
                FIELD, f"{name}: bad parameter {item!r}; allowed parameters: {allowed}"
            )
        values[key.strip()] = value.strip()
    if "P" in cls.params:
        values["P"] = SizeRule.parse(values.get("P", "d/8")).text
    scheme = cls(**values)
    if "rho" in cls.params:
        rho_value(scheme, "0")
    return scheme


__all__ = [
    "REGISTRY",
    "Scheme",
    "SchemeLaw",
    "SizeRule",
    "parse_scheme",
    "register_scheme",
    "unknown_scheme",
]

r"""The abstract memory scheme ``q`` and the rules its subclasses share.

A scheme is written ``name`` or ``name:key=value,key=value`` (e.g. ``threshold:P=d/8``,
``empirical_threshold:P=d/12,rho=1``). Schemes see a *frequency* vector: the sample counts
``n(x)`` for a finite sample, or the population law ``p(x)`` for infinite data (T = ∞). Only
ranks and ratios of frequencies matter, since the prediction
:math:`\operatorname{argmax}_y u_y^\top W e_x` is invariant to a positive rescaling of ``q``.
"""

import math
import re
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

import torch

from assocmem.config.errors import ConfigError
from assocmem.schemes.law import SchemeLaw

FIELD = "schemes"


@dataclass(frozen=True)
class SizeRule:
    r"""How many tokens a threshold scheme stores at dimension d: a number, or :math:`d/c`,
    :math:`d/\log d`.

    The size is ``floor(rule(d))`` clipped to ``[1, N]``: a threshold memory always stores at least
    its most frequent token.
    """

    text: str
    constant: int | None = None
    divisor: float | None = None  # P = d / divisor
    log: bool = False  # P = d / log d

    @classmethod
    def parse(cls, text: str) -> "SizeRule":
        compact = text.replace(" ", "")
        if re.fullmatch(r"\d+", compact):
            return cls(compact, constant=int(compact))
        if compact in ("d/logd", "d/log(d)"):
            return cls("d/log d", log=True)
        match = re.fullmatch(r"d(?:/(\d+(?:\.\d+)?))?", compact)
        if match:
            divisor = float(match.group(1) or 1)
            if divisor > 0:
                return cls(f"d/{match.group(1)}" if match.group(1) else "d", divisor=divisor)
        raise ConfigError(
            FIELD, f"P={text!r} is not allowed; use an integer, d, d/<number> or d/log d"
        )

    def size(self, dim: int, n_inputs: int) -> int:
        if self.constant is not None:
            value = self.constant
        elif self.log:
            value = math.floor(dim / math.log(dim)) if dim > 1 else 1
        else:
            assert self.divisor is not None
            value = math.floor(dim / self.divisor)
        return min(max(value, 1), n_inputs)

    @property
    def uses_dim(self) -> bool:
        return self.constant is None


class Scheme(ABC):
    r"""A memory scheme: the weighting q of :math:`W_q = \sum_x q(x)\, u_{f^*(x)} e_x^\top`.

    Subclass it with class attributes ``name``, ``uses_data`` and ``params``, and methods
    ``weights`` and ``law``; then :func:`register_scheme` it. Instances are built by
    :func:`parse_scheme` from a spec string.

    Parameters
    ----------
    **values : str
        The scheme's parameters as written in its spec (``P="d/8"``, ``rho="0.5"``).

    Attributes
    ----------
    name : str
        The config name (class attribute).
    uses_data : bool
        q depends on the sample counts (class attribute).
    params : dict of str to str
        Parameter name → help text (class attribute).

    Notes
    -----
    See the docs: science/schemes.md.
    """

    name: ClassVar[str]
    uses_data: ClassVar[bool]
    params: ClassVar[dict[str, str]] = {}  # parameter name -> help text

    def __init__(self, **values: str) -> None:
        self.values = values

    @classmethod
    def theory_specs(cls, rhos: Sequence[float]) -> tuple[str, ...]:
        r"""The specs of this scheme that the theory table lists (``assocmem theory``).

        Parameters
        ----------
        rhos : sequence of float
            The powers ρ asked for (:math:`q = p^\rho` rows; read by schemes with a ρ parameter).

        Returns
        -------
        tuple of str
            By default the bare name: a registered scheme appears in the table at once.
        """
        return (cls.name,)

    @property
    def spec(self) -> str:
        """The canonical spec string, used as the scheme's key in results."""
        if not self.values:
            return self.name
        return self.name + ":" + ",".join(f"{k}={v}" for k, v in sorted(self.values.items()))

    @property
    def uses_dim(self) -> bool:
        return False

    def validate(self, n_inputs: int) -> None:  # noqa: B027 - optional hook
        """Check parameters against the problem size; raise ConfigError."""

    @abstractmethod
    def weights(self, freq: torch.Tensor, dims: Sequence[int]) -> torch.Tensor:
        """q for frequencies ``freq`` (..., N); shape (len(dims), ..., N) or (1, ..., N)."""

    @abstractmethod
    def law(self, alpha: float) -> SchemeLaw:
        """The scheme's asymptotic law under Zipf(α), α > 1 (checked by the caller): its
        exponents in d and T, None where it has no power law, and the validity note."""


def rho_value(scheme: Scheme, default: str) -> float:
    """The parameter ``rho`` of a scheme (``default`` when absent): a finite number ≥ 0."""
    text = scheme.values.get("rho", default)
    try:
        rho = float(text)
    except ValueError:
        raise ConfigError(FIELD, f"{scheme.name}: rho={text!r} is not a number") from None
    if not math.isfinite(rho) or rho < 0:
        raise ConfigError(FIELD, f"{scheme.name}: rho must be a finite number ≥ 0, got {text}")
    return rho


def power(freq: torch.Tensor, rho: float) -> torch.Tensor:
    r""":math:`\mathrm{freq}^\rho` with :math:`0^\rho = 0` (an unseen token is never stored, even at
    ρ = 0)."""
    return torch.where(freq > 0, freq.clamp(min=1e-300).pow(rho), torch.zeros_like(freq))


def top_mask(freq: torch.Tensor, dims: Sequence[int], rule: SizeRule) -> torch.Tensor:
    """Mask of the P(d) most frequent tokens with positive frequency, for each d.

    Ties in frequency are broken by token index (lower first). Returns (len(dims), ..., N) bool,
    or (1, ..., N) when the size does not depend on d.
    """
    n_inputs = freq.shape[-1]
    order = torch.sort(freq, dim=-1, descending=True, stable=True).indices
    rank = torch.empty_like(order)
    rank.scatter_(-1, order, torch.arange(n_inputs, device=freq.device).expand_as(order))
    sizes = [rule.size(d, n_inputs) for d in (dims if rule.uses_dim else dims[:1])]
    limits = torch.tensor(sizes, device=freq.device).view(-1, *([1] * freq.dim()))
    return (rank.unsqueeze(0) < limits) & (freq > 0).unsqueeze(0)


class ThresholdedScheme(Scheme):
    """A scheme that stores the P(d) most frequent tokens (parameter ``P``, a :class:`SizeRule`)."""

    params = {"P": "tokens stored: an integer, d, d/<number> or d/log d (default d/8)"}

    @property
    def rule(self) -> SizeRule:
        return SizeRule.parse(self.values.get("P", "d/8"))

    @property
    def uses_dim(self) -> bool:
        return self.rule.uses_dim

    def validate(self, n_inputs: int) -> None:
        rule = self.rule
        if rule.constant is not None and not 1 <= rule.constant <= n_inputs:
            raise ConfigError(
                FIELD, f"{self.name}: P must be between 1 and N = {n_inputs}, got {rule.constant}"
            )

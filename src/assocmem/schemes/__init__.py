"""Memory schemes: the weighting ``q`` of ``W_q = Σ_x q(x) u_{f*(x)} e_xᵀ`` (PAPER.md §2).

A scheme is written ``name`` or ``name:key=value,key=value`` (e.g. ``threshold:P=d/8``,
``power:rho=0.5``, ``empirical_threshold:P=d/12,rho=1``). Each scheme is a small class registered
under its name; adding one touches this file only.

Schemes see a *frequency* vector: the sample counts ``n(x)`` for a finite sample, or the
population law ``p(x)`` for infinite data (T = ∞). Only ranks and ratios of frequencies matter,
since the prediction ``argmax_y u_yᵀ W e_x`` is invariant to a positive rescaling of ``q``.
"""

import math
import re
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

import torch

from assocmem.config.errors import ConfigError

FIELD = "schemes"


@dataclass(frozen=True)
class SizeRule:
    """How many tokens a threshold scheme stores at dimension d: a number, or ``d/c``, ``d/log d``.

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
    """A rule; ``weights`` maps frequencies (..., N) to q at each d (n_d or 1, ..., N)."""

    name: ClassVar[str]
    uses_data: ClassVar[bool]
    params: ClassVar[dict[str, str]] = {}  # parameter name -> help text

    def __init__(self, **values: str) -> None:
        self.values = values

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


def _rho(scheme: Scheme, default: str) -> float:
    text = scheme.values.get("rho", default)
    try:
        rho = float(text)
    except ValueError:
        raise ConfigError(FIELD, f"{scheme.name}: rho={text!r} is not a number") from None
    if not math.isfinite(rho) or rho < 0:
        raise ConfigError(FIELD, f"{scheme.name}: rho must be a finite number ≥ 0, got {text}")
    return rho


def _power(freq: torch.Tensor, rho: float) -> torch.Tensor:
    """``freq^ρ`` with ``0^ρ = 0`` (an unseen token is never stored, even at ρ = 0)."""
    return torch.where(freq > 0, freq.clamp(min=1e-300).pow(rho), torch.zeros_like(freq))


def _top_mask(freq: torch.Tensor, dims: Sequence[int], rule: SizeRule) -> torch.Tensor:
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


REGISTRY: dict[str, type[Scheme]] = {}


def register(cls: type[Scheme]) -> type[Scheme]:
    REGISTRY[cls.name] = cls
    return cls


@register
class Population(Scheme):
    """``q = p^ρ`` (ρ = 1: frequency weighting, what one large-batch gradient step stores)."""

    name = "population"
    uses_data = False
    params = {"rho": "exponent ρ ≥ 0 (default 1)"}

    def weights(self, freq: torch.Tensor, dims: Sequence[int]) -> torch.Tensor:
        return _power(freq, _rho(self, "1")).unsqueeze(0)


@register
class Uniform(Scheme):
    """``q = 1`` on every token: store everything equally."""

    name = "uniform"
    uses_data = False

    def weights(self, freq: torch.Tensor, dims: Sequence[int]) -> torch.Tensor:
        return torch.ones_like(freq).unsqueeze(0)


class _Thresholded(Scheme):
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


@register
class Threshold(_Thresholded):
    """``q = 1{x among the P most frequent tokens of p}`` (optimal rate ``d^{-α+1}``)."""

    name = "threshold"
    uses_data = False

    def weights(self, freq: torch.Tensor, dims: Sequence[int]) -> torch.Tensor:
        return _top_mask(freq, dims, self.rule).to(freq.dtype)


@register
class Empirical(Scheme):
    """``q = n(x)^ρ``: empirical counts (ρ = 1 is ``n(x)/T`` up to scale)."""

    name = "empirical"
    uses_data = True
    params = {"rho": "exponent ρ ≥ 0 (default 1)"}

    def weights(self, freq: torch.Tensor, dims: Sequence[int]) -> torch.Tensor:
        return _power(freq, _rho(self, "1")).unsqueeze(0)


@register
class SeenOnce(Scheme):
    """``q = 1{n(x) > 0}``: every seen token stored equally ("fill"; overflows, PAPER.md §3.5)."""

    name = "seen_once"
    uses_data = True

    def weights(self, freq: torch.Tensor, dims: Sequence[int]) -> torch.Tensor:
        return (freq > 0).to(freq.dtype).unsqueeze(0)


@register
class EmpiricalThreshold(_Thresholded):
    """``q = 1{x among the P most frequent seen tokens} · n(x)^ρ`` (Proposition 4; ρ = 0)."""

    name = "empirical_threshold"
    uses_data = True
    params = {**_Thresholded.params, "rho": "weight the stored tokens by n(x)^ρ (default 0)"}

    def weights(self, freq: torch.Tensor, dims: Sequence[int]) -> torch.Tensor:
        return _top_mask(freq, dims, self.rule).to(freq.dtype) * _power(freq, _rho(self, "0"))


def parse_scheme(text: str) -> Scheme:
    """Parse ``name`` or ``name:key=value,...`` into a registered scheme."""
    name, _, rest = text.strip().partition(":")
    if name not in REGISTRY:
        raise ConfigError(FIELD, f"unknown scheme {name!r}; allowed: {', '.join(sorted(REGISTRY))}")
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
        _rho(scheme, "0")
    return scheme

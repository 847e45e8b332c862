r"""A one-layer sequence mixer trained on multi-query associative recall (MQAR): the memory is
written while the model reads a context, and its parameters are learned by the one trainer.

**Token layout.** A batch's inputs are sequences (R, B, 2T + 1) of int64 tokens,

.. code-block:: text

    k_1, v_1, k_2, v_2, …, k_T, v_T, x
    keys at positions 0, 2, …, 2T − 2 (in [0, N)), values at 1, 3, …, 2T − 1 (in [0, M)),
    the query key x last (in [0, N)); the target is the value written with x, in [0, M).

Keys and values index two embedding tables (no offset): the layout, not the token's id, says
which table a position reads (:func:`split_sequence`).

**The memory.** Learned key embeddings ``E`` (R, N, d) and value embeddings ``U`` (R, M, d),
projections ``W_K``, ``W_Q``, ``W_V`` (R, d, d) and a readout ``readout`` (R, M, d):

.. math::

    k_t = W_K e_{k_t}, \quad v_t = W_V u_{v_t}, \quad q = W_Q e_x, \quad
    o = \mathrm{mixer}((k_t, v_t)_{t \le T}, q), \quad \mathrm{scores}_y = r_y^\top o.

The mixer is one :class:`AbstractMixer` of :data:`MIXERS`:

- :class:`SoftmaxMixer`: :math:`o = \sum_t \mathrm{softmax}_t(\beta \sqrt{d}\, k_t^\top q)\,
  v_t` (β the inverse temperature per √d, as the closed-form softmax attention of the
  in-context study);
- :class:`LinearMixer` (Hebbian, linear attention): :math:`S = \sum_t v_t k_t^\top`,
  :math:`o = S q`;
- :class:`DeltaMixer` (DeltaNet, one pass from S = 0): :math:`S \leftarrow S + \beta (v_t - S
  k_t) k_t^\top`, :math:`o = S q`.

:meth:`MixerMemory.init` starts from the caller's draws ``E`` and ``U`` (copied; the readout a
copy of ``U``) and identity projections: at step 0 the memory *is* the closed-form rule on
those embeddings, read by argmax over :math:`u_y^\top o`. Gradients by autograd; every
operation is batched over runs and contexts, so the torch dispatches of a step do not grow with
R (the delta rule's loop runs over the T pairs only).
"""

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import ClassVar

import torch

from assocmem.training.memories.base import AbstractMemory, State

MIXER_TENSORS = ("E", "U", "W_K", "W_Q", "W_V", "readout")  # the learned tensors


class AbstractMixer(ABC):
    """How a mixer reads a context: its pairs (k_t, v_t) and a query q give an answer o."""

    name: ClassVar[str]

    @abstractmethod
    def read(self, keys: torch.Tensor, values: torch.Tensor, query: torch.Tensor) -> torch.Tensor:
        """o (R, B, d) from keys (R, B, T, d), values (R, B, T, d) and the query (R, B, d)."""


@dataclass(frozen=True)
class SoftmaxMixer(AbstractMixer):
    r"""Softmax attention over the context: logits :math:`\beta \sqrt{d}\, k_t^\top q`."""

    name: ClassVar[str] = "softmax"
    beta: float = 1.0  # the inverse temperature per √d, β > 0

    def read(self, keys: torch.Tensor, values: torch.Tensor, query: torch.Tensor) -> torch.Tensor:
        scale = self.beta * math.sqrt(keys.shape[-1])
        logits = (keys @ query[..., None])[..., 0] * scale  # (R, B, T)
        weights = torch.softmax(logits, dim=-1)
        return (weights[..., None, :] @ values)[..., 0, :]  # (R, B, d)


@dataclass(frozen=True)
class LinearMixer(AbstractMixer):
    r"""Linear attention (Hebbian): :math:`o = (\sum_t v_t k_t^\top) q = \sum_t (k_t^\top q)
    v_t`, the state never formed."""

    name: ClassVar[str] = "linear"

    def read(self, keys: torch.Tensor, values: torch.Tensor, query: torch.Tensor) -> torch.Tensor:
        match = keys @ query[..., None]  # (R, B, T, 1): k_tᵀ q
        return (values.mT @ match)[..., 0]  # (R, B, d)


@dataclass(frozen=True)
class DeltaMixer(AbstractMixer):
    r"""The delta rule, one pass from S = 0: :math:`S \leftarrow S + \beta (v_t - S k_t)
    k_t^\top`, then :math:`o = S q`."""

    name: ClassVar[str] = "delta"
    beta: float = 1.0  # the write strength β > 0

    def read(self, keys: torch.Tensor, values: torch.Tensor, query: torch.Tensor) -> torch.Tensor:
        *lead, n_pairs, dim = keys.shape
        state = keys.new_zeros(*lead, values.shape[-1], dim)  # S (R, B, d, d)
        for t in range(n_pairs):
            key, value = keys[..., t, :, None], values[..., t, :, None]  # (R, B, d, 1)
            state = state + self.beta * (value - state @ key) @ key.mT
        return (state @ query[..., None])[..., 0]


MIXERS: dict[str, type[AbstractMixer]] = {
    mixer.name: mixer for mixer in (SoftmaxMixer, LinearMixer, DeltaMixer)
}
"""The mixers by name (``"softmax"``, ``"linear"``, ``"delta"``); construct one with its
parameters (``MIXERS["delta"](beta=0.5)``)."""


def split_sequence(tokens: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The written keys (R, B, T), values (R, B, T) and query (R, B) of sequences (R, B, 2T + 1)
    laid out ``k_1, v_1, …, k_T, v_T, x``.

    Raises
    ------
    ValueError
        If the sequences do not have an odd length of at least 3.
    """
    length = tokens.shape[-1]
    if tokens.dim() != 3 or length < 3 or length % 2 == 0:
        raise ValueError(
            "the mixer memory reads sequences (R, B, 2T + 1) laid out k_1, v_1, …, k_T, v_T, x; "
            f"got tokens of shape {tuple(tokens.shape)}"
        )
    return tokens[..., 0:-1:2], tokens[..., 1:-1:2], tokens[..., -1]


def embed(table: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
    """``table[r, tokens[r, ...]]``: rows (R, *S, d) of a table (R, V, d) at tokens (R, *S)."""
    runs, dim = table.shape[0], table.shape[-1]
    flat = tokens.reshape(runs, -1)
    rows = table.gather(1, flat[..., None].expand(-1, -1, dim))
    return rows.view(*tokens.shape, dim)


class MixerMemory(AbstractMemory):
    """A one-layer sequence mixer with learned embeddings, projections and readout.

    State: ``E`` (R, N, d) key embeddings, ``U`` (R, M, d) value embeddings, ``W_K``, ``W_Q``,
    ``W_V`` (R, d, d), ``readout`` (R, M, d), all learned (:data:`MIXER_TENSORS`).

    Parameters
    ----------
    mixer : AbstractMixer, default SoftmaxMixer()
        How the context is read (:data:`MIXERS`).
    """

    name: ClassVar[str] = "mixer"
    learned: ClassVar[tuple[str, ...]] = MIXER_TENSORS

    def __init__(self, mixer: AbstractMixer | None = None) -> None:
        self.mixer = SoftmaxMixer() if mixer is None else mixer

    def init(self, fixed: State, generator: torch.Generator) -> State:
        """Copies of the caller's ``E`` (R, N, d) and ``U`` (R, M, d), the readout a copy of
        ``U``, identity projections: the closed-form rule on the drawn embeddings."""
        E, U = fixed["E"], fixed["U"]
        runs, _, dim = E.shape
        eye = torch.eye(dim, dtype=E.dtype, device=E.device).expand(runs, dim, dim)
        return {"E": E.clone(), "U": U.clone(), "W_K": eye.clone(), "W_Q": eye.clone(),
                "W_V": eye.clone(), "readout": U.clone()}  # fmt: skip

    def read(self, state: State, tokens: torch.Tensor) -> torch.Tensor:
        """The mixer's answer o (R, B, d) to sequences (R, B, 2T + 1)."""
        keys, values, query = split_sequence(tokens)
        key_table = state["E"] @ state["W_K"].mT  # (R, N, d): W_K e_x for every key
        query_table = state["E"] @ state["W_Q"].mT  # (R, N, d)
        value_table = state["U"] @ state["W_V"].mT  # (R, M, d)
        return self.mixer.read(
            embed(key_table, keys), embed(value_table, values), embed(query_table, query)
        )

    def scores(self, state: State, tokens: torch.Tensor | None) -> torch.Tensor:
        """Scores (R, B, M) over the M values of sequences (R, B, 2T + 1).

        Raises
        ------
        ValueError
            For ``tokens=None``: a sequence memory has no "every input once"; train it with an
            ``evaluate`` function (:func:`~assocmem.training.trainer.train`).
        """
        if tokens is None:
            raise ValueError(
                "the mixer memory reads MQAR sequences, not every input once: pass train() an "
                "evaluate function (e.g. the accuracy on held-out contexts)"
            )
        return self.read(state, tokens) @ state["readout"].mT

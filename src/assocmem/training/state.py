"""The trained memory of one run: the tensors that determine its logits, as its kernel left them.

``train(configs, return_state=True)`` gives every :class:`~assocmem.training.records.RunResult` a
:class:`TrainedState`. Its tensors are copies of the trained ones, bit for bit, on the CPU in
float32, and they do not depend on which runs shared the run's tensor program.

What a run holds depends on its model and on the kernel that trained it
(:func:`~assocmem.training.kernels.select_kernel`). The kernels of the matrix model under
linear or sign-like optimisers never form W: they move a product of it, which is what the state
then holds (``EWU``, ``WU`` or ``EW``). ``train(configs, keep_w=True)`` sets W as well, for
every kernel: W is stepped beside those kernels along the run's own trajectory
(:mod:`assocmem.training.shadow`), and the ``qupdate`` model's W is ``W_q``. Training with
``fast=False`` uses kernels that keep W, E and U themselves for every model but ``qupdate``
(slower; the same numbers up to rounding).
"""

from dataclasses import dataclass, fields

import torch

from assocmem.laws.tokens import mod_targets
from assocmem.ops.population import PopulationMetrics, population_metrics
from assocmem.ops.scores import memory_scores, one_hot_weights
from assocmem.runtime import intra_op_threads
from assocmem.training.config import TrainConfig
from assocmem.training.models import MODEL_REGISTRY, layer_norm
from assocmem.training.padding import unpad
from assocmem.training.task import Task

STATE_DTYPE = torch.float32
PRODUCTS = ("EW", "WU", "EWU", "q")  # what a kernel may hold instead of W


@dataclass(frozen=True, eq=False)
class TrainedState:
    r"""The final memory of one training run (N inputs, M outputs, dimension d).

    Every tensor is float32 on the CPU. ``E`` and ``U`` are always set; of ``W``, ``EW``,
    ``WU``, ``EWU`` and ``q`` at most one is (none for the ``relu`` model, whose memory is E
    and U), except that ``train(..., keep_w=True)`` sets W beside the product or q a kernel
    holds. Compare two states with :meth:`tensors` and ``torch.equal``.

    Attributes
    ----------
    config : TrainConfig
        The run's config.
    E : torch.Tensor, shape (N, d)
        Input embeddings ``e_x`` as rows: trained for the ``learned`` and ``relu`` models, as
        drawn otherwise.
    U : torch.Tensor, shape (M, d)
        Output embeddings ``u_y`` as rows (trained for ``learned`` and ``relu``).
    W : torch.Tensor or None, shape (d, d)
        The memory matrix: :math:`h(x) = W e_x` and the logits are :math:`u_y^\top h(x)` (``h``
        divided by its norm under layer norm). Set where the kernel held W (the ``learned`` model,
        the matrix model under stateful optimisers such as Adam(β₁ > 0), any model with
        ``fast=False``), and for every model with a W under ``keep_w=True``.
    EW : torch.Tensor or None, shape (N, d)
        :math:`E W^\top`: the hidden states :math:`h(x) = W e_x` as rows (matrix model, layer norm,
        linear optimisers).
    WU : torch.Tensor or None, shape (d, M)
        :math:`W^\top U^\top`, so the logits are :math:`E \cdot \mathrm{WU}` (matrix model under
        sign-like steps).
    EWU : torch.Tensor or None, shape (N, M)
        :math:`E W^\top U^\top`: the logits themselves (matrix model under linear optimisers).
    q : torch.Tensor or None, shape (N,)
        The weights of :math:`W_q = \sum_x q(x) u_{f^*(x)} e_x^\top` (the ``qupdate`` model, Eq. 16
        of Cabannes et al. 2024).
    """

    config: TrainConfig
    E: torch.Tensor
    U: torch.Tensor
    W: torch.Tensor | None = None
    EW: torch.Tensor | None = None
    WU: torch.Tensor | None = None
    EWU: torch.Tensor | None = None
    q: torch.Tensor | None = None

    @staticmethod
    def of_runs(
        configs: list[TrainConfig], tensors: dict[str, torch.Tensor]
    ) -> list["TrainedState"]:
        """One state per run from a group's tensors (R, ...) named as the fields: each run's
        slice at its own d (a group zero-padded to a larger d: :mod:`~assocmem.training.padding`)
        copied to the CPU (a contiguous float32 copy)."""
        unknown = set(tensors) - {f.name for f in fields(TrainedState)}
        assert not unknown, f"not fields of TrainedState: {unknown}"
        return [
            TrainedState(
                cfg, **{name: copy(unpad(name, t[r], cfg.dim)) for name, t in tensors.items()}
            )
            for r, cfg in enumerate(configs)
        ]

    def tensors(self) -> dict[str, torch.Tensor]:
        """The tensors that are set, by field name (``E``, ``U``, then W or a product)."""
        names = [f.name for f in fields(self) if f.name != "config"]
        return {name: getattr(self, name) for name in names if getattr(self, name) is not None}

    def logits(self) -> torch.Tensor:
        r""":math:`u_y^\top h(x)` for every input and output, (N, M), from whichever tensors are
        set, by the operations the training kernels use, on one thread as the engine evaluates (so
        the run's final logits are reproduced bit for bit)."""
        with intra_op_threads(1):
            return self._logits()

    def _logits(self) -> torch.Tensor:
        cfg = self.config
        if self.EWU is not None:
            return self.EWU.clone()
        if self.WU is not None:
            return torch.bmm(self.E[None], self.WU[None])[0]
        if self.EW is not None:
            hidden = layer_norm(self.EW) if cfg.layer_norm else self.EW
            return torch.bmm(hidden[None], self.U.T[None])[0]
        if self.q is not None:
            targets = mod_targets(cfg.n_inputs, cfg.n_outputs)
            stored = one_hot_weights(self.q.to(STATE_DTYPE), targets, cfg.n_outputs)
            scores = memory_scores(self.E, stored[:, None], self.U, order="gram", product=_bmm)
            return scores[:, 0]
        state = {name: t[None] for name, t in self.tensors().items()}
        rows = torch.arange(cfg.n_inputs)[None]
        return MODEL_REGISTRY[cfg.model].logits(state, rows, normalize=cfg.layer_norm)[0]

    def hidden(self) -> torch.Tensor:
        r"""The features ``h(x)`` of every input before any layer norm, (N, d): :math:`E W^\top`, or
        ``ReLU(E)`` for the ``relu`` model.

        Raises
        ------
        ValueError
            If the state holds ``WU``, ``EWU`` or ``q``, which do not determine them (train
            with ``fast=False`` to keep W).
        """
        if self.EW is not None:
            return self.EW
        if self.W is not None:
            return self.E @ self.W.T
        if self.config.model == "relu":
            return torch.relu(self.E)
        held = next(name for name in PRODUCTS if getattr(self, name) is not None)
        raise ValueError(f"this run's kernel kept {held}, not W: train with fast=False to keep W")

    def metrics(self) -> PopulationMetrics:
        """The exact population metrics of :meth:`logits` against the config's input law,
        targets and label law (:func:`assocmem.ops.population.population_metrics`), each (1,)."""
        task = Task.of(self.config.with_(device="cpu"))
        return population_metrics(
            self.logits()[None], task.targets, task.probs, task.law, task.population
        )


def _bmm(left: torch.Tensor, right: torch.Tensor) -> torch.Tensor:
    """``left @ right`` as a batch of one ``bmm``, the product the kernels' evaluation takes."""
    return torch.bmm(left[None], right[None])[0]


def copy(tensor: torch.Tensor) -> torch.Tensor:
    """A contiguous float32 copy on the CPU, detached (the same bits for float32 input)."""
    return tensor.detach().to("cpu", STATE_DTYPE, copy=True).contiguous()

"""Learned embeddings, the ReLU model, or layer norm with W, under stateless steps, one run at
a time: analytic gradients over the distinct tokens of each batch."""

import torch

from assocmem.ops.cross_entropy import softmax_error
from assocmem.runtime import uses_batched_path
from assocmem.training import native
from assocmem.training.config import TrainConfig
from assocmem.training.kernels.analytic import AnalyticKernel
from assocmem.training.kernels.base import RunInputs
from assocmem.training.models import LAYER_NORM_EPS
from assocmem.training.optimizers.base import Step

DENSE_MIN_DIM = 400  # torch ops only: AnalyticKernel as fast at d = 200, DenseKernel 2× at 500


class DenseKernel(AnalyticKernel):
    r"""Models with learned embeddings, the ReLU model, or layer norm with W, under SGD or
    sign-like steps (stateless optimisers): analytic gradients, one run at a time.

    A step of run r takes the k distinct tokens x of its batch with weights :math:`c(x)/B`, forms
    :math:`h = W e_x` (or ``ReLU(e_x)``), the optional layer norm
    :math:`z = h / \sqrt{\|h\|^2 + 10^{-6}}`, the logits :math:`z U^\top` and
    :math:`\Delta = w (\operatorname{softmax} - \operatorname{onehot})` (k×M), and back-propagates
    by hand: :math:`\nabla U = \Delta^\top z`, :math:`\partial z = \Delta U`,
    :math:`\partial h = (\partial z - z \langle z, \partial z\rangle) / s` under layer norm,
    :math:`\nabla W = \partial h^\top e` (rank ≤ k), :math:`\nabla e_x = \partial h W` (or
    :math:`\partial h \odot \mathbb{1}\{e > 0\}`). Cost per step ~3 k d² for the k ≤ min(B, N)
    distinct tokens (few under Zipf), against 3 B d² plus several d² optimiser passes for autograd.
    Runs never mix, so batching cannot change them.

    How the steps are taken is decided at construction (:attr:`steps_by`):

    - ``"compiled"`` (:func:`native.dense_steps`): a run takes a span of steps in one call, W
      (rows padded to whole vectors) stays in cache and one pass over it per step forms
      :math:`\nabla W` a block at a time, shapes it, writes W and accumulates :math:`\nabla E`
      through the old W;
    - ``"runs"``: torch ops a run at a time, W moved by one rank-k GEMM (SGD) or the shaped
      :math:`\nabla W`: where no compiler is found, for the W models at d ≥ ``DENSE_MIN_DIM``;
    - ``"batch"``: otherwise, the batched steps of :class:`AnalyticKernel` (the same numbers
      up to rounding).
    """

    spans = True

    def __init__(self, cfg: TrainConfig, inputs: RunInputs, targets: torch.Tensor) -> None:
        super().__init__(cfg, inputs, targets)
        if native.available(inputs.E) and self.optimizer.native_mode is not None:
            self.steps_by = "compiled"
        elif cfg.model != "relu" and cfg.dim >= DENSE_MIN_DIM:  # pays with d×d matrices only
            self.steps_by = "runs"
        else:
            self.steps_by = "batch"
        self.compiled = self.steps_by == "compiled"
        assert not inputs.dims, "one run at a time: never a zero-padded group"
        self.factors = {name: float(factor) for name, factor in self.lr_factors.items()}
        if self.compiled and "W" in self.state:  # rows padded: aligned
            W = self.state["W"]
            self.state["W"] = native.padded(W)[..., : W.shape[2]]

    @classmethod
    def supports(cls, cfg: TrainConfig) -> bool:
        # One run at a time pays on a CPU (caches, distinct tokens); a GPU wants the batch.
        per_run = not uses_batched_path(cfg.device)
        return super().supports(cfg) and per_run and cfg.optimizer.stateless

    @classmethod
    def state_elements(cls, cfg: TrainConfig) -> int:
        return 2 * cfg.dim * cfg.dim

    def advance(
        self, t0: int, tokens: torch.Tensor | None, weights: torch.Tensor, lr: torch.Tensor
    ) -> None:
        if self.steps_by != "compiled":
            super().advance(t0, tokens, weights, lr)
            return
        factors = torch.tensor([self.factors.get(name, 0.0) for name in "WEU"])
        native.dense_steps(
            self.state.get("W"), self.state["E"], self.state["U"], weights, self.targets,
            lr[:, :, None] * factors, learned=self.model.learned,
            layer_norm=self.cfg.layer_norm, optimizer=self.optimizer,
        )  # fmt: skip

    def step(
        self, t: Step, tokens: torch.Tensor | None, weights: torch.Tensor, lr: torch.Tensor
    ) -> None:
        """One step with torch ops: a run at a time (``"runs"``) or batched (``"batch"``)."""
        if self.steps_by == "batch":
            super().step(t, tokens, weights, lr)
            return
        present = weights > 0
        counts = present.sum(1).tolist()  # k of every run: its distinct tokens
        rows, row_weights = present.nonzero()[:, 1], weights[present]
        for r, (run_rows, run_weights, rate) in enumerate(
            zip(
                torch.split(rows, counts),
                torch.split(row_weights, counts),
                lr.tolist(),
                strict=True,
            )
        ):
            self.step_run(r, run_rows, run_weights, rate)

    def step_run(self, r: int, rows: torch.Tensor, weights: torch.Tensor, rate: float) -> None:
        """One optimiser step of run r: distinct tokens rows (k,), weights (k,) = c(x)/B or p(x)."""
        E, U = self.state["E"][r], self.state["U"][r]  # (N, d), (M, d)
        W = self.state["W"][r] if "W" in self.state else None  # (d, d)
        e = E.index_select(0, rows)  # (k, d)
        h = torch.relu(e) if W is None else e @ W.T  # (k, d)
        if self.cfg.layer_norm:
            scale = (h.square().sum(1, keepdim=True) + LAYER_NORM_EPS).sqrt()
            z = h / scale
        else:
            z = h
        delta = softmax_error(z @ U.T, self.targets.index_select(0, rows))  # (k, M)
        delta.mul_(weights[:, None])  # Δ: the weighted softmax error
        grad_z = delta @ U  # (k, d)
        if self.cfg.layer_norm:
            grad_h = (grad_z - z * (z * grad_z).sum(1, keepdim=True)) / scale
        else:
            grad_h = grad_z
        grad_u = delta.T @ z if "U" in self.model.learned else None  # (M, d)
        grad_e = None
        if "E" in self.model.learned:
            grad_e = grad_h * (e > 0) if W is None else grad_h @ W  # rows of ∇E, (k, d)
        direction = self.optimizer.direction
        if W is not None:
            self.update_matrix(W, grad_h, e, rate * self.factors["W"])
        if grad_e is not None:
            E.index_add_(0, rows, direction(grad_e), alpha=-rate * self.factors["E"])
        if grad_u is not None:
            U.sub_(direction(grad_u), alpha=rate * self.factors["U"])

    def update_matrix(
        self, W: torch.Tensor, grad_h: torch.Tensor, e: torch.Tensor, rate: float
    ) -> None:
        r""":math:`W \mathrel{-}= \mathrm{rate} \cdot \operatorname{direction}(\partial h^\top e)`
        for the rank-k gradient :math:`\partial h^\top e`."""
        if self.optimizer.linear:  # stateless and linear: the direction is the gradient
            W.addmm_(grad_h.T, e, alpha=-rate)
        else:
            W.sub_(self.optimizer.direction(grad_h.T @ e), alpha=rate)

"""The training kernels: a group's state and its optimiser step, several ways (issue 4).

A kernel holds the state of a group of runs (a leading run axis R) and advances it by the
counts ``c(x)/B`` of each step's batch (or ``p(x)`` for full-batch training). Kernels (chosen by
:func:`select_kernel`):

- ``TableSGDKernel`` (matrix model, SGD): the logits ``L = E Wᵀ Uᵀ`` (N×M) are the whole state;
  a step changes them by ``−lr · (E Eᵀ) D (U Uᵀ)`` with ``D`` the count-weighted softmax error
  (N×M), nonzero on the k distinct tokens of the batch. O(N k M) per step whatever d; plain
  SGD runs a span of steps per compiled call (``table_steps``).
- ``ProjectedMatrixKernel`` (matrix model, sign-like Adam β = (0, 0), sign-SGD, normalised SGD):
  the state is ``V = Wᵀ Uᵀ`` (d×M). The gradient ``Wᵀ``-side is ``P U`` with ``P = Eᵀ D``
  (d×M, rank ≤ M); its elementwise sign is projected back by ``Uᵀ`` row by row in the compiled
  kernel of :mod:`assocmem.training.native` (``projected_steps``, a span of steps per call),
  never storing the d×d matrix (torch ops, a few runs at a time, for normalised SGD or where no
  compiler is found). O(d²M) per step, independent of B.
- ``LayerNormSGDKernel`` (matrix model with layer norm, SGD): E, U fixed, so the state is
  ``H = E Wᵀ`` (N×d), moved by ``−lr (E E_bᵀ) ∂h_b``. O(N B d) per step, no d×d matrix.
- ``DenseKernel`` (learned embeddings, ReLU model, or layer norm with W under sign-like steps;
  SGD or sign-like steps, no momentum or weight decay): analytic gradients over the distinct
  tokens of each batch, one run at a time, a span of up to ``SPAN_STEPS`` steps per call of the
  compiled ``dense_steps`` (any d); with torch ops where no compiler is found (then d ≥ 400).
- ``AnalyticKernel``: every other model / optimiser / layer-norm combination, by hand-written
  gradients batched over runs and the batched optimisers of :mod:`assocmem.training.optimizers`.
- ``AutogradKernel``: the same by autograd (``fast=False``), the tests' second opinion.
- ``QUpdateKernel``: the Eq. 16 approximation ``q(x) ← q(x) + c(x) γ / (1 + e^{q(x)}/(M−1))``,
  ``γ = lr / B``, read out as the memory ``W_q = Σ_x q(x) u_{f*(x)} e_xᵀ``.
"""

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import ClassVar

import torch
import torch.nn.functional as F

from assocmem.training import native
from assocmem.training.config import TrainConfig
from assocmem.training.models import LAYER_NORM_EPS, MODEL_REGISTRY, layer_norm
from assocmem.training.optimizers import NORM_FLOOR, OPTIMIZER_REGISTRY, lr_factor

DTYPE = torch.float32
DENSE_MIN_DIM = 400  # torch ops only: AnalyticKernel as fast at d = 200, DenseKernel 2× at 500
GRADIENT_ELEMENTS = 2**20  # d×d gradient elements formed at once by the projected kernel


@dataclass
class RunInputs:
    """Everything random about a group of runs, stacked over the run axis R."""

    E: torch.Tensor  # (R, N, d) input embeddings
    U: torch.Tensor  # (R, M, d) output embeddings
    W: torch.Tensor | None  # (R, d, d) initial memory; None without W or when a product is kept
    W_product: torch.Tensor | None  # ``Wᵀ Uᵀ`` (R, d, M) or ``E Wᵀ`` (R, N, d), see stack_runs
    tokens: torch.Tensor | None  # (R, T) samples, None for full batch
    lr: torch.Tensor  # (R,) user learning rates
    labels: torch.Tensor | None = None  # (R, T) noisy labels of the samples, None without noise


def softmax_error(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """``δ = softmax(logits) − onehot(f*)`` for all N tokens, (R, N, M).

    Floating ``targets`` are a label law L(y|x), (N, M) or (R, N, M): ``δ = softmax − L``.
    """
    if targets.is_floating_point():
        return torch.softmax(logits, dim=2).sub_(targets)
    delta = torch.softmax(logits, dim=2)
    index = targets.expand(logits.shape[0], -1)[:, :, None]
    return delta.scatter_add_(2, index, torch.full_like(delta[:, :, :1], -1.0))


def weighted_softmax_error(
    logits: torch.Tensor, targets: torch.Tensor, weights: torch.Tensor
) -> torch.Tensor:
    """``w δ`` of rows (R, b, M) with weights (R, b) and targets (b,) or (R, b): the compiled
    loop where it exists (torch's softmax along a short last axis, M = 5, costs ~70 ns a row),
    else torch ops. Floating targets are a label law (b, M) or (R, b, M) (noisy labels)."""
    if native.supports(logits) and not targets.is_floating_point():
        return native.softmax_error(logits, targets, weights)
    return softmax_error(logits, targets).mul_(weights[:, :, None])


def take_rows(table: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
    """``table[r, rows[r]]`` for every run, (R, b, k): :func:`gather_rows` by one index_select."""
    runs, n, width = table.shape
    offsets = torch.arange(runs, device=rows.device)[:, None] * n
    flat = table.reshape(runs * n, width)
    return flat.index_select(0, (rows + offsets).flatten()).view(runs, -1, width)


def sign_direction(grad: torch.Tensor, cfg: TrainConfig) -> torch.Tensor:
    """The direction of a stateless sign-like step: ``sign(g)`` or ``g / (|g| + eps)``."""
    if cfg.optimizer == "sign_sgd":
        return grad.sign()
    return grad / (grad.abs() + cfg.eps)


def scatter_rows(values: torch.Tensor, rows: torch.Tensor, n: int) -> torch.Tensor:
    """(R, n, k) zeros with ``values[r, i]`` added at row ``rows[r, i]`` (repeats add up)."""
    runs, _, width = values.shape
    offsets = torch.arange(runs, device=rows.device)[:, None] * n
    out = torch.zeros(runs * n, width, dtype=values.dtype, device=values.device)
    out.index_add_(0, (rows + offsets).flatten(), values.reshape(-1, width))
    return out.view(runs, n, width)


class AbstractKernel(ABC):
    """The state of a group of runs and its optimiser step."""

    w_product: ClassVar[str] = ""  # "WU" / "EW": needs only that product of W (see stack_runs)
    spans: ClassVar[bool] = False  # advance() takes many steps at once (no per-step targets)

    def __init__(self, cfg: TrainConfig, inputs: RunInputs, targets: torch.Tensor) -> None:
        self.cfg = cfg
        self.targets = targets  # (N,)
        self.onehot = F.one_hot(targets, cfg.n_outputs).to(DTYPE)  # (N, M) the matrix F
        self.buffer: torch.Tensor | None = None  # SGD momentum (see sgd_direction)

    @abstractmethod
    def logits(self) -> torch.Tensor:
        """Logits of every token, (R, N, M)."""

    @abstractmethod
    def step(self, t: int, tokens: torch.Tensor | None, weights: torch.Tensor, lr: torch.Tensor):
        """Optimiser step t (1-based). tokens: (R, B) or None; weights: (R, N) = c(x)/B or p(x);
        lr: (R,) scheduled learning rates."""

    def advance(
        self, t0: int, tokens: torch.Tensor | None, weights: torch.Tensor, lr: torch.Tensor
    ) -> None:
        """Steps t0 + 1 … t0 + S (kernels with ``spans`` take S > 1): tokens (R, S, B) or None;
        weights (R, S, N); lr (R, S)."""
        for s in range(lr.shape[1]):
            batch = None if tokens is None else tokens[:, s]
            self.step(t0 + s + 1, batch, weights[:, s], lr[:, s])

    def sgd_direction(self, grad: torch.Tensor, param: torch.Tensor) -> torch.Tensor:
        """SGD's step direction as ``torch.optim.SGD``: weight decay added to the gradient, then
        the momentum buffer (``self.buffer``, created on the first step)."""
        if self.cfg.weight_decay:
            grad.add_(param, alpha=self.cfg.weight_decay)
        if self.cfg.momentum:
            if self.buffer is None:
                self.buffer = grad
            else:
                self.buffer.mul_(self.cfg.momentum).add_(grad)
            grad = self.buffer
        return grad


class TableSGDKernel(AbstractKernel):
    """Matrix model under SGD (momentum, weight decay): all linear in W, so track ``E Wᵀ Uᵀ``.

    Plain SGD with hard labels runs compiled, a span of steps of a run per call
    (:func:`native.table_steps`); otherwise :meth:`step` does one step of every run.
    """

    w_product = "WU"
    spans = True

    def __init__(self, cfg: TrainConfig, inputs: RunInputs, targets: torch.Tensor) -> None:
        super().__init__(cfg, inputs, targets)
        E, U = inputs.E, inputs.U
        assert inputs.W_product is not None
        self.gram_inputs = torch.bmm(E, E.transpose(1, 2))  # (R, N, N)  E Eᵀ
        self.gram_outputs = torch.bmm(U, U.transpose(1, 2))  # (R, M, M)  U Uᵀ
        self.table = torch.bmm(E, inputs.W_product)  # (R, N, M)  E Wᵀ Uᵀ
        plain = not (cfg.momentum or cfg.weight_decay)
        self.use_native = plain and native.available(self.table)  # spans of compiled steps

    def logits(self) -> torch.Tensor:
        return self.table

    def advance(
        self, t0: int, tokens: torch.Tensor | None, weights: torch.Tensor, lr: torch.Tensor
    ) -> None:
        if not self.use_native or self.targets.dim() != 1:  # soft targets: a label law
            super().advance(t0, tokens, weights, lr)
            return
        native.table_steps(
            self.table, self.gram_inputs, self.gram_outputs, weights, self.targets, lr
        )

    def step(self, t: int, tokens: torch.Tensor | None, weights: torch.Tensor, lr: torch.Tensor):
        scaled = weighted_softmax_error(self.table, self.targets, weights)
        grad = torch.bmm(self.gram_inputs, torch.bmm(scaled, self.gram_outputs))
        grad = self.sgd_direction(grad, self.table)
        self.table.sub_(lr[:, None, None] * grad)


class LayerNormSGDKernel(AbstractKernel):
    """Matrix model with layer norm under SGD (momentum, weight decay): E and U are fixed and
    every change of W reaches the logits through ``H = E Wᵀ`` (N×d), so track H.

    A step back-propagates to the hidden states ``h_x`` of the batch rows (all N tokens weighted
    by ``c(x)/B`` once B ≥ N) and moves H by ``−lr · E ∇Wᵀ = −lr · (E E_bᵀ) ∂h_b``: O(N B d) per
    step (O(N² d) for large batches) instead of O(B d²) and the d×d matrix never exists.
    """

    w_product = "EW"

    def __init__(self, cfg: TrainConfig, inputs: RunInputs, targets: torch.Tensor) -> None:
        super().__init__(cfg, inputs, targets)
        assert inputs.W_product is not None
        self.H, self.U = inputs.W_product, inputs.U  # (R, N, d), (R, M, d)
        self.gram_inputs = torch.bmm(inputs.E, inputs.E.transpose(1, 2))  # (R, N, N)
        runs, n = inputs.E.shape[0], cfg.n_inputs
        self.all_rows = torch.arange(n, device=inputs.E.device).expand(runs, n)

    def logits(self) -> torch.Tensor:
        return torch.bmm(layer_norm(self.H), self.U.transpose(1, 2))

    def step(self, t: int, tokens: torch.Tensor | None, weights: torch.Tensor, lr: torch.Tensor):
        # Few samples: the batch rows, 1/B each; otherwise every token, weighted by its count.
        if tokens is not None and tokens.shape[1] < self.cfg.n_inputs:
            rows = tokens  # (R, b)
            h, gram = take_rows(self.H, rows), take_rows(self.gram_inputs, rows)  # (R, b, ·)
            row_weights = torch.full_like(rows, 1.0 / rows.shape[1], dtype=DTYPE)
        else:
            rows, h, gram, row_weights = self.all_rows, self.H, self.gram_inputs, weights
        scale = (h.square().sum(2, keepdim=True) + LAYER_NORM_EPS).sqrt_()
        z = h / scale
        logits = torch.bmm(z, self.U.transpose(1, 2))  # (R, b, M)
        delta = weighted_softmax_error(logits, self.targets[rows], row_weights)
        grad_z = torch.bmm(delta, self.U)  # (R, b, d)
        grad_h = grad_z.sub_(z.mul_((z * grad_z).sum(2, keepdim=True))).div_(scale)
        grad = torch.bmm(gram.transpose(1, 2), grad_h)  # (R, N, d): E ∇Wᵀ
        grad = self.sgd_direction(grad, self.H)
        self.H.addcmul_(grad, lr[:, None, None], value=-1)


class ProjectedMatrixKernel(AbstractKernel):
    """Matrix model under sign-like Adam, sign-SGD or normalised SGD: track ``V = Wᵀ Uᵀ``.

    Compiled (Adam, sign-SGD), a run takes a span of whole steps per call
    (:func:`native.projected_steps`); otherwise :meth:`step` does one step of every run.
    """

    w_product = "WU"
    spans = True

    def __init__(self, cfg: TrainConfig, inputs: RunInputs, targets: torch.Tensor) -> None:
        super().__init__(cfg, inputs, targets)
        assert inputs.W_product is not None
        self.E, self.U = inputs.E, inputs.U
        self.U_t = inputs.U.transpose(1, 2).contiguous()  # (R, d, M)
        self.gram_outputs = torch.bmm(self.U, self.U_t)  # (R, M, M)
        self.V = inputs.W_product  # (R, d, M)
        self.lr_factor = lr_factor(cfg, "W")
        self.use_native = cfg.optimizer != "normalized_sgd" and native.supports(self.V)
        if self.use_native:  # U's rows padded to whole vectors (zeros: no effect)
            self.U_padded = native.padded(inputs.U)
        self.buffers: tuple[torch.Tensor, ...] = ()  # for the torch ops, allocated on first use

    def logits(self) -> torch.Tensor:
        return torch.bmm(self.E, self.V)

    def advance(
        self, t0: int, tokens: torch.Tensor | None, weights: torch.Tensor, lr: torch.Tensor
    ) -> None:
        if not self.use_native:
            super().advance(t0, tokens, weights, lr)
            return
        native.projected_steps(
            self.V, self.E, self.U_padded, weights, self.targets, lr * self.lr_factor,
            optimizer=self.cfg.optimizer, eps=self.cfg.eps,
        )  # fmt: skip

    def step(self, t: int, tokens: torch.Tensor | None, weights: torch.Tensor, lr: torch.Tensor):
        """One step of every run with torch ops (normalised SGD, or no compiled kernel)."""
        rate = (lr * self.lr_factor)[:, None, None]
        sign = self.cfg.optimizer == "sign_sgd"
        scaled = weighted_softmax_error(self.logits(), self.targets, weights)
        P = torch.bmm(self.E.transpose(1, 2), scaled)  # (R, d, M); the W-gradient is (P U)ᵀ
        if self.cfg.optimizer == "normalized_sgd":
            norm_sq = (torch.bmm(P.transpose(1, 2), P) * self.gram_outputs).sum((1, 2))
            norm = norm_sq.clamp_min(0).sqrt().clamp_min(NORM_FLOOR)
            self.V.sub_(rate / norm[:, None, None] * torch.bmm(P, self.gram_outputs))
            return
        self.V.sub_(rate * self.torch_sign_project(P, sign=sign))

    def torch_sign_project(self, P: torch.Tensor, *, sign: bool) -> torch.Tensor:
        """:func:`native.sign_project` with torch ops, a few runs' d×d gradients at a time."""
        runs, dim, m = P.shape
        if not self.buffers:  # reused: bounded memory, no page faults
            chunk = max(1, min(runs, GRADIENT_ELEMENTS // dim**2))
            grad = torch.empty(chunk, dim, dim, dtype=DTYPE, device=P.device)
            self.buffers = (grad, torch.empty_like(grad))
        grad_buffer, scratch_buffer = self.buffers
        change = torch.empty_like(P)
        for start in range(0, runs, grad_buffer.shape[0]):
            block = slice(start, start + grad_buffer.shape[0])
            n = P[block].shape[0]
            grad, scratch = grad_buffer[:n], scratch_buffer[:n]
            torch.bmm(P[block], self.U[block], out=grad)  # Gᵀ, (n, d, d)
            if sign:
                grad.sign_()
            else:  # Adam with betas (0, 0): m = g, v = g², no bias correction left
                grad.div_(torch.abs(grad, out=scratch).add_(self.cfg.eps))
            torch.bmm(grad, self.U_t[block], out=change[block])
        return change


class DenseKernel(AbstractKernel):
    """Models with learned embeddings, the ReLU model, or layer norm with W, under SGD or
    sign-like steps: analytic gradients over the distinct tokens of each batch, one run at a time.

    A step of run r takes the k distinct tokens x of its batch with weights ``c(x)/B``, forms
    ``h = W e_x`` (or ``ReLU(e_x)``), the optional layer norm ``z = h / sqrt(‖h‖² + 1e-6)``, the
    logits ``z Uᵀ`` and ``Δ = w (softmax − onehot)`` (k×M), and back-propagates by hand:
    ``∇U = Δᵀ z``, ``∂z = Δ U``, ``∂h = (∂z − z ⟨z, ∂z⟩) / s`` under layer norm, ``∇W = ∂hᵀ e``
    (rank ≤ k), ``∇e_x = ∂h W`` (or ``∂h ⊙ 1{e > 0}``). Compiled (:func:`native.dense_steps`),
    a run takes a span of steps in one call, W (rows padded to whole vectors) stays in cache and
    one pass over it per step forms ``∇W`` a block at a time, shapes it, writes W and
    accumulates ``∇E`` through the old W; with torch ops (:meth:`step`), W moves by one rank-k
    GEMM (SGD) or the shaped ``∇W``. Cost per step ~3 k d² for the k ≤ min(B, N) distinct
    tokens (few under Zipf), against 3 B d² plus several d² optimiser passes for autograd. Runs
    never mix, so batching cannot change them.
    """

    spans = True

    def __init__(self, cfg: TrainConfig, inputs: RunInputs, targets: torch.Tensor) -> None:
        super().__init__(cfg, inputs, targets)
        self.model = MODEL_REGISTRY[cfg.model]
        self.state = {"E": inputs.E.clone(), "U": inputs.U.clone()}
        if inputs.W is not None and "W" in self.model.learned:
            self.state["W"] = inputs.W.clone()
        self.lr_factors = {name: lr_factor(cfg, name) for name in self.model.learned}
        runs, n = inputs.E.shape[0], cfg.n_inputs
        self.all_rows = torch.arange(n, device=inputs.E.device).expand(runs, n)
        self.use_native = native.available(inputs.E)
        if self.use_native and "W" in self.state:  # rows padded to whole vectors: aligned
            W = self.state["W"]
            self.state["W"] = native.padded(W)[..., : W.shape[2]]

    def logits(self) -> torch.Tensor:
        return self.model.logits(self.state, self.all_rows, normalize=self.cfg.layer_norm)

    def advance(
        self, t0: int, tokens: torch.Tensor | None, weights: torch.Tensor, lr: torch.Tensor
    ) -> None:
        if not self.use_native:
            super().advance(t0, tokens, weights, lr)
            return
        factors = torch.tensor([self.lr_factors.get(name, 0.0) for name in "WEU"])
        native.dense_steps(
            self.state.get("W"), self.state["E"], self.state["U"], weights, self.targets,
            lr[:, :, None] * factors, learned=self.model.learned,
            layer_norm=self.cfg.layer_norm, optimizer=self.cfg.optimizer, eps=self.cfg.eps,
        )  # fmt: skip

    def step(self, t: int, tokens: torch.Tensor | None, weights: torch.Tensor, lr: torch.Tensor):
        """One step with torch ops, a run at a time (where the compiled kernel is missing)."""
        present = weights > 0
        counts = present.sum(1).tolist()  # k of every run: its distinct tokens
        rows, row_weights = present.nonzero()[:, 1], weights[present]
        for r, (run_rows, run_weights, rate) in enumerate(
            zip(rows.split(counts), row_weights.split(counts), lr.tolist(), strict=True)
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
        delta = torch.softmax(z @ U.T, dim=1).sub_(self.onehot.index_select(0, rows))  # (k, M)
        delta.mul_(weights[:, None])  # Δ: the weighted softmax error
        grad_z = delta @ U  # (k, d)
        if self.cfg.layer_norm:
            grad_h = (grad_z - z * (z * grad_z).sum(1, keepdim=True)) / scale
        else:
            grad_h = grad_z
        grads: dict[str, torch.Tensor] = {}
        if "U" in self.model.learned:
            grads["U"] = delta.T @ z  # (M, d)
        if "E" in self.model.learned:
            grads["E"] = grad_h * (e > 0) if W is None else grad_h @ W  # rows of ∇E, (k, d)
        if W is not None:
            self.update_matrix(W, grad_h, e, rate * self.lr_factors["W"])
        if "E" in grads:
            E.index_add_(0, rows, self.direction(grads["E"]), alpha=-rate * self.lr_factors["E"])
        if "U" in grads:
            U.sub_(self.direction(grads["U"]), alpha=rate * self.lr_factors["U"])

    def direction(self, grad: torch.Tensor) -> torch.Tensor:
        """The optimiser's step direction for a gradient (rows of E not in the batch have a zero
        gradient and, under every optimiser here, a zero step)."""
        if self.cfg.optimizer == "sgd":
            return grad
        if self.cfg.optimizer == "sign_sgd":
            return grad.sign()
        return grad / (grad.abs() + self.cfg.eps)  # Adam with betas (0, 0)

    def update_matrix(self, W: torch.Tensor, grad_h: torch.Tensor, e: torch.Tensor, rate: float):
        """``W −= rate · direction(∂hᵀ e)`` for the rank-k gradient ``∂hᵀ e``."""
        if self.cfg.optimizer == "sgd":
            W.addmm_(grad_h.T, e, alpha=-rate)
        else:
            W.sub_(self.direction(grad_h.T @ e), alpha=rate)


class AnalyticKernel(AbstractKernel):
    """Any model and optimiser: the gradients of :class:`AutogradKernel`, written out, batched
    over runs (no autograd graph), then the same batched optimisers.

    With the rows b of the step (the batch, or all N tokens weighted by ``c(x)/B`` once
    B ≥ N) and ``Δ = w (softmax − onehot)``: ``∇U = Δᵀ z``, ``∂z = Δ U``, ``∂h`` through the
    layer norm, ``∇W = ∂hᵀ e``, ``∂e = ∂h W`` (or ``∂h ⊙ 1{e > 0}`` for ReLU), scattered into
    ``∇E``. Tested against autograd and ``torch.optim``.
    """

    def __init__(self, cfg: TrainConfig, inputs: RunInputs, targets: torch.Tensor) -> None:
        super().__init__(cfg, inputs, targets)
        self.model = MODEL_REGISTRY[cfg.model]
        self.optimizer = OPTIMIZER_REGISTRY[cfg.optimizer](cfg)
        self.state = {"E": inputs.E.clone(), "U": inputs.U.clone()}
        if inputs.W is not None and cfg.model != "relu":
            self.state["W"] = inputs.W.clone()
        self.lr_factors = {name: lr_factor(cfg, name) for name in self.model.learned}
        runs, n = inputs.E.shape[0], cfg.n_inputs
        self.all_rows = torch.arange(n, device=inputs.E.device).expand(runs, n)

    def logits(self) -> torch.Tensor:
        return self.model.logits(self.state, self.all_rows, normalize=self.cfg.layer_norm)

    def step(self, t: int, tokens: torch.Tensor | None, weights: torch.Tensor, lr: torch.Tensor):
        E, U, W = self.state["E"], self.state["U"], self.state.get("W")
        by_rows = tokens is not None and tokens.shape[1] < self.cfg.n_inputs
        if by_rows and tokens is not None:
            rows, e = tokens, take_rows(E, tokens)  # (R, b), (R, b, d)
            row_weights = torch.full_like(rows, 1.0 / rows.shape[1], dtype=DTYPE)
        else:
            rows, e, row_weights = self.all_rows, E, weights
        h = torch.relu(e) if W is None else torch.bmm(e, W.transpose(1, 2))  # (R, b, d)
        if self.cfg.layer_norm:
            scale = (h.square().sum(2, keepdim=True) + LAYER_NORM_EPS).sqrt_()
            z = h / scale
        else:
            z = h
        delta = weighted_softmax_error(
            torch.bmm(z, U.transpose(1, 2)), self.targets[rows], row_weights
        )
        grad_h = torch.bmm(delta, U)  # ∂z, (R, b, d)
        if self.cfg.layer_norm:
            grad_h.sub_(z * (z * grad_h).sum(2, keepdim=True)).div_(scale)
        grads: dict[str, torch.Tensor] = {}
        if "U" in self.model.learned:
            grads["U"] = torch.bmm(delta.transpose(1, 2), z)  # (R, M, d)
        if "W" in self.model.learned:
            assert W is not None
            grads["W"] = torch.bmm(grad_h.transpose(1, 2), e)  # (R, d, d)
        if "E" in self.model.learned:
            grad_e = grad_h * (e > 0) if W is None else torch.bmm(grad_h, W)  # (R, b, d)
            if by_rows and self.stateless:
                self.update_rows(rows, grad_e, lr * self.lr_factors["E"])
            else:
                grads["E"] = scatter_rows(grad_e, rows, E.shape[1]) if by_rows else grad_e
        for name, grad in grads.items():
            self.optimizer.step(name, self.state[name], grad, lr * self.lr_factors[name], t)

    @property
    def stateless(self) -> bool:
        """Whether a step moves only the rows with a non-zero gradient, by their gradient alone."""
        cfg = self.cfg
        if cfg.momentum or cfg.weight_decay:
            return False
        return cfg.optimizer in ("sgd", "sign_sgd") or (
            cfg.optimizer == "adam" and cfg.betas == (0.0, 0.0)
        )

    def update_rows(self, rows: torch.Tensor, grad_rows: torch.Tensor, lr: torch.Tensor) -> None:
        """The step of E on the batch rows only: O(B d) instead of O(N d) a step.

        Repeated tokens first sum their gradients (in a zeroed-after-use buffer); every copy of
        a row then computes the same new row, so writing all copies is deterministic.
        """
        E = self.state["E"]
        runs, n, d = E.shape
        flat = (rows + torch.arange(runs, device=rows.device)[:, None] * n).flatten()
        if not hasattr(self, "row_buffer"):
            self.row_buffer = torch.zeros(runs * n, d, dtype=E.dtype, device=E.device)
        self.row_buffer.index_add_(0, flat, grad_rows.reshape(-1, d))
        grad = self.row_buffer.index_select(0, flat).view(runs, -1, d)
        self.row_buffer.index_fill_(0, flat, 0.0)
        direction = sign_direction(grad, self.cfg) if self.cfg.optimizer != "sgd" else grad
        new_rows = take_rows(E, rows).addcmul_(direction, lr[:, None, None], value=-1)
        E.view(runs * n, d).index_copy_(0, flat, new_rows.view(-1, d))


class AutogradKernel(AbstractKernel):
    """Any model and optimiser: autograd through the batched model, batched optimiser step."""

    def __init__(self, cfg: TrainConfig, inputs: RunInputs, targets: torch.Tensor) -> None:
        super().__init__(cfg, inputs, targets)
        self.model = MODEL_REGISTRY[cfg.model]
        self.optimizer = OPTIMIZER_REGISTRY[cfg.optimizer](cfg)
        self.state = {"E": inputs.E.clone(), "U": inputs.U.clone()}
        if inputs.W is not None:
            self.state["W"] = inputs.W.clone()
        self.lr_factors = {name: lr_factor(cfg, name) for name in self.model.learned}
        runs, n = inputs.E.shape[0], cfg.n_inputs
        self.all_rows = torch.arange(n, device=inputs.E.device).expand(runs, n)

    def logits(self) -> torch.Tensor:
        with torch.no_grad():
            return self.model.logits(self.state, self.all_rows, normalize=self.cfg.layer_norm)

    def loss(self, tokens: torch.Tensor | None, weights: torch.Tensor) -> torch.Tensor:
        """Sum over runs of each run's mean batch cross-entropy (or population loss)."""
        # Few samples: evaluate the batch rows; otherwise every token once, weighted by counts.
        by_rows = tokens is not None and tokens.shape[1] < self.cfg.n_inputs
        rows = tokens if by_rows and tokens is not None else self.all_rows
        logits = self.model.logits(self.state, rows, normalize=self.cfg.layer_norm)
        ce = F.cross_entropy(
            logits.flatten(0, 1), self.targets[rows].flatten(), reduction="none"
        ).view(rows.shape)
        return ce.mean(1).sum() if by_rows else (ce * weights).sum()

    def step(self, t: int, tokens: torch.Tensor | None, weights: torch.Tensor, lr: torch.Tensor):
        names = self.model.learned
        params = [self.state[name].requires_grad_(True) for name in names]
        grads = torch.autograd.grad(self.loss(tokens, weights), params)
        with torch.no_grad():
            for name, grad in zip(names, grads, strict=True):
                param = self.state[name].requires_grad_(False)
                self.optimizer.step(name, param, grad, lr * self.lr_factors[name], t)


class LabelLawAutogradKernel(AutogradKernel):
    """:class:`AutogradKernel` whose ``targets`` is a label law L (N, M) or (R, N, M) (noisy
    labels): the loss is ``Σ_x w(x) Σ_y L(y|x)(−log softmax_y)`` over every token."""

    def loss(self, tokens: torch.Tensor | None, weights: torch.Tensor) -> torch.Tensor:
        logits = self.model.logits(self.state, self.all_rows, normalize=self.cfg.layer_norm)
        ce = -(torch.log_softmax(logits, dim=2) * self.targets).sum(2)  # (R, N)
        return (ce * weights).sum()


class QUpdateKernel(AbstractKernel):
    """Eq. 16: each occurrence of x adds ``γ / (1 + e^{q(x)}/(M−1))`` to q(x), ``γ = lr/B``."""

    def __init__(self, cfg: TrainConfig, inputs: RunInputs, targets: torch.Tensor) -> None:
        super().__init__(cfg, inputs, targets)
        E, U = inputs.E, inputs.U
        self.gram_inputs = torch.bmm(E, E.transpose(1, 2))  # (R, N, N)
        self.gram_outputs = torch.bmm(U, U.transpose(1, 2))  # (R, M, M)
        self.q = torch.zeros(E.shape[0], cfg.n_inputs, dtype=DTYPE, device=E.device)

    def logits(self) -> torch.Tensor:
        stored = self.q[:, :, None] * self.onehot  # (R, N, M): q(x) at column f*(x)
        return torch.bmm(self.gram_inputs, torch.bmm(stored, self.gram_outputs))

    def step(self, t: int, tokens: torch.Tensor | None, weights: torch.Tensor, lr: torch.Tensor):
        # weights = c(x)/B, so c(x)·γ = weights · lr.
        gain = 1.0 / (1.0 + torch.exp(self.q) / (self.cfg.n_outputs - 1))
        self.q.add_(weights * lr[:, None] * gain)


def select_kernel(cfg: TrainConfig, *, fast: bool = True) -> type[AbstractKernel]:
    """The cheapest kernel that computes this config's runs exactly (up to rounding)."""
    if cfg.model == "qupdate":
        return QUpdateKernel
    if cfg.label_noise:  # soft targets (a label law per token): the full-table kernel or autograd
        if fast and cfg.model == "matrix" and not cfg.layer_norm and cfg.optimizer == "sgd":
            return TableSGDKernel
        return LabelLawAutogradKernel
    plain_matrix = cfg.model == "matrix" and not cfg.layer_norm
    if fast and plain_matrix and cfg.optimizer == "sgd":
        return TableSGDKernel
    if fast and cfg.model == "matrix" and cfg.layer_norm and cfg.optimizer == "sgd":
        return LayerNormSGDKernel
    sign_like = cfg.optimizer in ("sign_sgd", "normalized_sgd") or (
        cfg.optimizer == "adam" and cfg.betas == (0.0, 0.0)
    )
    if fast and plain_matrix and sign_like and not cfg.weight_decay:
        return ProjectedMatrixKernel
    plain_step = cfg.optimizer in ("sgd", "sign_sgd") or (
        cfg.optimizer == "adam" and cfg.betas == (0.0, 0.0)
    )
    simple = plain_step and not (cfg.momentum or cfg.weight_decay)
    # One run at a time pays on a CPU (caches, distinct tokens); a GPU wants the batched kernel.
    # Compiled, it wins at every d (measured 1.1–10× at d = 10 … 1000); with torch ops only
    # for the W models at large d.
    compiled = cfg.device == "cpu" and native.load() is not None
    per_run = compiled or (cfg.device == "cpu" and cfg.model != "relu" and cfg.dim >= DENSE_MIN_DIM)
    if fast and simple and per_run:
        return DenseKernel
    return AnalyticKernel if fast else AutogradKernel

r"""Editing and erasing facts by a change of the weights: rank-one updates of a memory W.

A memory ``W`` (closed-form :math:`W_q = \sum_x q(x) u_{f^*(x)} e_x^\top`, Cabannes et al. 2024, or
a trained one) answers :math:`\operatorname{argmax}_y u_y^\top W e_x`. An edit gives token x a new
target y₁ ≠ y₀ = f*(x); an erasure removes the association x → y₀. Every method here adds a rank-one
term :math:`\Delta W = a b^\top` with ``a`` in the span of the output embeddings, so the whole
effect on the memory's answers is the change of the score table :math:`S = E W^\top U^\top` (N×M) by
:math:`(E b)(U a)^\top`: the edits are computed exactly in that representation (W is never formed;
the tests check it against W built and edited explicitly); :mod:`assocmem.studies.editing.sequence`
measures a sequence of them. Methods (docs: beyond/editing.md):

- ``replace`` (closed-form memories): :math:`\Delta W = q(x) (u_{y_1} - u_{y_0}) e_x^\top` — the
  token's stored association is subtracted and the new one added with its weight q(x); erasure
  :math:`\Delta W = -q(x) u_{y_0} e_x^\top`.
- ``rome`` / ``rome_cov``: the minimum-norm rank-one update of ROME (Meng et al. 2022),
  :math:`\Delta W = (v - W k) k^\top C^{-1} / (k^\top C^{-1} k)` with key :math:`k = e_x`,
  :math:`C = I` (``rome``) or the key covariance :math:`C = \sum_x p(x) e_x e_x^\top + r I`
  (``rome_cov``, :math:`r = \mathrm{reg} \cdot \operatorname{tr}(C_0)/d`). The value is
  :math:`v = W k + \lambda (u_{y_1} - u_{y_0})` with the smallest :math:`\lambda \ge 0` that makes
  y₁ win over every other output by the margin m. Erasure takes
  :math:`v = W k - \lambda (u_{y_0} - \bar{u})`, ū the mean of the other outputs' embeddings (the
  minimum-norm direction), with the λ that brings the old target's score down to the mean of the
  others' scores.

Edits of a sequence are applied one after the other (each ROME value solved on the memory as
the earlier edits left it), which is also "together" for ``replace`` (its updates do not depend
on W).
"""

import functools
import math
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import torch

from assocmem.ops.scores import memory_scores

METHODS = ("replace", "rome", "rome_cov")
OPERATIONS = ("edit", "erase")


@dataclass(frozen=True, eq=False)
class EditableMemory:
    r"""A memory as the edits see it: embeddings and the score table (float64, numpy).

    Attributes
    ----------
    E : numpy.ndarray, shape (N, d)
        Input embeddings ``e_x`` (the keys), as rows.
    U : numpy.ndarray, shape (M, d)
        Output embeddings ``u_y`` as rows.
    scores : numpy.ndarray, shape (N, M)
        :math:`u_y^\top W e_x` for every token and output.
    targets : numpy.ndarray of int, shape (N,)
        :math:`f^*(x)`.
    probs : numpy.ndarray, shape (N,)
        The token law p (decreasing: token x has frequency rank x + 1).
    q : numpy.ndarray or None, shape (N,)
        The weights of a closed-form memory (None for a trained one).
    """

    E: np.ndarray
    U: np.ndarray
    scores: np.ndarray
    targets: np.ndarray
    probs: np.ndarray
    q: np.ndarray | None = None

    @functools.cached_property
    def output_gram(self) -> np.ndarray:
        r""":math:`U U^\top`, (M, M)."""
        gram: np.ndarray = self.U @ self.U.T
        return gram

    def noise(self) -> float:
        r"""The memory's score noise σ: the spread of each token's wrong-output scores,
        :math:`\sqrt{\operatorname{mean}_x \operatorname{var}_{y \ne f^*(x)} s(x, y)}` (unbiased
        variance, uniform over tokens).

        The unit of the ROME margin: it equals the interference level of Theorem 1 of
        Cabannes et al. (2024) for closed-form memories, and it is defined for any memory."""
        n, m = self.scores.shape
        keep = np.ones((n, m), dtype=bool)
        keep[np.arange(n), self.targets] = False
        wrong = self.scores[keep].reshape(n, m - 1)
        return float(np.sqrt(wrong.var(axis=1, ddof=1).mean()))


def closed_form_memory(
    probs: np.ndarray, targets: np.ndarray, q: np.ndarray, E: np.ndarray, U: np.ndarray
) -> EditableMemory:
    r""":math:`W_q = \sum_x q(x) u_{f^*(x)} e_x^\top` as scores, from the class sums
    :math:`A_y = \sum_{f^*(x)=y} q(x) e_x` (M×d): :math:`S = (E A^\top)(U U^\top)`, O(N d M) without
    forming W.

    Parameters
    ----------
    probs, targets, q : numpy.ndarray, shape (N,)
        p, f*(x) and the weights q(x).
    E : numpy.ndarray, shape (N, d)
    U : numpy.ndarray, shape (M, d)

    Returns
    -------
    EditableMemory
    """
    onehot = np.eye(U.shape[0])[targets]  # (N, M)
    stored = torch.from_numpy(onehot * q[:, None])[:, None]  # diag(q) F, (N, 1, M)
    keys, outputs = torch.from_numpy(E), torch.from_numpy(U)
    scores = memory_scores(keys, stored, outputs, left="weights")[:, 0].numpy()
    return EditableMemory(E, U, scores, targets, probs, q.astype(np.float64))


def key_columns(
    E: np.ndarray, probs: np.ndarray, tokens: np.ndarray, *, covariance: bool, reg: float
) -> np.ndarray:
    r""":math:`E C^{-1} e_x` for each token x of ``tokens``: how much an edit with key ``e_x`` moves
    every token (``K[x', j] / K[x_j, j]`` for ROME's normalised update).

    :math:`C = I`, or :math:`C = \sum_x p(x) e_x e_x^\top + r I` with
    :math:`r = \mathrm{reg} \cdot \sum_x p(x)|e_x|^2 / d`, computed in the smaller of the two
    spaces: :math:`C^{-1}` by Cholesky when d ≤ N, else by
    :math:`E C^{-1} E^\top = G (r I + \operatorname{diag}(p) G)^{-1}` with :math:`G = E E^\top`
    (N×N).

    Parameters
    ----------
    E : numpy.ndarray, shape (N, d)
        The keys ``e_x`` as rows.
    probs : numpy.ndarray, shape (N,)
        p, the weights of the key covariance.
    tokens : numpy.ndarray of int, shape (k,)
        The edited tokens.
    covariance : bool
        The key covariance (``rome_cov``), else :math:`C = I`.
    reg : float
        The ridge r relative to the mean eigenvalue :math:`\operatorname{tr}(C_0)/d`.

    Returns
    -------
    numpy.ndarray, shape (N, k)
        Column j is :math:`E C^{-1} e_{x_j}` (:math:`E e_{x_j}` for :math:`C = I`).
    """
    E64 = torch.from_numpy(E)
    keys = E64[torch.from_numpy(tokens)]  # (k, d)
    if not covariance:
        plain: np.ndarray = (E64 @ keys.T).numpy()
        return plain
    n, d = E.shape
    p = torch.from_numpy(probs)
    ridge = reg * float(p @ E64.square().sum(1)) / d
    if d <= n:
        C = (E64 * p[:, None]).T @ E64 + ridge * torch.eye(d, dtype=E64.dtype)
        solved = torch.cholesky_solve(keys.T, torch.linalg.cholesky(C))  # C⁻¹ e_x, (d, k)
        direct: np.ndarray = (E64 @ solved).numpy()
        return direct
    G = E64 @ E64.T
    system = ridge * torch.eye(n, dtype=E64.dtype) + p[:, None] * G
    unit = torch.zeros(n, len(tokens), dtype=E64.dtype)
    unit[torch.from_numpy(tokens), torch.arange(len(tokens))] = 1.0
    through: np.ndarray = (G @ torch.linalg.solve(system, unit)).numpy()
    return through


def edit_value(
    row: np.ndarray, gram: np.ndarray, old: int, new: int, margin: float
) -> tuple[float, np.ndarray]:
    r"""The ROME value of an edit x → new: the smallest :math:`\lambda \ge 0` with
    :math:`s_{\mathrm{new}} - s_y + \lambda c_y \ge \mathrm{margin}` for every y ≠ new,
    :math:`c_y = (u_{\mathrm{new}} - u_y)\cdot (u_{\mathrm{new}} - u_{\mathrm{old}})` (outputs with
    :math:`c_y \le 0` cannot be passed along this direction and are left out), and the direction's
    change of the M scores :math:`U (u_{\mathrm{new}} - u_{\mathrm{old}})`.

    row: (M,) the token's scores; gram: (M, M) :math:`U U^\top`."""
    direction = gram[:, new] - gram[:, old]  # u_y · (u_new − u_old)
    reach = direction[new] - direction  # c_y
    passable = reach > 0  # c_new = 0: the new output itself is never among them
    # past float64's range λ is inf or NaN, which stops the sequence (edit_steps)
    with np.errstate(over="ignore", invalid="ignore"):
        need = (margin - (row[new] - row[passable])) / reach[passable]
    return float(np.max(need, initial=0.0)), direction


def erase_value(row: np.ndarray, gram: np.ndarray, old: int) -> tuple[float, np.ndarray]:
    r"""The ROME value of an erasure: along :math:`w = u_{\mathrm{old}} - \bar{u}` (ū the mean of
    the other outputs' embeddings), the :math:`\lambda \ge 0` that brings ``s_old`` down to the mean
    of the other scores, and the direction's change of the M scores :math:`-U w`."""
    others = np.arange(len(row)) != old
    along = gram[:, old] - gram[:, others].mean(axis=1)  # u_y · w
    length = along[old] - along[others].mean()  # |w|²
    gap = row[old] - row[others].mean()
    return max(0.0, gap / length), -along


def rank_one_change(
    memory: EditableMemory,
    row: np.ndarray,
    token: int,
    new: int,
    method: str,
    operation: str,
    margin: float,
    column: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, float]:
    r"""The score change :math:`(E b)(U a)^\top` of one edit or erasure of ``token`` as
    :math:`(E b, U a, \lambda)`: ``E b`` (N,) and ``U a`` (M,).

    ``row`` (M,) is the token's current scores; ``column`` is :math:`E C^{-1} e_x` (``E e_x`` for
    ``replace``) from :func:`key_columns`."""
    gram, old = memory.output_gram, int(memory.targets[token])
    if method == "replace":
        assert memory.q is not None, "replace needs the weights q of a closed-form memory"
        weight = float(memory.q[token])
        if operation == "edit":
            return column, weight * (gram[:, new] - gram[:, old]), weight
        return column, -weight * gram[:, old], weight
    if operation == "edit":
        lam, direction = edit_value(row, gram, old, new, margin)
    else:
        lam, direction = erase_value(row, gram, old)
    return column / column[token], lam * direction, lam


def edit_steps(
    memory: EditableMemory,
    tokens: np.ndarray,
    new_targets: np.ndarray,
    columns: np.ndarray,
    *,
    method: str,
    operation: str,
    margin: float,
) -> Iterator[tuple[np.ndarray, float]]:
    """Apply the edits (or erasures) of ``tokens`` one after the other: after each, yield the
    transposed score table (M, N), updated in place, and the edit's λ (``replace``: q(x)).

    The sequence stops before the first edit whose λ is not finite: its value lies past
    float64's range (the scores have grown along the sequence until the margin cannot be met),
    so that edit, and every later one, cannot be made.

    The arguments are those of :func:`run_sequence`; ``memory`` is not modified."""
    table = np.ascontiguousarray(memory.scores.T)  # (M, N): reductions over the short axis
    keys = np.ascontiguousarray(columns.T)  # (k, N): each edit reads one contiguous row
    for j in range(len(tokens)):
        token = int(tokens[j])
        change, outputs, lam = rank_one_change(
            memory, table[:, token], token, int(new_targets[j]), method, operation, margin,
            keys[j],
        )  # fmt: skip
        if not math.isfinite(lam):
            return
        with np.errstate(over="ignore", invalid="ignore"):  # the next λ says whether it went past
            for y, weight in enumerate(outputs.tolist()):  # the rank-one change, row by row
                table[y] += weight * change
        yield table, lam


def apply_edits(
    memory: EditableMemory,
    tokens: np.ndarray,
    new_targets: np.ndarray,
    columns: np.ndarray,
    *,
    method: str,
    operation: str,
    margin: float,
) -> tuple[np.ndarray, np.ndarray]:
    r"""The memory after all the edits of ``tokens``, one after the other.

    Parameters
    ----------
    memory : EditableMemory
        The memory before the edits (not modified).
    tokens, new_targets : numpy.ndarray of int, shape (k,)
        Distinct tokens in the order edited, and their new targets (unused by erasures).
    columns : numpy.ndarray, shape (N, k)
        :func:`key_columns` of ``tokens`` (with ``covariance`` for ``rome_cov``).
    method : {"replace", "rome", "rome_cov"}
    operation : {"edit", "erase"}
    margin : float
        The ROME margin m, in score units.

    Returns
    -------
    (numpy.ndarray, numpy.ndarray)
        The scores :math:`u_y^\top (W + \sum \Delta W) e_x`, shape (N, M), and each edit's λ, shape
        (k,), or (j,) where edit j + 1's λ is not finite and the edits stop there
        (:func:`edit_steps`).
    """
    final, lambdas = np.ascontiguousarray(memory.scores.T), []
    steps = edit_steps(
        memory, tokens, new_targets, columns, method=method, operation=operation, margin=margin
    )
    for table, lam in steps:
        final = table
        lambdas.append(lam)
    return final.T.copy(), np.array(lambdas)

"""Measuring a sequence of edits (:mod:`assocmem.studies.editing.edits`): success, the exact
p-weighted error of the other tokens before and after, which of them break by decade of
frequency rank, and the edit capacity (docs: beyond/editing.md)."""

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from assocmem.ops.population import correct_columns
from assocmem.studies.editing.edits import EditableMemory, edit_steps


def rank_bins(n_inputs: int) -> list[tuple[int, int]]:
    """Decades of frequency rank, ``[(1, 10), (11, 100), …]`` up to N (1-based, inclusive)."""
    bins, low = [], 1
    while low <= n_inputs:
        bins.append((low, min(10 * (low - 1) if low > 1 else 10, n_inputs)))
        low = bins[-1][1] + 1
    return bins


@dataclass(frozen=True)
class EditPoint:
    r"""The memory after the first k edits of a sequence.

    Attributes
    ----------
    k : int
    success : float
        Edits: the fraction of the k edited tokens that answer their new target (strict
        argmax). Erasures: the fraction that still answer their old target.
    balanced_success : float
        The same fraction averaged over the edited tokens' old targets (classes) with equal
        weights: the rate for a token of a uniformly random class, without the spread of the
        classes' mix among the k tokens (a class whose scores vary more wins more often).
    error_before, error_after : float
        The exact p-weighted error over the *other* tokens (those not among the k edited),
        :math:`\sum p(x) \mathbb{1}\{\mathrm{wrong}\} / \sum p(x)`, before any edit and now (same
        embeddings).
    correct_before, breaks, fixes : tuple of int
        Per decade of frequency rank (:func:`rank_bins`): the other tokens answered correctly
        before; of those, the ones now wrong; of the others wrong before, the ones now right.
    mean_lambda : float
        The mean value λ of the k edits (``replace``: the mean q(x)).
    """

    k: int
    success: float
    balanced_success: float
    error_before: float
    error_after: float
    correct_before: tuple[int, ...]
    breaks: tuple[int, ...]
    fixes: tuple[int, ...]
    mean_lambda: float


@dataclass(frozen=True)
class EditSequence:
    """One method's sequence of edits (or erasures): its checkpoints, its error curve and its
    edit capacity.

    Attributes
    ----------
    points : tuple of EditPoint
        At each checkpoint k reached.
    curve : tuple of (int, float, float)
        ``(k, error_before, error_after)`` of the other tokens at each curve point k (searched
        sequences only).
    capacity : int or None
        The first k at which the error over the other tokens exceeds ``(1 + rise)`` times its
        value before the edits, or the first edit that cannot be made (its λ past float64's
        range: the sequence stops there); None if not within ``searched`` edits.
    searched : int
        The number of edits tried for the capacity (0: not searched), the last one included
        where the sequence stopped at an edit that cannot be made.
    """

    points: tuple[EditPoint, ...]
    curve: tuple[tuple[int, float, float], ...]
    capacity: int | None
    searched: int


def _per_bin(mask: np.ndarray, bins: Sequence[tuple[int, int]]) -> tuple[int, ...]:
    return tuple(int(mask[low - 1 : high].sum()) for low, high in bins)


def _balanced(kept: np.ndarray, edited: np.ndarray, targets: np.ndarray) -> float:
    """The mean of ``kept`` over the edited tokens of each class, averaged over classes."""
    classes = targets[edited]
    shares = [kept[edited][classes == c].mean() for c in np.unique(classes)]
    return float(np.mean(shares))


def curve_points(max_edits: int, count: int = 40) -> tuple[int, ...]:
    """About ``count`` log-spaced numbers of edits from 1 to ``max_edits`` (distinct ints)."""
    grid = np.unique(np.round(np.geomspace(1, max_edits, count)).astype(int))
    return tuple(int(k) for k in grid)


def run_sequence(
    memory: EditableMemory,
    tokens: np.ndarray,
    new_targets: np.ndarray,
    columns: np.ndarray,
    *,
    method: str,
    operation: str,
    margin: float,
    checkpoints: Sequence[int],
    rise: float = 0.1,
    search: bool = False,
) -> EditSequence:
    """Apply edits (or erasures) of ``tokens`` one after the other and measure.

    Parameters
    ----------
    memory : EditableMemory
        The memory before the edits (not modified).
    tokens, new_targets : numpy.ndarray of int, shape (k,)
        Distinct tokens in the order edited, and their new targets (unused by erasures).
    columns : numpy.ndarray, shape (N, k)
        :func:`key_columns` of ``tokens`` (``covariance`` for ``rome_cov`` only).
    method : {"replace", "rome", "rome_cov"}
    operation : {"edit", "erase"}
    margin : float
        The ROME margin m, in score units.
    checkpoints : sequence of int
        The k at which an :class:`EditPoint` is recorded (those ≤ len(tokens)).
    rise : float, default 0.1
        The relative rise of the other tokens' error that defines the edit capacity.
    search : bool, default False
        Apply all the tokens' edits: the error of the other tokens after every edit until it
        rises by ``rise`` (the capacity), and at the :func:`curve_points` up to len(tokens).

    Returns
    -------
    EditSequence
    """
    targets, probs = memory.targets, memory.probs
    flat = targets * len(targets) + np.arange(len(targets))
    base = correct_columns(memory.scores.T, targets, flat)
    edited = np.zeros(len(targets), dtype=bool)
    wanted = targets.copy()  # the answers the edits ask for
    others = probs.copy()  # p(x) of the tokens not edited yet, 0 for the edited
    bins = rank_bins(len(targets))
    marks = {k for k in checkpoints if k <= len(tokens)}
    grid = set(curve_points(len(tokens))) if search else set()
    last = len(tokens) if search else max(marks, default=0)
    points, curve, capacity, lambdas = [], [], None, []
    steps = edit_steps(
        memory, tokens[:last], new_targets[:last], columns[:, :last], method=method,
        operation=operation, margin=margin,
    )  # fmt: skip
    for j, (table, lam) in enumerate(steps):
        token, k = int(tokens[j]), j + 1
        edited[token], wanted[token], others[token] = True, new_targets[j], 0.0
        lambdas.append(lam)
        if k not in marks and k not in grid and (not search or capacity is not None):
            continue
        now = correct_columns(table, targets, flat)
        mass = float(others.sum())
        before, after = float(others @ ~base) / mass, float(others @ ~now) / mass
        if search and capacity is None and after > (1 + rise) * before:
            capacity = k
        if k in grid:
            curve.append((k, before, after))
        if k in marks:
            kept = correct_columns(table, wanted) if operation == "edit" else now
            points.append(
                EditPoint(
                    k=k,
                    success=float(kept[edited].mean()),
                    balanced_success=_balanced(kept, edited, targets),
                    error_before=before,
                    error_after=after,
                    correct_before=_per_bin(base & ~edited, bins),
                    breaks=_per_bin(base & ~now & ~edited, bins),
                    fixes=_per_bin(~base & now & ~edited, bins),
                    mean_lambda=float(np.mean(lambdas)),
                )
            )
    if search and len(lambdas) < last:  # edit len(lambdas) + 1 cannot be made (edit_steps)
        last = len(lambdas) + 1
        capacity = last if capacity is None else capacity
    return EditSequence(tuple(points), tuple(curve), capacity, last if search else 0)

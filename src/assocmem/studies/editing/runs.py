"""The editing study's runs: one memory (closed-form or trained) at one d, edited by every method.

A run (:class:`EditingConfig`, one trial) draws its memory from the trial's named streams, draws
the edits (a random order of all N tokens and a new target for each, from the ``edits``
stream: the same for every method, memory and d of a trial, so comparisons are paired), and
runs, for each method and for edits and erasures (:mod:`assocmem.studies.editing.edits`):

- the ``all`` sequence: tokens in that random order, measured at the checkpoints k; for ROME
  edits continued to ``max_edits`` edits, and the edit capacity found (the first k at which the
  error over the other tokens rises by ``rise``). The replacement conserves the interference
  (docs: beyond/editing.md): its error only fluctuates, so it is not searched;
- one sequence of ``band_edits`` tokens per decade of frequency rank (1–10, 11–100, …), the
  first tokens of the same order that fall in it: success and damage against the edited
  tokens' frequency.

Closed-form memories use the streams of the closed-form kernel (Gaussian E, spherical U,
float64, per-d normalisation), so a run's memory is the memory of ``run_closed_form`` with
``nested = "renormalize"`` and ``dtype = "float64"``. Trained memories are the matrix model
under the paper's sign-like Adam (one pass over T fresh samples, batch B, W from N(0, 1/d),
Gaussian E and spherical U), edited through the logits of their trained state.
"""

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from assocmem import rng
from assocmem.config.checks import int_at_least, ints_at_least, positive_number
from assocmem.config.errors import ConfigError
from assocmem.config.memory import DEFAULT_MEMORY_GB, check_budget
from assocmem.config.problem import document_problem, problem_field
from assocmem.embeddings import nested_row_scales, standard_coordinates
from assocmem.laws.tokens import mod_targets, zipf_probabilities
from assocmem.ops.population import correct
from assocmem.runtime import intra_op_threads
from assocmem.schemes import parse_scheme
from assocmem.studies.editing.edits import (
    METHODS,
    OPERATIONS,
    EditableMemory,
    closed_form_memory,
    key_columns,
)
from assocmem.studies.editing.sequence import EditSequence, rank_bins, run_sequence

if TYPE_CHECKING:
    from assocmem.training import TrainConfig

TRAINED = "trained"  # the memory trained by the paper's sign-like Adam; any other: a scheme q
TRAINED_ONLY = ("lr", "batch_size", "n_samples")  # at their defaults in closed-form configs


@document_problem()
@dataclass(frozen=True)
class EditingConfig:
    r"""One editing run's settings (a trial index makes it a run).

    The Attributes begin with the problem fields ``n_inputs``, ``n_outputs`` and ``alpha``,
    documented once by :class:`~assocmem.config.problem.Problem`.

    Attributes
    ----------
    memory : str
        ``"trained"``, or the weighting q of a closed-form memory ``W_q``: a scheme spec
        (``"threshold:P=d/8"``, ``"population"``; :mod:`assocmem.schemes`).
    dim : int
        d.
    margin : float
        μ: a ROME edit makes the new target win by :math:`m = \mu \sigma`, σ the memory's score
        noise (:meth:`EditableMemory.noise`).
    covariance_reg : float
        ``reg`` of the key covariance
        :math:`\sum p e e^\top + \mathrm{reg} \cdot \operatorname{tr}/d \cdot I` (``rome_cov``).
    checkpoints : tuple of int
        The numbers of edits k measured.
    max_edits : int
        The longest capacity search (at most N − 1 edits: one token stays unedited).
    rise : float
        The relative rise of the other tokens' error that defines the edit capacity.
    band_edits : int
        Edits per decade of frequency rank.
    lr, batch_size, n_samples : float, int, int
        The trained memory's sign-like Adam (paper lr scaling: W moves by lr/d), B and T.
    seed : int
    device, memory_gb : operational (no effect on the numbers).
    """

    memory: str = "threshold:P=d/8"
    n_inputs: int = problem_field("n_inputs")
    n_outputs: int = problem_field("n_outputs")
    alpha: float = problem_field("alpha")
    dim: int = 64
    margin: float = 1.0
    covariance_reg: float = 0.01
    checkpoints: tuple[int, ...] = (1, 2, 4, 8, 16, 32, 64)
    max_edits: int = 512
    rise: float = 0.1
    band_edits: int = 8
    lr: float = 10.0
    batch_size: int = 256
    n_samples: int = 10240
    seed: int = 0
    device: str = "cpu"
    memory_gb: float = DEFAULT_MEMORY_GB

    @property
    def methods(self) -> tuple[str, ...]:
        """The methods that apply: ``replace`` needs the weights q of a closed-form memory."""
        return METHODS[1:] if self.trained else METHODS

    @property
    def trained(self) -> bool:
        """Whether the memory is trained (else closed-form, ``W_q`` of the scheme ``memory``)."""
        return self.memory == TRAINED

    @property
    def searched_edits(self) -> int:
        """The length of the capacity search: ``max_edits``, but one token is left unedited."""
        return min(self.max_edits, self.n_inputs - 1)

    def working_bytes(self) -> int:
        """About the bytes one run holds at once (float64): E, the key columns of both key
        metrics, the key covariance or the N×N Gram, and the score tables."""
        n, d, m = self.n_inputs, self.dim, self.n_outputs
        edits = self.searched_edits + self.band_edits * len(rank_bins(n))
        inverse = d * d if d <= n else 2 * n * n
        return 8 * (n * d + 2 * n * edits + inverse + 8 * n * m + d * m)


def check_editing(cfg: EditingConfig) -> EditingConfig:
    """Raise a one-line :class:`ConfigError` naming the first invalid field; else ``cfg``."""
    if not isinstance(cfg.memory, str):
        raise ConfigError("memory", f'must be "trained" or a scheme spec, got {cfg.memory!r}')
    if not cfg.trained:
        try:
            parse_scheme(cfg.memory)
        except ConfigError as err:
            raise ConfigError("memory", f'"trained" or a scheme: {err.message}') from None
    for name, low in (("n_inputs", 10), ("n_outputs", 3), ("dim", 2), ("max_edits", 1)):
        int_at_least(name, getattr(cfg, name), low)
    for name in ("band_edits", "batch_size", "n_samples"):
        int_at_least(name, getattr(cfg, name), 1)
    int_at_least("seed", cfg.seed, 0)
    for name in ("alpha", "margin", "covariance_reg", "rise", "lr", "memory_gb"):
        positive_number(name, getattr(cfg, name))
    ints_at_least("checkpoints", cfg.checkpoints, 1)
    if max(cfg.checkpoints) > cfg.searched_edits:
        raise ConfigError("checkpoints", "must not exceed max_edits nor n_inputs − 1")
    if cfg.band_edits > min(10, cfg.n_inputs - 1):
        raise ConfigError("band_edits", "at most 10 (the first decade of ranks) and below n_inputs")
    if cfg.device not in ("cpu", "cuda"):  # accepted as every sweep's is: edits run on the CPU
        raise ConfigError("device", f"must be cpu or cuda, got {cfg.device!r}")
    if cfg.trained:  # its TrainConfig validates itself: refused here, not when the run starts
        train_config(cfg, 0)
    check_budget(cfg.working_bytes(), cfg.memory_gb, "one editing run", "lower dim or n_inputs")
    return cfg


def law(cfg: EditingConfig) -> tuple[np.ndarray, np.ndarray]:
    r"""p (Zipf, decreasing) and the targets :math:`f^*(x) = x \bmod M`, (N,) each."""
    probs = zipf_probabilities(cfg.n_inputs, cfg.alpha).double().numpy()
    return probs, mod_targets(cfg.n_inputs, cfg.n_outputs).numpy()


def scheme_weights(cfg: EditingConfig, probs: np.ndarray) -> np.ndarray:
    """q(x) of the closed-form scheme at the run's d (infinite data), (N,)."""
    scheme = parse_scheme(cfg.memory)
    weights = scheme.weights(torch.from_numpy(probs)[None], [cfg.dim])  # (1, 1, N)
    return weights[0, 0].double().numpy()


def drawn_embeddings(cfg: EditingConfig, trial: int) -> tuple[np.ndarray, np.ndarray]:
    """E (N, d) Gaussian and U (M, d) spherical, per-d normalised, from the closed-form
    kernel's ``embeddings`` and ``output_embeddings`` streams of this trial (float64)."""
    out = []
    for stream, rows, kind in (
        ("embeddings", cfg.n_inputs, "gaussian"),
        ("output_embeddings", cfg.n_outputs, "spherical"),
    ):
        gen = rng.generator(cfg.seed, stream, trial)
        coords = standard_coordinates(rows, cfg.dim, gen, dtype=torch.float64)  # (d, rows)
        scale = nested_row_scales(coords, [cfg.dim], kind, "renormalize")[0]
        out.append((coords * scale).T.numpy())
    return out[0], out[1]


def closed_form_trial_memory(cfg: EditingConfig, trial: int) -> EditableMemory:
    """The closed-form memory of one trial."""
    probs, targets = law(cfg)
    E, U = drawn_embeddings(cfg, trial)
    return closed_form_memory(probs, targets, scheme_weights(cfg, probs), E, U)


def train_config(cfg: EditingConfig, trial: int) -> "TrainConfig":
    """The training of a trial's memory: the paper's sign-like Adam, spherical U."""
    from assocmem.training import TrainConfig
    from assocmem.training.optimizers.adam import Adam

    return TrainConfig(
        n_inputs=cfg.n_inputs,
        n_outputs=cfg.n_outputs,
        alpha=cfg.alpha,
        dim=cfg.dim,
        n_samples=cfg.n_samples,
        batch_size=cfg.batch_size,
        optimizer=Adam(),  # betas (0, 0): the paper's sign-like Adam
        lr=cfg.lr,
        output_embedding="spherical",
        seed=rng.stream_seed(cfg.seed, "trained", trial) % 2**31,
    )


def trained_memories(cfg: EditingConfig, trials: Sequence[int]) -> list[EditableMemory]:
    """The trained memories of the trials (trained together; a run's numbers never depend on
    its companions), edited through their logits, E and U."""
    from assocmem.training import train

    configs = [train_config(cfg, trial) for trial in trials]
    probs, targets = law(cfg)
    memories = []
    for result in train(configs, return_state=True):
        state = result.state
        assert state is not None
        logits = state.logits().double().numpy()
        E, U = state.E.double().numpy(), state.U.double().numpy()
        memories.append(EditableMemory(E, U, logits, targets, probs))
    return memories


def edit_plan(cfg: EditingConfig, trial: int) -> tuple[np.ndarray, np.ndarray]:
    """The trial's order of all N tokens and a new target ≠ f*(x) for each, (N,) each."""
    gen = rng.generator(cfg.seed, "edits", trial)
    order = torch.randperm(cfg.n_inputs, generator=gen).numpy()
    shift = torch.randint(1, cfg.n_outputs, (cfg.n_inputs,), generator=gen).numpy()
    _, targets = law(cfg)
    return order, (targets[order] + shift) % cfg.n_outputs


def edit_memory(cfg: EditingConfig, memory: EditableMemory, trial: int) -> dict[str, Any]:
    """Every sequence of one trial's memory: the run's metrics document (JSON-ready)."""
    order, new = edit_plan(cfg, trial)
    n = cfg.n_inputs
    length = cfg.searched_edits
    sequences: list[tuple[str, np.ndarray]] = [("all", np.arange(length))]
    for low, high in rank_bins(n):
        inside = np.flatnonzero((order >= low - 1) & (order < high))[: cfg.band_edits]
        sequences.append((f"{low}-{high}", inside))
    used = np.unique(np.concatenate([positions for _, positions in sequences]))
    rows = {  # (k, N) per key metric: a sequence's columns are a view of a block of rows
        covariance: np.ascontiguousarray(
            key_columns(
                memory.E, memory.probs, order[used], covariance=covariance,
                reg=cfg.covariance_reg,
            ).T
        )
        for covariance in (False, True)
    }  # fmt: skip
    noise = memory.noise()
    out = []
    for method in cfg.methods:
        keys = rows[method == "rome_cov"]
        for operation in OPERATIONS:
            for band, positions in sequences:
                found = run_sequence(
                    memory,
                    order[positions],
                    new[positions],
                    keys[np.searchsorted(used, positions)].T,
                    method=method,
                    operation=operation,
                    margin=cfg.margin * noise,
                    checkpoints=cfg.checkpoints if band == "all" else [len(positions)],
                    rise=cfg.rise,
                    search=band == "all" and operation == "edit" and method != "replace",
                )
                out.append({"method": method, "operation": operation, "band": band} | record(found))
    base_error = float(memory.probs @ ~correct(memory.scores, memory.targets))
    return {"base_error": base_error, "noise": noise, "sequences": out}


def record(sequence: EditSequence) -> dict[str, Any]:
    """An :class:`EditSequence` as plain JSON values."""
    return {
        "capacity": sequence.capacity,
        "searched": sequence.searched,
        "points": [asdict(point) for point in sequence.points],
        "curve": [list(point) for point in sequence.curve],
    }


def run_editing(cfg: EditingConfig, trials: Sequence[int]) -> list[dict[str, Any]]:
    """Edit one memory per trial by every method: what the ``editing`` run kind stores.

    Parameters
    ----------
    cfg : EditingConfig
        The memory (closed-form scheme or trained), N, M, α, d and the edits' settings.
    trials : sequence of int
        Trial indices: each draws its memory and its edits from its own named streams, so a
        trial's numbers are the same alone or among others.

    Returns
    -------
    list of dict
        One JSON-ready document per trial, in order: ``base_error`` (the memory's population
        error), ``noise`` (σ, :meth:`EditableMemory.noise`) and ``sequences``, one per
        (method, operation, band) with its ``capacity``, ``searched``, ``points`` (the
        :class:`~assocmem.studies.editing.sequence.EditPoint` fields per checkpoint) and ``curve``.

    Raises
    ------
    ConfigError
        For an invalid config (one line naming the field).

    Notes
    -----
    Beyond Cabannes et al. (2024): rank-one edits of their memories; see the docs:
    beyond/editing.md.
    """
    check_editing(cfg)
    if cfg.trained:
        memories = trained_memories(cfg, trials)
    with intra_op_threads(1):  # small products: one thread is fastest, and spins on no core
        if not cfg.trained:
            memories = [closed_form_trial_memory(cfg, trial) for trial in trials]
        return [edit_memory(cfg, memory, t) for memory, t in zip(memories, trials, strict=True)]

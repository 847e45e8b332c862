"""How a training run trains: the fields of a training configuration besides the problem's and
the optimiser's hyper-parameters, declared once with their documentation (torch-free).

:class:`TrainingRun` declares each field's name, type, default and, in its metadata, its
documentation (``doc``, also its command-line help) and how ``assocmem train`` spells it
(``flag``; a grid axis's ``key`` is its plural spelling in TOML specs and on the command line:
``dim`` → ``--dims``). :class:`~assocmem.training.config.TrainConfig` declares these fields
with :func:`run_field` (same names, order and defaults: records and run hashes are unchanged),
and ``assocmem train`` derives a flag from each (:mod:`assocmem.cli.fields`) without importing
torch, so a new run field is one declaration here and one line in the configuration.
"""

from dataclasses import Field, dataclass, fields
from typing import Any

from assocmem.config.problem import described, redeclared

MODELS = ("matrix", "learned", "relu", "qupdate")
INITS = ("zero", "gaussian")
LR_SCALINGS = ("paper", "none")
SCHEDULES = ("constant", "step")
OPTIMIZERS = "assocmem.training.optimizers:OPTIMIZERS"  # the registry, read when checked


@dataclass(frozen=True)
class TrainingRun:
    """How one training run trains, at the defaults of the authors' grid (Cabannes et al.
    2024, §4–5).

    The one declaration of these fields (the Parameters of
    :class:`~assocmem.training.config.TrainConfig` describe them at length). ``optimizer`` is
    declared here by its name, for the command line; the configuration holds the optimiser
    itself, a frozen entry of the registry with its hyper-parameters
    (:mod:`assocmem.config.hyper`).
    """

    model: str = described(
        "matrix",
        "models (matrix: learn W; learned: W, E and U; relu: ReLU embeddings; qupdate: the "
        "Eq. 16 update)",
        key="models",
        choices=MODELS,
        metavar="MODEL",
    )
    optimizer: str = described(
        "sgd", "registered optimisers", key="optimizers", choices=OPTIMIZERS, metavar="OPT"
    )
    dim: int = described(100, "dimensions d", key="dims", metavar="D", low=1)
    n_samples: int = described(
        10240, "sample sizes T, fresh samples seen once", key="n_samples", metavar="T", low=1
    )
    batch_size: int = described(64, "batch sizes B", key="batch_sizes", metavar="B", low=1)
    lr: float = described(1.0, "learning rates", key="lrs", metavar="LR")
    seed: int = described(
        0, "number of seeds k: seeds 0..k-1", key="seeds", single=True, low=1, shown=1
    )
    layer_norm: bool = described(
        False,
        "L2-normalise W e_x (or ReLU(e_x))",
        key="layer_norm",
        choices=("off", "on"),
        shown="off",
    )
    full_batch: bool = described(False, "population-gradient training", shown=None)
    n_steps: int = described(0, "steps of full-batch training", low=1, shown=None)
    init: str = described(
        "gaussian", "the initial W (gaussian: N(0, 1/d) entries)", choices=INITS, metavar="INIT"
    )
    lr_scaling: str = described(
        "paper",
        "the learning-rate convention (paper: Adam moves W by lr/d, embeddings by lr/√d)",
        choices=LR_SCALINGS,
        metavar="RULE",
    )
    schedule: str = described("constant", "the lr schedule", choices=SCHEDULES, metavar="SCHEDULE")
    decay_steps: tuple[int, ...] = described(
        (), "steps at which the step schedule decays", low=0, shown=None
    )
    decay_factor: float = described(0.1, "multiplier at each decay step")
    eval_every: int = described(
        0, "record the error every k steps (JSON output; 0: at the end only)", low=0
    )
    snapshot_steps: tuple[int, ...] = described(
        (), "record softmax scores after these steps", low=0, shown=None
    )
    device: str = described("cpu", "cpu, cuda or cuda:K")


def run_fields() -> dict[str, Field[Any]]:
    """The fields of :class:`TrainingRun` by name (read when called: a test may extend it)."""
    return {item.name: item for item in fields(TrainingRun)}


def run_field(name: str) -> Any:
    """The declaration of the run field ``name`` for a configuration, at its default:
    ``dim: int = run_field("dim")``.

    Raises
    ------
    KeyError
        If ``name`` is no field of :class:`TrainingRun`.
    """
    return redeclared(run_fields()[name])

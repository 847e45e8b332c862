"""How a closed-form experiment runs: the fields of a closed-form configuration besides the
problem's, declared once with their documentation (torch-free).

:class:`ClosedFormRun` declares each field's name, type, default and, in its metadata, its
documentation (``doc``, also its command-line help) and how ``assocmem closed-form`` spells it
(``flag``). :class:`~assocmem.closed_form.config.ClosedFormConfig` declares these fields with
:func:`run_field` (same names, order and defaults: records and run hashes are unchanged), and
``assocmem closed-form`` derives a flag from each (:mod:`assocmem.cli.fields`) without importing
torch, so a new field is one declaration here and one line in the configuration.
"""

from dataclasses import Field, dataclass, fields
from typing import Any

from assocmem.config.memory import DEFAULT_MEMORY_GB
from assocmem.config.problem import described, redeclared

NESTED_CONVENTIONS = ("truncate", "renormalize")  # how nested d is drawn (assocmem.embeddings)
DTYPE_NAMES = ("float32", "float64")  # the working precisions
COUNTS = ("tokens", "multinomial")  # how finite-T counts are drawn
LABEL_RULES = ("soft", "majority")  # what a memory stores of a token's observed labels
GROUPINGS = ("random", "banded")  # how groups of similar tokens are formed (assocmem.laws.groups)
SAMPLERS = "assocmem.closed_form.cost:CHOICES"  # the samplers' registry and auto, read when checked


@dataclass(frozen=True)
class ClosedFormRun:
    """How a closed-form experiment runs, at the defaults of the paper's closed-form setup
    (Cabannes et al. 2024, Figures 1–4).

    The one declaration of these fields (the Parameters of
    :class:`~assocmem.closed_form.config.ClosedFormConfig` describe them at length). Each list
    (``schemes``, ``dims``, ``n_samples``) is an axis of the experiment: every scheme × d × T.
    """

    nested: str = described(
        "truncate", "nested-d convention", choices=NESTED_CONVENTIONS, metavar="RULE"
    )
    schemes: tuple[str, ...] = described(
        ("uniform", "population", "threshold:P=d/8"), "memory schemes, see below", metavar="SCHEME"
    )
    dims: tuple[int, ...] = described(
        (10, 20, 50, 100, 200, 500, 1000),
        "dimensions d, e.g. 10 100 1000 or log:10:1000:20",
        metavar="D",
        text=True,
    )
    n_samples: tuple[int | None, ...] = described(
        (None,),
        "sample sizes T, e.g. inf 10 100 or log:10:10000:4",
        metavar="T",
        text=True,
        shown="inf",
    )
    trials: int = described(10, "independent trials", low=1)
    seed: int = described(0, "base seed", low=0)
    device: str = described("cpu", "cpu, cuda or cuda:K")
    dtype: str = described("float32", "working precision", choices=DTYPE_NAMES)
    memory_gb: float = described(
        DEFAULT_MEMORY_GB,
        "refuse, before starting, work whose estimated memory exceeds GB; not part of any "
        "run's identity",
        metavar="GB",
        positive=True,
    )
    head_fraction: float = described(
        0.1, "the head: the ⌈fraction·N⌉ most probable tokens (head/tail split)", spec_only=True
    )
    readout: bool = described(False, "also softmax readout metrics", shown=None)
    sampler: str = described(
        "auto",
        "explicit (draw E), in_law (exact-in-law draws) or auto: by the cost model",
        choices=SAMPLERS,
        metavar="SAMPLER",
    )
    counts: str = described(
        "tokens",
        "finite-T counts: tokens (draw T samples) or multinomial (the count vector)",
        choices=COUNTS,
    )
    label_rule: str = described(
        "soft",
        "store each token's label law n(x,y)/n(x) (soft) or its majority label",
        choices=LABEL_RULES,
    )
    n_groups: int = described(1, "G groups of clustered embeddings / group targets", low=1)
    similarity: float = described(0.0, "ρ: correlation within a group (clustered)")
    grouping: str = described("random", "groups: random balanced or banded", choices=GROUPINGS)


def run_fields() -> dict[str, Field[Any]]:
    """The fields of :class:`ClosedFormRun` by name (read when called: a test may extend it)."""
    return {item.name: item for item in fields(ClosedFormRun)}


def run_field(name: str) -> Any:
    """The declaration of the closed-form run field ``name`` for a configuration, at its
    default: ``trials: int = run_field("trials")``.

    Raises
    ------
    KeyError
        If ``name`` is no field of :class:`ClosedFormRun`.
    """
    return redeclared(run_fields()[name])

r"""What is memorised: the fields every configuration shares, declared once with their meaning.

:class:`Problem` declares N, M, the token law, the target f*, the label noise and the
embeddings: each field's type, its default (the paper's closed-form setup) and, in the field's
metadata, its documentation (``doc``, also its command-line help) and how a command line spells
it (``flag``). The configurations take these declarations rather than repeating them:
:class:`~assocmem.closed_form.config.ClosedFormConfig` inherits :class:`Problem` (it takes the
whole problem), :class:`~assocmem.training.config.TrainConfig` and the study configurations
declare the fields they have with :func:`problem_field`, at their own defaults (a
:class:`Setup`), in their own order. Records and run hashes are unchanged: a field keeps its
name, its position and its default in every configuration.

This module imports nothing but the standard library, so the command line derives its flags from
it without importing torch.
"""

from collections.abc import Mapping
from dataclasses import MISSING, Field, dataclass, field, fields
from typing import Any

TARGETS = ("mod", "random", "group")  # the maps f* a configuration may take (see Problem.target)
EMBEDDING_KINDS = ("gaussian", "spherical", "orthogonal")  # the laws assocmem.embeddings draws
INPUT_EMBEDDING_KINDS = (*EMBEDDING_KINDS, "clustered")  # the laws of closed-form inputs e_x
TRAINED_EMBEDDING_KINDS = ("gaussian", "spherical")  # the laws the trainers take
DOC = "doc"  # field metadata: the field's documentation, one sentence (the CLI help)
FLAG = "flag"  # field metadata: how a command line spells it (see described)


def described(default: Any, doc: str, **flag: Any) -> Any:
    """A dataclass field at ``default`` with its documentation.

    Parameters
    ----------
    default : object
        The field's default (an immutable value).
    doc : str
        What the field says, one sentence: its documentation and its ``--help`` text.
    **flag
        How a command line spells it: ``short`` (e.g. ``"-N"``), ``metavar``, ``low`` (an
        integer's least value), ``choices`` (a tuple, or ``"module:attribute"`` naming them, read
        only when a value is checked), ``nargs``, ``path`` (the flag names a file to read).

    Returns
    -------
    dataclasses.Field
        The field, its metadata ``{"doc": doc, "flag": flag}``.
    """
    return field(default=default, metadata={DOC: doc, FLAG: dict(flag)})


def field_doc(item: Field[Any]) -> str:
    """The documentation of a field declared with :func:`described` ("" without one)."""
    return str(item.metadata.get(DOC, ""))


@dataclass(frozen=True)
class Problem:
    r"""What is memorised: N tokens of a law p, each to be mapped to one of M outputs by f*,
    through the input embeddings :math:`e_x` and the output embeddings :math:`u_y`.

    The one declaration of these fields (their documentation is the field metadata ``doc``,
    listed below). The defaults are the paper's closed-form setup (Figures 1–4); the training
    setup (Figures 5–8) has N = 100 and Gaussian output embeddings (:data:`TRAINING`). A
    configuration validates its fields (this declaration checks nothing).

    Parameters
    ----------
    n_inputs : int, default 1000
        N, the number of input tokens.
    n_outputs : int, default 5
        M, the number of outputs.
    alpha : float, default 2.0
        The Zipf exponent α of :math:`p(x) \propto (x+1)^{-\alpha}`.
    probabilities : tuple of float, optional
        A user-given law p (overrides ``alpha``; sets N).
    words : str, optional
        A language: p is the frequencies of its N most frequent words.
    target : {"mod", "random", "group"}, default "mod"
        :math:`f^*(x) = x \bmod M`, a seeded random balanced map, or shared within each group.
    label_noise : float, default 0.0
        ε: a sample's label is f*(x) with probability 1 − ε, else another output.
    embedding : str, default "gaussian"
        The law of the input embeddings :math:`e_x`.
    output_embedding : str, default "spherical"
        The law of the output embeddings :math:`u_y`.

    Notes
    -----
    Symbols of Cabannes et al. (2024); see the docs: science/model.md.
    """

    n_inputs: int = described(1000, "N, the number of input tokens", short="-N", low=1)
    n_outputs: int = described(5, "M, the number of outputs, at most N", short="-M", low=1)
    alpha: float = described(2.0, "the Zipf exponent α of p(x) ∝ (x+1)^-α")
    probabilities: tuple[float, ...] | None = described(
        None,
        "a user-given law p: a file of probabilities (overrides alpha; sets N)",
        metavar="FILE",
        path=True,
    )
    words: str | None = described(
        None, "p = the frequencies of the N most frequent words of LANG", metavar="LANG"
    )
    target: str = described(
        "mod",
        "f*(x) = x mod M, a seeded random balanced map, or shared within a group: g(x) mod M",
        choices=TARGETS,
    )
    label_noise: float = described(
        0.0, "ε: a sample's label is f*(x) w.p. 1-ε, else another output", metavar="EPS"
    )
    embedding: str = described(
        "gaussian",
        "the law of the input embeddings e_x",
        choices=INPUT_EMBEDDING_KINDS,
        metavar="KIND",
    )
    output_embedding: str = described(
        "spherical",
        "the law of the output embeddings u_y",
        choices=EMBEDDING_KINDS,
        metavar="KIND",
    )


def problem_fields() -> dict[str, Field[Any]]:
    """The fields of :class:`Problem` by name (read when called: a test may extend it)."""
    return {item.name: item for item in fields(Problem)}


@dataclass(frozen=True)
class Setup:
    """The problem fields a configuration has, and its defaults where they are not the
    :class:`Problem`'s.

    Attributes
    ----------
    names : tuple of str
        The fields of :class:`Problem` the configuration has (in :class:`Problem`'s order).
    defaults : mapping of str to object
        Its defaults that differ from the :class:`Problem`'s.
    flags : mapping of str to mapping
        Its command-line spelling where it differs from the declaration's (e.g. a least value).
    """

    names: tuple[str, ...]
    defaults: Mapping[str, Any] = field(default_factory=dict)
    flags: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    def flag(self, name: str) -> dict[str, Any]:
        """How a command line of this setup spells the problem field ``name``: the declaration's
        ``flag`` metadata, updated by :attr:`flags`."""
        return {**problem_fields()[name].metadata[FLAG], **self.flags.get(name, {})}

    def default(self, name: str) -> Any:
        """The configuration's default of the problem field ``name``."""
        return self.defaults.get(name, problem_fields()[name].default)


CLOSED_FORM = Setup(tuple(problem_fields()))
"""The closed-form setup: the whole problem at the :class:`Problem`'s defaults (N = 1000,
spherical output embeddings: Figures 1–4)."""

TRAINING = Setup(
    ("n_inputs", "n_outputs", "alpha", "words", "label_noise", "embedding", "output_embedding"),
    {"n_inputs": 100, "output_embedding": "gaussian"},
    {
        "n_outputs": {"low": 2},
        "embedding": {"choices": TRAINED_EMBEDDING_KINDS},
        "output_embedding": {"choices": TRAINED_EMBEDDING_KINDS},
    },
)
"""The training setup: N = 100, Gaussian output embeddings (Figures 5–8); f*(x) = x mod M."""


def problem_field(name: str, setup: Setup = CLOSED_FORM) -> Any:
    """The declaration of the problem field ``name`` (its documentation), at ``setup``'s default.

    For a configuration that declares some fields of :class:`Problem` itself:
    ``n_inputs: int = problem_field("n_inputs", TRAINING)``.

    Raises
    ------
    KeyError
        If ``name`` is no field of :class:`Problem`.
    """
    declared = problem_fields()[name]
    default = setup.default(name)
    if default is MISSING:  # pragma: no cover - every problem field has a default
        raise KeyError(name)
    return field(default=default, metadata=declared.metadata)

r"""What is memorised: the fields every configuration shares, declared once with their meaning.

:class:`Problem` declares N, M, the token law, the target f*, the label noise and the
embeddings: each field's type, its default (the paper's closed-form setup) and, in the field's
metadata, its documentation (``doc``, also its command-line help) and how a command line spells
it (``flag``). The configurations take these declarations rather than repeating them:
:class:`~assocmem.closed_form.config.ClosedFormConfig` inherits :class:`Problem` (it takes the
whole problem), :class:`~assocmem.training.config.TrainConfig` and the study configurations
declare the fields they have with :func:`problem_field`, at their own defaults (a
:class:`Setup`), in their own order. Their docstrings list these fields from here
(:func:`document_problem`, read by ``help()`` and the API reference alike). Records and run
hashes are unchanged: a field keeps its name, its position and its default in every
configuration.

This module imports nothing but the standard library, so the command line derives its flags from
it without importing torch.
"""

import re
import types
from collections.abc import Callable, Mapping
from dataclasses import MISSING, Field, dataclass, field, fields
from typing import Any, Union, get_args, get_origin

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
        only when a value is checked), ``nargs``, ``path`` (the flag names a file to read),
        ``key`` (the spec key and flag of a grid axis, ``"dims"`` for ``dim``; ``single``: it
        takes one value), ``shown`` (the default the help states, when not the field's),
        ``text`` (the flag passes its text on, for the configuration to parse: ``log:…``
        ranges, ``inf``), ``positive`` (a number > 0), ``spec_only`` (no flag: set in a spec).

    Returns
    -------
    dataclasses.Field
        The field, its metadata ``{"doc": doc, "flag": flag}``.
    """
    return field(default=default, metadata={DOC: doc, FLAG: dict(flag)})


def redeclared(item: Field[Any]) -> Any:
    """The declared field ``item`` as a configuration takes it: same default, same metadata
    (its documentation and spelling), e.g. ``trials: int = redeclared(declared["trials"])``."""
    return field(default=item.default, metadata=item.metadata)


def value_type(annotation: Any) -> tuple[Any, bool]:
    """The type of one value of a field annotated ``annotation`` (``X | None`` as ``X``) and
    whether the field is a tuple of them (a list in a spec, one or more values on a command
    line): ``tuple[int, ...]`` → ``(int, True)``."""
    if isinstance(annotation, types.UnionType) or get_origin(annotation) is Union:
        annotation = next(a for a in get_args(annotation) if a is not type(None))
    if get_origin(annotation) is tuple:
        return get_args(annotation)[0], True
    return annotation, False


def field_doc(item: Field[Any]) -> str:
    """The documentation of a field declared with :func:`described` ("" without one)."""
    return str(item.metadata.get(DOC, ""))


@dataclass(frozen=True)
class Problem:
    r"""What is memorised: N tokens of a law p, each to be mapped to one of M outputs by f*,
    through the input embeddings :math:`e_x` and the output embeddings :math:`u_y`.

    The one declaration of these fields: their documentation is the field metadata ``doc``, from
    which :func:`document_problem` writes the Parameters below (and those of every
    configuration that has these fields). The defaults are the paper's closed-form setup
    (Figures 1–4); the training setup (Figures 5–8) has N = 100 and Gaussian output embeddings
    (:data:`TRAINING`). A configuration validates its fields (this declaration checks nothing).

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


@dataclass(frozen=True)
class LawSpelling:
    """The token law in one word, as a command line or a spec may give it instead of ``alpha``
    and ``words`` (read by :func:`assocmem.laws.words.parse_distribution`)."""

    distribution: str | None = described(
        None, "token law: zipf, zipf:ALPHA or words:LANG", metavar="LAW", shown="zipf at --alpha"
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


DOCUMENTED = "__problem_documented__"  # set on a class whose docstring lists its problem fields
_SECTION = re.compile(r"^(?P<indent>[ \t]*)(?:Parameters|Attributes)\n(?P=indent)-{3,}\n", re.M)
_NEXT_SECTION = re.compile(r"^(?P<indent>[ \t]*)\w+\n(?P=indent)-{3,}\n", re.M)


def problem_entries(cls: type, setup: Setup = CLOSED_FORM) -> list[str]:
    """The numpy docstring entries of the problem fields the dataclass ``cls`` has, in its order,
    each at its default and its ``setup``'s choices, described by the field's documentation.

    Returns
    -------
    list of str
        One entry per problem field with a documentation: ``"name : type, default X"`` and its
        description on the next line, indented by four spaces.
    """
    declared = problem_fields()
    entries = []
    for item in fields(cls):
        if item.name not in declared or not field_doc(item):
            continue  # a field with no documentation gets no entry (the docs test sees it)
        doc = field_doc(item)
        choices = setup.flag(item.name).get("choices")
        if isinstance(choices, tuple) and item.default in choices:  # numpydoc: the default first
            choices = (item.default, *(choice for choice in choices if choice != item.default))
        kind = _kind(declared[item.name].type, choices)
        default = ", optional" if item.default is None else f", default {_shown(item.default)}"
        entries.append(f"{item.name} : {kind}{default}\n    {_sentence(doc)}")
    return entries


def _kind(annotation: Any, choices: Any) -> str:
    """A field's type as numpy docstrings write it: ``{"a", "b"}``, ``int``, ``tuple of float``."""
    if isinstance(choices, tuple):
        return "{" + ", ".join(_shown(choice) for choice in choices) + "}"
    args = [arg for arg in get_args(annotation) if arg is not type(None)]
    if get_origin(annotation) is tuple:
        return f"tuple of {_kind(args[0], None)}"
    if args:  # X | None
        return _kind(args[0], None)
    return getattr(annotation, "__name__", str(annotation))


def _sentence(doc: str) -> str:
    """``doc`` as a sentence: a leading lowercase word capitalised (not a symbol: "p = …")."""
    return re.sub(r"^[a-z]+ (?!=)", lambda word: word[0].capitalize(), doc) + "."


def _shown(value: Any) -> str:
    return f'"{value}"' if isinstance(value, str) else repr(value)


def document_problem(setup: Setup = CLOSED_FORM) -> Callable[[type], type]:
    """A class decorator (above ``@dataclass``): the docstring's Parameters (or Attributes)
    section begins with the entries of the class's problem fields (:func:`problem_entries`),
    written once, by :class:`Problem`, so ``help()`` and the API reference (the griffe hook
    docs/hooks/griffe_docstrings.py reads the class's ``__doc__``) show them.

    A docstring without such a section gets a Parameters section before its next one.
    """

    def document(cls: type) -> type:
        entries = problem_entries(cls, setup)
        text = cls.__doc__ or ""
        section = _SECTION.search(text)
        if section is not None:
            at, indent, header = section.end(), section["indent"], ""
        else:
            following = _NEXT_SECTION.search(text)
            at = following.start() if following else len(text)
            indent = following["indent"] if following else "    "
            header = f"{indent}Parameters\n{indent}----------\n"
        lines = "\n".join(entries).split("\n")
        body = "".join(f"{indent}{line}\n" for line in lines)
        cls.__doc__ = text[:at] + header + body + ("\n" if header else "") + text[at:]
        setattr(cls, DOCUMENTED, True)
        return cls

    return document


document_problem()(Problem)

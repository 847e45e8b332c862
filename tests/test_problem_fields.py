"""What is memorised is declared once (issue #34, criterion 3): N, M, the token law, the target,
the label noise and the embeddings are the fields of :class:`assocmem.config.problem.Problem`,
with their documentation; every configuration that has one takes its declaration from there, at
its setup's default. (Records and run hashes are unchanged: tests/test_sweep_kinds.py resumes a
database written before.)"""

import dataclasses
import inspect

import pytest

from assocmem.closed_form.config import ClosedFormConfig
from assocmem.config.problem import (
    CLOSED_FORM,
    DOC,
    DOCUMENTED,
    TRAINING,
    Problem,
    document_problem,
    field_doc,
    problem_field,
    problem_fields,
)
from assocmem.studies.editing.runs import EditingConfig
from assocmem.studies.hierarchy.memory import HierarchyConfig
from assocmem.studies.hierarchy.train import BottleneckConfig
from assocmem.studies.superposition.kind import SuperpositionConfig
from assocmem.studies.superposition.kind_train import HeadsTrainConfig
from assocmem.training.config import TrainConfig

CONFIGS = [
    ClosedFormConfig,
    TrainConfig,
    HierarchyConfig,
    BottleneckConfig,
    SuperpositionConfig,
    HeadsTrainConfig,
    EditingConfig,
]


def test_every_problem_field_is_documented():
    for name, item in problem_fields().items():
        assert len(field_doc(item)) > 10, name


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: c.__name__)
def test_a_configuration_takes_the_declaration_of_each_problem_field_it_has(config):
    """Same name, same documentation (the metadata of the one declaration)."""
    own = [f for f in dataclasses.fields(config) if f.name in problem_fields()]
    assert len(own) >= 3  # N, M and α at least
    for item in own:
        assert dict(item.metadata) == dict(problem_fields()[item.name].metadata), item.name
        assert item.metadata[DOC], item.name


def test_the_two_setups_differ_only_where_the_paper_does():
    """Closed form: the whole problem at Problem's defaults; training: its fields at its own."""
    assert issubclass(ClosedFormConfig, Problem)
    closed = ClosedFormConfig()
    for name in CLOSED_FORM.names:
        assert getattr(closed, name) == getattr(Problem(), name), name
    training = {f.name: f.default for f in dataclasses.fields(TrainConfig)}
    assert tuple(n for n in training if n in problem_fields()) == TRAINING.names
    assert {n: training[n] for n in TRAINING.names} == {
        n: TRAINING.default(n) for n in TRAINING.names
    }
    differ = {n for n in TRAINING.names if TRAINING.default(n) != CLOSED_FORM.default(n)}
    assert differ == {"n_inputs", "output_embedding"}
    assert (TrainConfig().n_inputs, TrainConfig().output_embedding) == (100, "gaussian")


def test_a_setup_default_keeps_the_documentation():
    @dataclasses.dataclass(frozen=True)
    class Small:
        n_inputs: int = problem_field("n_inputs", TRAINING)

    (item,) = dataclasses.fields(Small)
    assert Small().n_inputs == 100
    assert field_doc(item) == field_doc(problem_fields()["n_inputs"])
    with pytest.raises(KeyError):
        problem_field("not_a_field")


def test_a_config_docstring_lists_its_problem_fields_from_the_declaration():
    """``help()`` of a configuration shows its problem fields' documentation, written once by
    :class:`Problem` (#34): first in its Parameters, at its own defaults and setup's choices."""

    @document_problem(TRAINING)
    @dataclasses.dataclass(frozen=True)
    class Toy:
        """A toy.

        Parameters
        ----------
        own : int, default 3
            Its own field.
        """

        n_inputs: int = problem_field("n_inputs", TRAINING)
        own: int = 3
        embedding: str = problem_field("embedding", TRAINING)

    doc = inspect.cleandoc(Toy.__doc__ or "")
    listed = doc.split("----------\n")[1]
    assert listed.startswith(
        "n_inputs : int, default 100\n    N, the number of input tokens.\n"
        'embedding : {"gaussian", "spherical"}, default "gaussian"\n'
        "    The law of the input embeddings e_x.\n"
        "own : int, default 3\n"
    ), listed


def test_a_docstring_without_parameters_gets_them_before_its_next_section():
    @document_problem()
    @dataclasses.dataclass(frozen=True)
    class Toy:
        """A toy.

        Notes
        -----
        None.
        """

        alpha: float = problem_field("alpha")

    doc = inspect.cleandoc(Toy.__doc__ or "")
    assert "Parameters\n----------\nalpha : float, default 2.0\n" in doc
    assert doc.index("Parameters") < doc.index("Notes")


DOCUMENTED_CONFIGS = [Problem, ClosedFormConfig, TrainConfig, HierarchyConfig, BottleneckConfig]


@pytest.mark.parametrize("config", [*DOCUMENTED_CONFIGS, EditingConfig], ids=lambda c: c.__name__)
def test_a_config_documents_each_problem_field_once_from_the_declaration(config):
    """The Parameters (Attributes) of the configurations with a field section list each of
    their problem fields once, with the declaration's documentation (not a copy in the source:
    ``duplicates --change`` finds none)."""
    griffe = pytest.importorskip("griffe")
    parsed = griffe.Docstring(inspect.cleandoc(config.__doc__)).parse("numpy")
    listed = [
        entry.name
        for section in parsed
        if section.kind.value in ("parameters", "attributes")
        for entry in section.value
    ]
    own = [item for item in dataclasses.fields(config) if item.name in problem_fields()]
    for item in own:
        assert listed.count(item.name) == 1, (config.__name__, item.name, listed)
    assert config.__dict__.get(DOCUMENTED)

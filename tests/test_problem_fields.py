"""What is memorised is declared once (issue #34, criterion 3): N, M, the token law, the target,
the label noise and the embeddings are the fields of :class:`assocmem.config.problem.Problem`,
with their documentation; every configuration that has one takes its declaration from there, at
its setup's default. (Records and run hashes are unchanged: tests/test_sweep_kinds.py resumes a
database written before.)"""

import dataclasses

import pytest

from assocmem.closed_form.config import ClosedFormConfig
from assocmem.config.problem import (
    CLOSED_FORM,
    DOC,
    TRAINING,
    Problem,
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

"""Every shipped spec states N, M and the embeddings rather than relying on a default (issue #34).

The fields are read from :class:`assocmem.Problem`'s declaration: N and M (documented "N, …",
"M, …") and every embedding law ("… embeddings …"). A spec must set each of them that its
kind's config class declares, in ``[base]``, ``[axes]`` or ``[zip]`` (the tables a spec sets
fields in, :mod:`assocmem.sweep.spec`). A config without such a field (``facts_capacity``: N is
searched and M = N) has nothing to state.
"""

from dataclasses import fields
from pathlib import Path

import pytest

from assocmem.config.problem import field_doc, problem_fields
from assocmem.sweep.spec import load_spec, shipped_specs

STATED = tuple(
    name
    for name, item in problem_fields().items()
    if field_doc(item).startswith(("N,", "M,")) or "embeddings" in field_doc(item)
)


def test_stated_fields_are_n_m_and_the_embeddings() -> None:
    """The selection from the declaration finds N, M and both embedding laws (a reworded
    documentation that loses one fails here, not silently below)."""
    assert STATED == ("n_inputs", "n_outputs", "embedding", "output_embedding")


def unstated(path: Path) -> list[str]:
    """The fields of STATED that the config class of the spec at ``path``'s kind declares and
    the spec leaves to a default."""
    spec = load_spec(path)
    config = spec.run_kind.build(spec.point_values()[0])  # one point: the kind's config class
    declared = {item.name for item in fields(type(config))}
    given = {*spec.base, *spec.axes, *spec.zipped}
    return [field for field in STATED if field in declared and field not in given]


def test_every_shipped_spec_states_n_m_and_the_embeddings() -> None:
    specs = shipped_specs()
    missing = [f"{name}: {field}" for name, path in specs.items() for field in unstated(path)]
    assert not missing, "specs relying on a default: " + ", ".join(missing)


@pytest.mark.parametrize("field", STATED)
def test_a_spec_without_the_field_is_caught(field: str, tmp_path: Path) -> None:
    """The check can fail: figure4 with one stated field removed is reported."""
    text = shipped_specs()["figure4"].read_text()
    kept = [line for line in text.splitlines() if not line.startswith(f"{field} =")]
    assert len(kept) == len(text.splitlines()) - 1
    path = tmp_path / "figure4.toml"
    path.write_text("\n".join(kept) + "\n")
    assert unstated(path) == [field]

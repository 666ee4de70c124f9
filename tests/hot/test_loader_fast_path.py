"""The loader's two passes agree.

Most documents load in a fast pass that builds data only; the marking
builder runs for everything else, and for source marks the first time a
diagnostic asks for one. Whatever pass a document takes, its data, warnings
and marks must be the ones the marking builder gives.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from convection.common.diagnostics import Mark
from convection.common.errors import InvalidInput
from convection.common.limits import DEFAULT_LIMITS
from convection.hot import _yaml_scalars, loader
from convection.hot.loader import load

ROOT = Path(__file__).parents[2]
SOURCES = sorted([*(ROOT / "tests/fixtures").rglob("*.yaml"), *(ROOT / "examples").rglob("*.yaml")])


def marked(text: str) -> tuple[Any, dict[Any, tuple[int, int]], list[str]]:
    """Data, marks and warnings from the marking builder alone."""
    builder = loader._Builder("f.yaml", DEFAULT_LIMITS)
    data = builder.run(yaml.CSafeLoader(text))
    return data, builder.marks, [d.message for d in builder.diags.warnings]


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.name)
def test_fixtures_take_the_fast_pass_and_find_the_same_marks(path: Path) -> None:
    text = path.read_text()
    doc = load(text, "f.yaml")
    data, marks, warnings = marked(text)
    assert doc.source.marks == marks
    assert (doc.data, [w.message for w in doc.warnings]) == (data, warnings)


def test_marks_are_found_only_when_asked_for() -> None:
    doc = load("a:\n  b: [1, 2]\n", "f.yaml")
    assert "not read yet" in repr(doc.source)
    assert doc.source.mark(("a", "b", 1)) == Mark("f.yaml", 2, 10)
    assert "not read yet" not in repr(doc.source)


@pytest.mark.parametrize(
    "text",
    [
        "a: &x 1\nb: *x\n",  # anchors and aliases
        "base: &b {x: 1}\nuse:\n  <<: *b\n",  # merge keys
        "a: 1\na: 2\n",  # duplicate keys warn
        "off: 1\n",  # boolean keys warn
        "1: a\n",  # so does any key that is not a string
        "a: !!str 1\n",  # explicit tags
    ],
)
def test_documents_the_fast_pass_cannot_build_get_the_marking_builder(text: str) -> None:
    doc = load(text, "f.yaml")
    data, marks, warnings = marked(text)
    assert (doc.data, [w.message for w in doc.warnings]) == (data, warnings)
    assert doc.source.marks == marks


def test_json_finds_its_marks_in_yaml_when_asked() -> None:
    doc = load('{"a": {"b": [1, 2]}}', "f.json")
    assert doc.source.mark(("a", "b", 1)) == Mark("f.json", 1, 17)


def test_json_that_is_not_yaml_has_exact_data_and_no_marks() -> None:
    key = "k" * 1100  # YAML allows at most 1024 characters in an implicit key
    doc = load(f'{{"{key}": 1}}', "f.json")
    assert doc.data == {key: 1}
    assert doc.source.mark((key,)) is None


def test_the_shared_constructor_keeps_nothing_between_loads() -> None:
    for _ in range(3):
        load("a: 1\nb: 2.5\nc: true\nd: [0x10, 1:30]\n")
    assert not _yaml_scalars.SCALARS.constructed_objects


_TOKENS = [
    *"ab1-:,[]{}'\"#&*!|>",
    ": ",
    "- ",
    "\n",
    "\n  ",
    "  ",
    "&x ",
    "*x",
    "<<: ",
    "!!str ",
    "? ",
    "off",
    "null",
    "0x1f",
    "1:30",
    "2016-10-14",
]


@given(st.lists(st.sampled_from(_TOKENS), max_size=40).map("".join))
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_both_passes_build_the_same_document(text: str) -> None:
    try:
        doc = load(text, "f.yaml")
    except InvalidInput:
        return
    data, marks, warnings = marked(text)
    assert doc.data == (data if data is not None else {})
    assert [w.message for w in doc.warnings] == warnings
    assert doc.source.marks == marks

"""The loader: exact data as Heat sees it, and a place for every path."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from convection.common.diagnostics import Mark
from convection.common.errors import InvalidInput, LimitExceeded
from convection.common.limits import Limits
from convection.hot.loader import load

FIXTURES = Path(__file__).parents[1] / "fixtures"

TEMPLATE = """\
heat_template_version: 2016-10-14
description: a web server
resources:
  web:
    type: OS::Nova::Server
    properties:
      image: cirros
      networks:
        - port: {get_resource: port}
        - network: private
"""


def test_yaml_dates_stay_strings_as_in_heat() -> None:
    doc = load(TEMPLATE, "web.yaml")
    assert doc.data["heat_template_version"] == "2016-10-14"


def test_every_path_has_a_mark() -> None:
    doc = load(TEMPLATE, "web.yaml")
    assert doc.source.mark(("resources", "web", "properties", "image")) == Mark("web.yaml", 7, 7)
    assert doc.source.mark(("resources", "web", "properties", "networks", 1)) == Mark(
        "web.yaml", 10, 11
    )
    # A path a later phase invents falls back to its nearest ancestor.
    assert doc.source.mark(("resources", "web", "properties", "image", "x")) == Mark(
        "web.yaml", 7, 7
    )


class _HeatLoader(yaml.SafeLoader):
    """Heat's own loader: SafeLoader with timestamps kept as strings."""


_HeatLoader.add_constructor("tag:yaml.org,2002:timestamp", _HeatLoader.construct_yaml_str)


@pytest.mark.parametrize("path", sorted(FIXTURES.rglob("*.yaml")), ids=lambda p: p.name)
def test_fixtures_load_exactly_as_heats_loader(path: Path) -> None:
    text = path.read_text()
    assert load(text, str(path)).data == yaml.load(text, Loader=_HeatLoader)


def test_scalars_resolve_as_yaml_1_1() -> None:
    text = "a: [1, 2.5, null, yes, 'yes', ~, 0x1f, 1e3, .inf, true, On, 2020-01-01, 12:30]\n"
    assert load(text).data == yaml.load(text, Loader=_HeatLoader)
    assert load(text).data["a"][12] == 750  # YAML 1.1 sexagesimal, as Heat sees it


def test_non_string_keys_become_json_strings() -> None:
    doc = load("resources:\n  1: a\n  true: b\n  null: c\n  1.5: d\n")
    assert list(doc.data["resources"]) == ["1", "true", "null", "1.5"]


def test_duplicate_key_keeps_last_value_and_warns_with_both_places() -> None:
    doc = load("a:\n  x: 1\n  x: 2\n", "dup.yaml")
    assert doc.data == {"a": {"x": 2}}
    (warning,) = doc.warnings
    assert not warning.is_error
    assert warning.path == ("a", "x")
    assert warning.mark == Mark("dup.yaml", 3, 3)
    assert "dup.yaml:2:3" in warning.message


def test_json_is_parsed_as_json_with_marks() -> None:
    text = json.dumps(
        {"heat_template_version": "2015-10-15", "resources": {"r": {"type": "T"}}}, indent=2
    )
    doc = load(text, "t.json")
    assert doc.data["resources"]["r"]["type"] == "T"
    assert doc.source.mark(("resources", "r", "type")) is not None


def test_anchors_aliases_and_merge_keys() -> None:
    doc = load("base: &b {x: 1, y: 2}\nuse:\n  <<: *b\n  y: 3\nsame: *b\n")
    assert doc.data["use"] == {"x": 1, "y": 3}
    assert doc.data["same"] == {"x": 1, "y": 2}


@pytest.mark.parametrize(
    ("text", "where", "needle"),
    [
        ("a:\n\tb: 1\n", "f.yaml:2:1", "tab character"),
        ("- 1\n- 2\n", "f.yaml:1:1", "not a JSON object or YAML mapping"),
        ("a: [1, 2\n", "f.yaml:2:1", "Error parsing template f.yaml"),
        ("a: 1\n---\nb: 2\n", "f.yaml:2:1", "single document"),
        ("x: !!binary aGVsbG8=\n", "f.yaml:1:4", "unsupported YAML tag"),
        ("x: !custom 1\n", "f.yaml:1:4", "unsupported YAML tag"),
        ("x: *nowhere\n", "f.yaml:1:4", "unknown alias"),
        ("? [a, b]\n: 1\n", "f.yaml:1:3", "mapping keys must be scalars"),
    ],
)
def test_bad_documents_name_the_place(text: str, where: str, needle: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        load(text, "f.yaml")
    (diag,) = caught.value.diagnostics
    assert str(diag).startswith(where), str(diag)
    assert needle in diag.message


def test_empty_document_is_an_empty_mapping() -> None:
    assert load("").data == {}
    assert load("# only a comment\n").data == {}


def test_size_limit_is_enforced_before_parsing() -> None:
    with pytest.raises(LimitExceeded) as caught:
        load("a: " + "x" * 100, "big.yaml", limits=Limits(max_template_size=50))
    assert "exceeds maximum allowed size (50 bytes)" in str(caught.value)


def test_depth_limit_names_the_path() -> None:
    text = "a: " + "[" * 30 + "]" * 30
    with pytest.raises(LimitExceeded) as caught:
        load(text, "deep.yaml", limits=Limits(max_document_depth=10))
    (diag,) = caught.value.diagnostics
    assert diag.path[0] == "a"
    assert "deeper than 10" in diag.message


def test_deep_json_is_a_clean_error() -> None:
    with pytest.raises(LimitExceeded):
        load("[" * 100000 + "]" * 100000)


def _laughs(levels: int) -> str:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, levels):
        refs = ", ".join([f"*a{i - 1}"] * 10)
        lines.append(f"a{i}: &a{i} [{refs}]")
    return "\n".join(lines) + "\n"


def test_aliases_share_instead_of_expanding() -> None:
    doc = load(_laughs(4))
    assert doc.data["a3"][0] is doc.data["a2"]


def test_billion_laughs_is_refused() -> None:
    # Shared data is walked once per path to it by every later phase (parsing
    # functions, JSON for the store), so the expanded size is what counts.
    with pytest.raises(LimitExceeded) as caught:
        load(_laughs(10), "laughs.yaml")
    (diag,) = caught.value.diagnostics
    assert "aliases expand the document to more than" in diag.message
    assert str(diag.mark).startswith("laughs.yaml:")


def test_undecodable_bytes_are_a_clean_error() -> None:
    with pytest.raises(InvalidInput) as caught:
        load(b"a: \xff\xfe\n", "bin.yaml")
    assert "not UTF-8" in str(caught.value)


def test_yaml_boolean_keys_warn_because_they_surprise_people() -> None:
    doc = load("resources:\n  off: {type: T}\n  'on': {type: T}\n", "k.yaml")
    assert set(doc.data["resources"]) == {"false", "on"}
    (warning,) = doc.warnings
    assert "the key 'off' is read as the boolean false" in warning.message
    assert str(warning.mark) == "k.yaml:2:3"

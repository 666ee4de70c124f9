"""get_resource and get_attr whose resource name is computed add an edge, as
in Heat: GetResource.dependencies and GetAttThenSelect.dependencies
(heat/engine/hot/functions.py) resolve the name with ``function.resolve``
when the graph is built, and validation checks the resolved name."""

from __future__ import annotations

import textwrap

import pytest

from convection.common.errors import InvalidInput
from convection.model.compiler import Compiled, StackInputs, compile_stack
from convection.resources.registry import default_registry

CATALOG = default_registry().catalog(strict=False)
HEADER = "heat_template_version: 2021-04-16\n"


def compile_text(text: str, **params: str) -> Compiled:
    inputs = StackInputs.from_text(HEADER + textwrap.dedent(text), name="t.yaml", parameters=params)
    return compile_stack(inputs, catalog=CATALOG, strict=True)


def failures(text: str, **params: str) -> list[str]:
    with pytest.raises(InvalidInput) as caught:
        compile_text(text, **params)
    return [str(d) for d in caught.value.diagnostics if not d.upstream]


TWO = """
parameters:
  which: {type: string, default: a}
conditions:
  use_b: {equals: [{get_param: which}, b]}
resources:
  a: {type: OS::Heat::None}
  b: {type: OS::Heat::None}
"""


def test_get_resource_of_get_param_depends_on_the_named_resource() -> None:
    text = (
        TWO
        + "  r: {type: OS::Heat::Value, properties: {value: {get_resource: {get_param: which}}}}\n"
    )
    assert compile_text(text).definition.resources["r"].requires == ("a",)
    assert compile_text(text, which="b").definition.resources["r"].requires == ("b",)
    assert compile_text(text, which="b").graph.requires("r") == ("b",)


def test_get_attr_of_a_computed_name_depends_on_it() -> None:
    text = TWO + (
        "  r:\n    type: OS::Heat::Value\n"
        "    properties: {value: {get_attr: [{list_join: ['', [{get_param: which}]]}, show]}}\n"
    )
    assert compile_text(text, which="b").definition.resources["r"].requires == ("b",)


def test_a_name_chosen_by_if_depends_on_the_branch_taken() -> None:
    text = TWO + (
        "  r:\n    type: OS::Heat::Value\n"
        "    properties: {value: {get_resource: {if: [use_b, b, a]}}}\n"
    )
    assert compile_text(text).definition.resources["r"].requires == ("a",)
    assert compile_text(text, which="b").definition.resources["r"].requires == ("b",)


def test_a_computed_name_in_metadata_and_nested_calls_counts() -> None:
    text = TWO + (
        "  r:\n    type: OS::Heat::None\n"
        "    metadata: {m: {str_replace: {template: x, params: {x: {get_resource: "
        "{get_param: which}}}}}}\n"
    )
    assert compile_text(text, which="b").definition.resources["r"].requires == ("b",)


def test_a_computed_name_that_is_no_resource_is_heats_reference_error() -> None:
    text = (
        TWO
        + "  r: {type: OS::Heat::Value, properties: {value: {get_resource: {get_param: which}}}}\n"
    )
    found = failures(text, which="nope")
    assert len(found) == 1, found
    assert found[0].startswith("t.yaml:"), found
    assert 'The specified reference "nope" (in r.Properties.value) is incorrect.' in found[0]


def test_a_computed_attribute_name_is_checked_against_the_type() -> None:
    text = TWO + (
        "  v: {type: OS::Heat::Value, properties: {value: 1}}\n"
        "  r:\n    type: OS::Heat::Value\n"
        "    properties: {value: {get_attr: [{get_param: which}, {get_param: which}]}}\n"
    )
    found = failures(text, which="v")
    assert any("The Referenced Attribute (v v) is incorrect." in f for f in found), found


def test_a_computed_self_reference_is_a_cycle() -> None:
    text = (
        TWO
        + "  r: {type: OS::Heat::Value, properties: {value: {get_resource: {get_param: which}}}}\n"
    )
    found = failures(text, which="r")
    assert any("ircular" in f for f in found), found


def test_a_name_that_needs_a_resource_adds_only_the_inner_edge() -> None:
    text = TWO + (
        "  v: {type: OS::Heat::Value, properties: {value: a}}\n"
        "  r:\n    type: OS::Heat::Value\n"
        "    properties: {value: {get_resource: {get_attr: [v, value]}}}\n"
    )
    assert compile_text(text).definition.resources["r"].requires == ("v",)

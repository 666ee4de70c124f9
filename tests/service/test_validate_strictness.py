"""Template validate against create, at the service level: what Heat's
template-validate (``strict_validate`` off, ``validate_res_tmpl_only``)
leaves to create is a located warning at validate and an error at create;
what it checks is an error at both. The heatclient view of the same rules
is ``tests/api/test_conformance_validate_strict.py``."""

from __future__ import annotations

from typing import Any

import pytest

from convection.common import InvalidInput, Severity
from convection.model import StackInputs, compile_stack
from convection.resources import default_registry
from convection.resources.heat.autoscaling import AutoScalingGroup
from convection.resources.heat.random_string import RandomString
from convection.resources.heat.resource_group import ResourceGroup
from convection.service import validate_template

P = ("resources", "r", "properties")

LEFT_TO_CREATE = [
    pytest.param(
        """\
  r:
    type: OS::Heat::RandomString
    properties:
      character_classes: [{class: letters, wibble: 1}]
""",
        "resources.r.properties.character_classes[0].wibble",
        "Unknown Property wibble",
        id="a-name-in-a-nested-map",
    ),
    pytest.param(
        """\
  r:
    type: OS::Heat::ResourceGroup
    properties:
      resource_def: {type: OS::Heat::None, wibble: 1}
""",
        "resources.r.properties.resource_def.wibble",
        "Unknown Property wibble",
        id="a-name-in-a-group-s-resource_def",
    ),
    pytest.param(
        """\
  r:
    type: OS::Heat::RandomString
    properties:
      length: 2
      character_classes: [{class: letters, min: 3}]
""",
        "resources.r.properties.length",
        "Length property cannot be smaller than combined character class",
        id="random-string-length-rule",
    ),
    pytest.param(
        """\
  r:
    type: OS::Heat::AutoScalingGroup
    properties:
      min_size: 3
      max_size: 1
      resource: {type: OS::Heat::None}
""",
        "resources.r.properties",
        "MinSize can not be greater than MaxSize",
        id="autoscaling-size-rule",
    ),
]


def _inputs(resources: str) -> StackInputs:
    return StackInputs.from_text(f"heat_template_version: 2018-08-31\nresources:\n{resources}")


def _lines(diags: Any) -> list[str]:
    return [str(d) for d in diags]


@pytest.mark.parametrize(("resources", "path", "phrase"), LEFT_TO_CREATE)
def test_validate_warns_where_create_refuses(resources: str, path: str, phrase: str) -> None:
    _, compiled = validate_template(_inputs(resources))
    warned = [str(d) for d in compiled.warnings if phrase in d.message]
    assert len(warned) == 1, _lines(compiled.warnings)
    assert f" {path}: warning: {phrase}" in warned[0]
    catalog = default_registry().catalog(strict=True)
    with pytest.raises(InvalidInput) as caught:
        compile_stack(_inputs(resources), catalog=catalog, strict=True)
    refused = [str(d) for d in caught.value.diagnostics if d.is_error and phrase in d.message]
    assert len(refused) == 1, _lines(caught.value.diagnostics)
    assert f" {path}: {phrase}" in refused[0]


def test_validate_refuses_an_unknown_name_at_the_top() -> None:
    resources = "  r:\n    type: OS::Heat::RandomString\n    properties: {wibble: 1}\n"
    with pytest.raises(InvalidInput) as caught:
        validate_template(_inputs(resources))
    assert _lines(caught.value.diagnostics) == [
        "<template>:5:18 resources.r.properties.wibble: Unknown Property wibble"
    ]


def test_nested_names_follow_the_mode_and_top_names_do_not() -> None:
    raw = {"character_classes": [{"class": "letters", "wibble": 1}], "nope": 1}
    for strict, nested in ((True, Severity.ERROR), (False, Severity.WARNING)):
        _, diags = RandomString.validate(raw, P, strict=strict)
        found = {d.path[len(P) :]: d.severity for d in diags}
        assert found == {("character_classes", 0, "wibble"): nested, ("nope",): Severity.ERROR}


@pytest.mark.parametrize(
    ("plugin", "raw"),
    [
        (RandomString, {"length": 1, "character_classes": [{"class": "digits", "min": 2}]}),
        (AutoScalingGroup, {"min_size": 2, "max_size": 1, "resource": {"type": "x"}}),
    ],
)
def test_a_type_s_own_rules_are_warnings_unless_strict(plugin: Any, raw: dict[str, Any]) -> None:
    """Heat runs a type's ``validate()`` only with values, at create."""
    _, strict = plugin.validate(raw, P, strict=True)
    _, lenient = plugin.validate(raw, P, strict=False)
    assert [d.message for d in strict] == [d.message for d in lenient]
    assert [d.severity for d in strict] == [Severity.ERROR]
    assert [d.severity for d in lenient] == [Severity.WARNING]


def test_a_group_member_s_properties_wait_for_create() -> None:
    """A group's members are built at create; validate reads the group's
    own properties only, as Heat's does."""
    raw = {"resource_def": {"type": "OS::Heat::RandomString", "properties": {"length": 0}}}
    _, diags = ResourceGroup.validate(raw, P, strict=False)
    assert diags == []

"""Sections, keys and per-version rules of hot/template.py."""

from __future__ import annotations

import textwrap

import pytest

from convection.common.diagnostics import Diagnostics
from convection.hot.functions.base import Function
from convection.hot.loader import load
from convection.hot.template import Template, parse_template


def parse(text: str) -> tuple[Template | None, Diagnostics]:
    return parse_template(load(textwrap.dedent(text), "t.yaml"))


def errors(text: str) -> list[str]:
    return [str(d) for d in parse(text)[1] if d.is_error]


def test_a_clean_template_parses_into_trees() -> None:
    template, diags = parse(
        """\
        heat_template_version: 2016-10-14
        description: web
        parameters:
          image: {type: string, default: cirros}
        resources:
          web:
            type: OS::Heat::Value
            depends_on: other
            properties:
              value: {get_param: image}
          other: {type: OS::Heat::None}
        outputs:
          v: {value: {get_attr: [web, value]}, description: the value}
        """
    )
    assert not diags.has_errors
    assert template is not None
    assert template.version.name == "2016-10-14"
    web = template.resources["web"]
    assert web.depends_on == ("other",)
    assert isinstance(web.properties["value"], Function)
    assert template.outputs["v"].description == "the value"


def test_missing_version_is_named() -> None:
    assert errors("resources: {}\n") == ["t.yaml:1:1: Template format version not found."]


def test_unknown_version_lists_the_known_ones() -> None:
    (err,) = errors("heat_template_version: 2016-10-15\n")
    assert err.startswith("t.yaml:1:1 heat_template_version: The template version is invalid")
    assert "2013-05-23" in err and "2021-04-16" in err


@pytest.mark.parametrize("alias", ["newton", "ocata", "pike", "queens", "rocky", "wallaby"])
def test_version_aliases(alias: str) -> None:
    template, diags = parse(f"heat_template_version: {alias}\n")
    assert template is not None and not diags.has_errors


def test_unknown_section_is_rejected_at_its_line() -> None:
    assert errors("heat_template_version: 2015-10-15\nresource:\n  a: {type: T}\n") == [
        "t.yaml:2:1 resource: The template section is invalid: resource"
    ]


def test_conditions_section_needs_newton() -> None:
    (err,) = errors("heat_template_version: 2016-04-08\nconditions: {a: true}\n")
    assert "The template section is invalid: conditions" in err


def test_resource_key_from_a_newer_version_says_which() -> None:
    (err,) = errors(
        """\
        heat_template_version: 2015-10-15
        resources:
          r:
            type: OS::Heat::None
            condition: is_prod
        """
    )
    assert err.startswith("t.yaml:5:5 resources.r.condition:")
    assert "condition needs heat_template_version 2016-10-14 or later" in err


@pytest.mark.parametrize(
    ("snippet", "needle"),
    [
        ("r: {properties: {}}", "Each resource must contain a type key."),
        ("r: null", "Each resource must contain a type key."),
        ("r: [a]", "must contain a map of resource maps. Found a [list] instead"),
        ("r: {type: [a]}", "Resource r type type must be string"),
        ("r: {type: T, properties: [a]}", "Resource r properties type must be object"),
        ("r: {type: T, depends_on: {a: b}}", "depends_on type must be list or string"),
        ("r: {type: T, depends_on: [1]}", "depends_on must be a list of strings"),
        ("r: {type: T, deletion_policy: Keep}", 'Invalid deletion policy "Keep"'),
        ("r: {type: T, typo: 1}", '"typo" is not a valid keyword inside a resource definition'),
        ("a/b: {type: T}", 'Resource name may not contain "/"'),
    ],
)
def test_resource_shape_errors(snippet: str, needle: str) -> None:
    (err,) = errors(f"heat_template_version: 2016-10-14\nresources:\n  {snippet}\n")
    assert needle in err


def test_lower_case_deletion_policy_needs_newton() -> None:
    (err,) = errors(
        "heat_template_version: 2016-04-08\nresources:\n  r: {type: T, deletion_policy: retain}\n"
    )
    assert 'Invalid deletion policy "retain"' in err
    assert not errors(
        "heat_template_version: 2016-10-14\nresources:\n  r: {type: T, deletion_policy: retain}\n"
    )


@pytest.mark.parametrize(
    ("snippet", "needle"),
    [
        ("o: {description: x}", "Each output must contain a value key."),
        ("o: 7", '"outputs" must contain a map of output maps. Found a [int] instead'),
    ],
)
def test_output_shape_errors(snippet: str, needle: str) -> None:
    (err,) = errors(f"heat_template_version: 2016-10-14\noutputs:\n  {snippet}\n")
    assert needle in err


@pytest.mark.parametrize(
    ("version", "snippet"),
    [
        ("2016-10-14", "o: {value: 1, typo: 2}"),  # Heat's outputs() reads only its keys
        ("2016-04-08", "o: {value: 1, condition: false}"),  # no condition before newton
    ],
)
def test_output_keys_heat_ignores_are_accepted_with_a_warning(version: str, snippet: str) -> None:
    template, diags = parse(f"heat_template_version: {version}\noutputs:\n  {snippet}\n")
    assert not diags.has_errors
    assert template is not None and template.outputs["o"].condition is None
    (warning,) = diags.warnings
    assert warning.path[:2] == ("outputs", "o") and "is ignored" in warning.message


def test_parameter_and_resource_names_must_differ() -> None:
    (err,) = errors(
        """\
        heat_template_version: 2016-10-14
        parameters: {web: {type: string}}
        resources: {web: {type: T}}
        """
    )
    assert "Duplicate names {'web'}" in err


def test_newer_function_in_older_template_is_data_with_a_warning() -> None:
    template, diags = parse(
        """\
        heat_template_version: 2014-10-16
        resources:
          r:
            type: OS::Heat::Value
            properties:
              value: {repeat: {for_each: {x: [a]}, template: x}}
        """
    )
    assert template is not None and not diags.has_errors
    assert template.resources["r"].properties["value"] == {
        "repeat": {"for_each": {"x": ["a"]}, "template": "x"}
    }
    (warning,) = diags.warnings
    assert "'repeat' is not a function in heat_template_version 2014-10-16" in warning.message
    assert "introduced in 2015-04-30" in warning.message
    assert str(warning.mark) == "t.yaml:6:7"


def test_removed_cfn_function_is_an_error() -> None:
    from convection.common.errors import InvalidInput
    from convection.model.compiler import StackInputs, compile_stack

    with pytest.raises(InvalidInput) as caught:
        compile_stack(
            StackInputs.from_text(
                textwrap.dedent(
                    """\
        heat_template_version: 2014-10-16
        resources:
          r:
            type: OS::Heat::Value
            properties:
              value: {"Fn::Join": [",", [a, b]]}
        """
                ),
                name="t.yaml",
            )
        )
    (err,) = caught.value.diagnostics
    assert err.path == ("resources", "r", "properties", "value")


def test_resource_functions_are_invalid_in_conditions() -> None:
    (err,) = errors(
        """\
        heat_template_version: 2016-10-14
        conditions:
          c: {equals: [{get_resource: r}, x]}
        resources:
          r: {type: T}
        """
    )
    assert 'The function "get_resource" is invalid in this context' in err


def test_every_error_is_reported_not_only_the_first() -> None:
    errs = errors(
        """\
        heat_template_version: 2016-10-14
        bogus: 1
        resources:
          a: {type: T, typo: 1}
          b: {properties: {}}
        outputs:
          o: {description: x}
        """
    )
    assert len(errs) == 4

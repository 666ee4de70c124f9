"""Function errors in whole templates: Heat's text after the location
(``file:line:column path``), where Heat reports them; and what Heat accepts
that must stay accepted (a ``get_file`` key missing from ``files`` at
validate, a URL key that is there)."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from typing import Any

import pytest

from convection.common.errors import ExpressionError, InvalidInput
from convection.hot.functions.base import resolve
from convection.hot.functions.tables import versions_having
from convection.model.compiler import Compiled, StackInputs, compile_stack
from convection.plan import RecordResolver
from convection.resources.registry import default_registry

CATALOG = default_registry().catalog(strict=False)
CONTAINS_CONDITIONS = versions_having("contains")


def compile_text(
    text: str,
    *,
    strict: bool = False,
    files: Mapping[str, str] | None = None,
    parameters: Mapping[str, Any] | None = None,
) -> Compiled:
    inputs = StackInputs.from_text(
        textwrap.dedent(text), name="t.yaml", files=files, parameters=parameters
    )
    return compile_stack(inputs, catalog=CATALOG, strict=strict)


def errors(text: str) -> list[str]:
    with pytest.raises(InvalidInput) as caught:
        compile_text(text)
    return [str(d) for d in caught.value.diagnostics if not d.upstream]


@pytest.mark.parametrize("version", CONTAINS_CONDITIONS)
def test_contains_in_a_condition(version: str) -> None:
    text = f"""\
        heat_template_version: {version}
        parameters:
          zone: {{type: string, default: az1}}
        conditions:
          listed: {{contains: [{{get_param: zone}}, [az1, az2]]}}
          in_text: {{contains: [z1, {{get_param: zone}}]}}
        resources:
          a: {{type: OS::Heat::None, condition: listed}}
          b: {{type: OS::Heat::None, condition: in_text}}
        """
    assert compile_text(text).definition.conditions == {"listed": True, "in_text": True}
    assert compile_text(text, parameters={"zone": "az3"}).definition.conditions == {
        "listed": False,
        "in_text": False,
    }


@pytest.mark.parametrize("version", CONTAINS_CONDITIONS)
def test_contains_argument_errors_in_the_conditions_section(version: str) -> None:
    assert errors(
        f"""\
        heat_template_version: {version}
        conditions:
          one: {{contains: [a]}}
          bare: {{contains: a}}
        resources:
          r: {{type: OS::Heat::None}}
        """
    ) == [
        "t.yaml:3:3 conditions.one: "
        'Arguments to "contains" must be of the form: [value1, [value1, value2]]',
        "t.yaml:4:3 conditions.bare: "
        'Incorrect arguments to "contains" should be: "contains" : [ "value1", [ "value1", '
        '"value2"]]',
    ]


@pytest.mark.parametrize("version", CONTAINS_CONDITIONS)
def test_contains_value_errors_where_the_condition_is_used(version: str) -> None:
    """Heat evaluates a condition where a resource names it; Python's ``in``
    says what is wrong."""
    found = errors(
        f"""\
        heat_template_version: {version}
        conditions:
          number_in_text: {{contains: [1, abc]}}
          in_a_map: {{contains: [a, {{a: 1}}]}}
        resources:
          r: {{type: OS::Heat::None, condition: number_in_text}}
          s: {{type: OS::Heat::None, condition: in_a_map}}
        """
    )
    assert found == [
        "t.yaml:6:29 resources.r.condition: 'in <string>' requires string as left operand, not int",
        't.yaml:7:29 resources.s.condition: Second argument to "contains" should be a sequence.',
    ]


def test_str_replace_syntax_error_is_located_and_worded_as_heat() -> None:
    (found,) = errors(
        """\
        heat_template_version: 2021-04-16
        resources:
          r:
            type: OS::Heat::Value
            properties:
              value: {str_replace: {template: x, param: {}}}
        """
    )
    assert found == (
        "t.yaml:6:7 resources.r.properties.value: "
        '\'"str_replace" syntax should be str_replace:\\n'
        "              template: This is var1 template var2\\n"
        "              params:\\n"
        "                var1: a\\n"
        "                var2: string'"
    )


GET_FILE = """\
    heat_template_version: 2021-04-16
    resources:
      r:
        type: OS::Heat::Value
        properties:
          value: {get_file: "https://example.com/motd.txt"}
      s:
        type: OS::Heat::Value
        properties:
          value: {get_file: scripts/not-sent.sh}
    outputs:
      motd: {value: {get_file: "https://example.com/motd.txt"}}
      missing: {value: {get_file: not-sent.txt}}
    """


@pytest.mark.parametrize("strict", [False, True])
def test_get_file_keys_are_looked_up_only_when_resolved(strict: bool) -> None:
    """Heat's GetFile has no validate: a key missing from ``files`` is not an
    error until the value is resolved, and a URL is a key like any other
    (heatclient fetches it and keys its content by the URL). A create
    resolves properties (``with_value``) but not outputs; the template is
    read here as a stored one is, without that check (``values=False``)."""
    files = {"https://example.com/motd.txt": "hello\n"}
    inputs = StackInputs.from_text(textwrap.dedent(GET_FILE), name="t.yaml", files=files)
    compiled = compile_stack(inputs, catalog=CATALOG, strict=strict, values=False)
    assert set(compiled.definition.resources) == {"r", "s"}
    resolver = RecordResolver(compiled.definition, {}.get)
    assert resolve(compiled.definition.outputs["motd"].value, resolver) == "hello\n"
    with pytest.raises(ExpressionError) as caught:
        resolve(compiled.definition.outputs["missing"].value, resolver)
    assert str(caught.value) == (
        'outputs.missing.value: No content found in the "files" section for '
        "get_file path: not-sent.txt"
    )


def test_a_create_resolves_get_file_in_properties_not_in_outputs() -> None:
    """``Properties.validate(with_value=True)`` resolves the missing key and
    refuses the create at the call; the output's is its ``output_error``."""
    files = {"https://example.com/motd.txt": "hello\n"}
    with pytest.raises(InvalidInput) as caught:
        compile_text(GET_FILE, strict=True, files=files)
    assert [str(d) for d in caught.value.diagnostics] == [
        "t.yaml:10:7 resources.s.properties.value: "
        'No content found in the "files" section for get_file path: scripts/not-sent.sh'
    ]

"""JSON parameter values are held to the template's depth limit.

Found by fuzzing: a ``json`` parameter given on the command line, or merged
from environment files, could be nested past Python's recursion limit, and
copying it (or parsing it) escaped as a RecursionError.
"""

from __future__ import annotations

import json

import pytest

from convection.common.errors import InvalidInput
from convection.hot.parameters import coerce
from convection.model.compiler import StackInputs
from convection.service.validate import validate_template

TEMPLATE = """\
heat_template_version: 2021-04-16
parameters:
  p: {type: json}
resources:
  r: {type: OS::Heat::Value, properties: {value: {get_param: p}}}
"""


def nested(depth: int) -> str:
    return '{"a": ' * depth + "1" + "}" * depth


@pytest.mark.parametrize("depth", [101, 900, 100_000])
def test_a_json_value_nested_too_deeply_is_refused(depth: int) -> None:
    with pytest.raises(ValueError, match="nested at most 100 levels deep"):
        coerce("json", nested(depth))


def test_a_json_value_within_the_limit_is_read() -> None:
    assert coerce("json", nested(99)) == json.loads(nested(99))
    assert coerce("json", "") == ""
    assert coerce("json", "null") is None


def test_a_deep_command_line_value_is_a_parameter_error() -> None:
    inputs = StackInputs.from_text(TEMPLATE, name="t.yaml", parameters={"p": nested(900)})
    with pytest.raises(InvalidInput) as caught:
        validate_template(inputs)
    (diag,) = caught.value.diagnostics
    assert diag.path == ("parameters", "p")
    assert "Parameter 'p' is invalid: Value must be valid JSON nested at most" in diag.message


@pytest.mark.parametrize("depth", [900, 50_000])
@pytest.mark.parametrize("strategy", ["merge", "deep_merge"])
def test_deep_values_merged_from_environments_are_located_errors(depth: int, strategy: str) -> None:
    env = f"parameter_merge_strategies: {{p: {strategy}}}\nparameters: {{p: '{nested(depth)}'}}\n"
    inputs = StackInputs.from_text(
        TEMPLATE, name="t.yaml", environments=[("e1.yaml", env), ("e2.yaml", env)]
    )
    with pytest.raises(InvalidInput) as caught:
        validate_template(inputs)
    messages = [str(d) for d in caught.value.diagnostics]
    assert any(
        m.startswith("e2.yaml:2:14 parameters.p: Invalid parameter in environment: JSON nested")
        for m in messages
    ), messages

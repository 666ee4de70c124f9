"""An ``if`` whose condition cannot be evaluated is a located error.

Found by fuzzing: expanding ``if`` while building the definition let the
condition's ExpressionError escape ``build_definition``. A template validated
without parameter values (as ``template validate`` allows) then stopped at
the first such ``if`` with an error that had no place in the file, and no
other problem was reported.
"""

from __future__ import annotations

import textwrap

import pytest

from convection.common.errors import InvalidInput
from convection.model.compiler import StackInputs
from convection.service.validate import validate_template


def problems(text: str) -> list[str]:
    inputs = StackInputs.from_text(textwrap.dedent(text), name="t.yaml")
    with pytest.raises(InvalidInput) as caught:
        validate_template(inputs)
    return [str(d) for d in caught.value.diagnostics if not d.upstream]


def test_a_condition_on_a_parameter_without_a_value_is_reported_once_where_it_fails() -> None:
    found = problems(
        """\
        heat_template_version: 2016-10-14
        parameters:
          env_type: {type: string}
        conditions:
          is_prod: {equals: [{get_param: env_type}, prod]}
        resources:
          a:
            type: OS::Heat::RandomString
            properties:
              length: {if: [is_prod, 32, 16]}
          b:
            type: OS::Heat::Value
            properties:
              value: {if: [is_prod, big, small]}
              nope: 1
        outputs:
          size:
            value: {if: [is_prod, big, small]}
        """
    )
    assert found == [
        "t.yaml:5:22 conditions.is_prod.equals[0]: The Parameter (env_type) was not provided.",
        "t.yaml:15:7 resources.b.properties.nope: Unknown Property nope",  # still checked
    ]


def test_a_broken_condition_used_by_an_if_is_a_located_error() -> None:
    found = problems(
        """\
        heat_template_version: 2016-10-14
        conditions:
          is_prod: {equals: [a]}
        resources:
          a:
            type: OS::Heat::Value
            properties:
              value: {if: [is_prod, 1, 2]}
        """
    )
    assert any(
        m.startswith("t.yaml:3:3 conditions.is_prod: ")
        and 'Arguments to "equals" must be of the form' in m
        for m in found
    ), found

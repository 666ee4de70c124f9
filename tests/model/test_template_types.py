"""Template resources at validation: the nested interface, with Heat's
rule that ``parameter_defaults`` supply a nested template's parameters."""

from __future__ import annotations

import pytest

from convection.common.errors import InvalidInput
from convection.model.compiler import StackInputs, compile_stack
from convection.resources.registry import default_registry

NESTED = """\
heat_template_version: 2018-08-31
parameters:
  name: {type: string}
  domain: {type: string}
outputs:
  url: {value: {get_param: domain}}
"""

PARENT = """\
heat_template_version: 2018-08-31
resources:
  web:
    type: web.yaml
    properties: {name: shop}
outputs:
  url: {value: {get_attr: [web, url]}}
"""


def compile_with(environment: str | None) -> None:
    envs = [("env.yaml", environment)] if environment else []
    inputs = StackInputs.from_text(PARENT, files={"web.yaml": NESTED}, environments=envs)
    compile_stack(inputs, catalog=default_registry().catalog())


def test_a_required_nested_parameter_must_be_a_property() -> None:
    with pytest.raises(InvalidInput, match="Property domain not assigned"):
        compile_with(None)


def test_parameter_defaults_supply_a_required_nested_parameter() -> None:
    compile_with("parameter_defaults: {domain: example.internal}\n")

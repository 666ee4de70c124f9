"""References Heat accepts, at validate and at create, and those it still refuses.

An output's ``get_param`` and ``get_resource`` are not looked up when Heat
validates (``OutputDefinition.validate`` in heat/engine/output.py runs each
function's ``validate``, and neither has one): a name that is not there is
the output's ``output_error`` in stack show. ``get_attr`` does look its
resource up (``GetAttThenSelect.validate``, heat/engine/hot/functions.py).
A ``depends_on`` on a resource its condition switched off is dropped
(``ResourceDefinition.dependencies``, heat/engine/rsrc_defn.py).
"""

from __future__ import annotations

import textwrap

import pytest

from convection.common.errors import InvalidInput
from convection.model.compiler import Compiled, StackInputs, compile_stack
from convection.resources.registry import default_registry

HOT = "heat_template_version: 2018-08-31\n"


def compile_text(text: str, *, strict: bool) -> Compiled:
    inputs = StackInputs.from_text(HOT + textwrap.dedent(text), name="t.yaml")
    return compile_stack(inputs, catalog=default_registry().catalog(strict=strict), strict=strict)


def errors(text: str, *, strict: bool) -> list[str]:
    with pytest.raises(InvalidInput) as caught:
        compile_text(text, strict=strict)
    return [str(d) for d in caught.value.diagnostics if d.is_error]


BOTH = pytest.mark.parametrize("strict", [False, True], ids=["validate", "create"])


@BOTH
@pytest.mark.parametrize(
    "value",
    [
        "{get_param: nope}",
        "{get_param: [nope, key]}",
        "{get_resource: nope}",
        "{get_resource: dark}",
        "{get_resource: {get_param: which}}",
        "{list_join: [',', [{get_param: nope}, {get_resource: nope}]]}",
        "{str_replace: {template: x, params: {x: {get_param: nope}}}}",
    ],
)
def test_an_output_naming_what_is_not_there_is_accepted(value: str, strict: bool) -> None:
    compiled = compile_text(
        f"""\
        parameters:
          which: {{type: string, default: missing}}
        conditions:
          never: false
        resources:
          dark: {{type: OS::Heat::None, condition: never}}
        outputs:
          o: {{value: {value}}}
        """,
        strict=strict,
    )
    assert "o" in compiled.definition.outputs
    assert not compiled.warnings


@BOTH
@pytest.mark.parametrize(
    ("value", "where", "needle"),
    [
        ("{get_attr: [nope, x]}", "8:7 outputs.o.value", 'The specified reference "nope"'),
        ("{get_attr: [dark, x]}", "8:7 outputs.o.value", 'The specified reference "dark"'),
        (
            "{get_attr: [{get_param: nope}, x]}",
            "8:26 outputs.o.value.get_attr[0]",
            "The Parameter (nope) was not provided.",
        ),
        (
            "{get_attr: [real, {get_param: nope}]}",
            "8:32 outputs.o.value.get_attr[1]",
            "The Parameter (nope) was not provided.",
        ),
    ],
)
def test_an_output_get_attr_still_looks_its_resource_up(
    value: str, where: str, needle: str, strict: bool
) -> None:
    found = errors(
        f"""\
        conditions:
          never: false
        resources:
          dark: {{type: OS::Heat::None, condition: never}}
          real: {{type: OS::Heat::None}}
        outputs:
          o: {{value: {value}}}
        """,
        strict=strict,
    )
    assert len(found) == 1
    assert found[0].startswith(f"t.yaml:{where}: ")
    assert needle in found[0]


def test_a_resource_property_still_needs_its_parameter_at_create() -> None:
    (found,) = errors(
        """\
        resources:
          v: {type: OS::Heat::Value, properties: {value: {get_param: nope}}}
        """,
        strict=True,
    )
    assert found == (
        "t.yaml:3:43 resources.v.properties.value: The Parameter (nope) was not provided."
    )


@BOTH
def test_depends_on_a_switched_off_resource_is_dropped(strict: bool) -> None:
    compiled = compile_text(
        """\
        conditions:
          never: false
        resources:
          dark: {type: OS::Heat::None, condition: never}
          first: {type: OS::Heat::None}
          lit:
            type: OS::Heat::None
            depends_on: [dark, first]
        """,
        strict=strict,
    )
    lit = compiled.definition.resources["lit"]
    assert lit.requires == ("first",)
    assert lit.depends_on == ("dark", "first")  # as written, as Heat stores it
    assert compiled.definition.disabled == {"dark"}


@BOTH
def test_depends_on_a_resource_the_template_lacks_is_an_error(strict: bool) -> None:
    (found,) = errors(
        """\
        conditions:
          never: false
        resources:
          dark: {type: OS::Heat::None, condition: never}
          lit: {type: OS::Heat::None, depends_on: [dark, nowhere]}
        """,
        strict=strict,
    )
    assert found == (
        't.yaml:6:31 resources.lit.depends_on: The specified reference "nowhere" (in lit) '
        "is incorrect."
    )


@BOTH
def test_an_output_ref_of_what_is_not_there_is_accepted_but_getatt_is_not(strict: bool) -> None:
    """CloudFormation's ``Ref`` of a name that is no resource is a parameter
    reference (``cfn.functions.Ref``), unchecked as ``get_param``;
    ``Fn::GetAtt`` is ``get_attr``."""
    head = "AWSTemplateFormatVersion: '2010-09-09'\nResources: {}\nOutputs:\n"
    catalog = default_registry().catalog(strict=strict)

    def run(value: str) -> Compiled:
        inputs = StackInputs.from_text(head + f"  o: {{Value: {value}}}\n", name="t.yaml")
        return compile_stack(inputs, catalog=catalog, strict=strict)

    assert "o" in run("{Ref: nope}").definition.outputs
    with pytest.raises(InvalidInput) as caught:
        run("{'Fn::GetAtt': [nope, x]}")
    (found,) = (str(d) for d in caught.value.diagnostics if d.is_error)
    assert found.startswith("t.yaml:4:7 Outputs.o.Value: ")
    assert 'The specified reference "nope"' in found

"""Facades and what Heat accepts, through python-heatclient against a live
server.

A template standing in for a class type must fit it when the stack is
created (``TemplateResource._validate_against_facade``, heat/engine/
resources/template_resource.py); template-validate does not check it, as
Heat's runs only ``validate_template`` (``validate_res_tmpl_only``,
heat/engine/stack.py). An output naming a parameter or resource that is not
there is accepted, and shows an ``output_error`` (heat/engine/output.py,
``api.format_stack_output``); a ``depends_on`` on a resource switched off
by its condition is dropped (heat/engine/rsrc_defn.py).
"""

from __future__ import annotations

from typing import Any

import pytest
from heatclient.client import Client
from heatclient.exc import HTTPBadRequest

HOT = "2018-08-31"

#: Stands in for OS::Heat::RandomString: ``length`` (Integer) by a number.
RANDOM = """\
heat_template_version: 2018-08-31
parameters:
  length: {type: number, default: 4}
outputs:
  value: {value: {str_replace: {template: fixed-N, params: {N: {get_param: length}}}}}
"""

PARENT: dict[str, Any] = {
    "heat_template_version": HOT,
    "resources": {"pick": {"type": "OS::Heat::RandomString", "properties": {"length": 6}}},
    "outputs": {"o": {"value": {"get_attr": ["pick", "value"]}}},
}
MAPPED = {"resource_registry": {"OS::Heat::RandomString": "random.yaml"}}


def test_a_provider_that_fits_its_facade_creates(heat: Client, settle: Any) -> None:
    created = heat.stacks.create(
        stack_name="facade-fits", template=PARENT, environment=MAPPED,
        files={"random.yaml": RANDOM},
    )  # fmt: skip
    stack = settle(heat, created["stack"]["id"])
    assert stack.stack_status == "CREATE_COMPLETE", stack.stack_status_reason
    assert heat.stacks.output_show(stack.id, "o")["output"]["output_value"] == "fixed-6"


@pytest.mark.parametrize(
    ("provider", "words"),
    [
        (
            RANDOM.replace("  value: {value:", "  other: {value:"),
            "Attribute value for facade OS::Heat::RandomString missing in provider",
        ),
        (
            RANDOM.replace("length: {type: number, default: 4}", "length: {type: string}"),
            "Property length type mismatch between facade OS::Heat::RandomString "
            "(Integer) and provider (String)",
        ),
        (
            RANDOM.replace("parameters:\n", "parameters:\n  seed: {type: string}\n"),
            "Provider requires property seed unknown in facade OS::Heat::RandomString",
        ),
    ],
    ids=["a missing output", "a parameter of another type", "a parameter the facade lacks"],
)
def test_a_provider_that_does_not_fit_is_refused_at_create(
    heat: Client, provider: str, words: str
) -> None:
    parent = PARENT
    if "seed" in provider:
        pick = {**PARENT["resources"]["pick"], "properties": {"length": 6, "seed": "s"}}
        parent = {**PARENT, "resources": {"pick": pick}}
    files = {"random.yaml": provider}
    with pytest.raises(HTTPBadRequest) as caught:
        heat.stacks.create(
            stack_name="facade-bad", template=parent, environment=MAPPED, files=files
        )
    message = str(caught.value)
    assert "resources.pick.type: " + words in message
    # template-validate is not where Heat checks a facade
    heat.stacks.validate(template=parent, environment=MAPPED, files=files)


def test_a_facade_property_the_provider_lacks_is_named(heat: Client) -> None:
    parent = {
        "heat_template_version": HOT,
        "resources": {"web": {"type": "OS::Nova::Server", "properties": {"image": "cirros"}}},
    }
    server = "heat_template_version: 2018-08-31\nparameters:\n  image: {type: string}\n"
    with pytest.raises(HTTPBadRequest) as caught:
        heat.stacks.preview(
            stack_name="facade-server", template=parent,
            environment={"resource_registry": {"OS::Nova::Server": "server.yaml"}},
            files={"server.yaml": server},
        )  # fmt: skip
    assert (
        "resources.web.type: Required property flavor for facade OS::Nova::Server "
        "missing in provider"
    ) in str(caught.value)


OUTPUTS: dict[str, Any] = {
    "heat_template_version": HOT,
    "conditions": {"never": False},
    "resources": {
        "dark": {"type": "OS::Heat::None", "condition": "never"},
        "lit": {"type": "OS::Heat::None", "depends_on": ["dark"]},
    },
    "outputs": {
        "param": {"value": {"get_param": "nope"}},
        "missing": {"value": {"get_resource": "nowhere"}},
        "switched_off": {"value": {"get_resource": "dark"}},
        "fine": {"value": {"get_resource": "lit"}},
    },
}


def test_outputs_naming_what_is_not_there_are_output_errors(heat: Client, settle: Any) -> None:
    body = heat.stacks.validate(template=OUTPUTS)
    assert body["Description"] == "No description"
    created = heat.stacks.create(stack_name="outputs-accepted", template=OUTPUTS)
    stack = settle(heat, created["stack"]["id"])
    assert stack.stack_status == "CREATE_COMPLETE", stack.stack_status_reason
    shown = {o["output_key"]: o for o in heat.stacks.get(stack.id).to_dict()["outputs"]}
    assert "The Parameter (nope) was not provided." in shown["param"]["output_error"]
    assert 'The specified reference "nowhere"' in shown["missing"]["output_error"]
    assert 'The specified reference "dark"' in shown["switched_off"]["output_error"]
    assert shown["param"]["output_value"] is None
    assert "output_error" not in shown["fine"]
    assert shown["fine"]["output_value"] == heat.resources.get(stack.id, "lit").physical_resource_id
    [lit] = heat.resources.list(stack.id)
    assert lit.resource_name == "lit"


def test_an_output_get_attr_of_a_missing_resource_is_refused(heat: Client) -> None:
    template = {**OUTPUTS, "outputs": {"bad": {"value": {"get_attr": ["nowhere", "x"]}}}}
    with pytest.raises(HTTPBadRequest) as caught:
        heat.stacks.validate(template=template)
    message = str(caught.value)
    assert "outputs.bad.value: " in message
    assert 'The specified reference "nowhere"' in message


def test_depends_on_a_resource_the_template_lacks_is_refused(heat: Client) -> None:
    lit = {"type": "OS::Heat::None", "depends_on": ["dark", "nowhere"]}
    template = {**OUTPUTS, "resources": {**OUTPUTS["resources"], "lit": lit}, "outputs": {}}
    with pytest.raises(HTTPBadRequest) as caught:
        heat.stacks.validate(template=template)
    message = str(caught.value)
    assert 'resources.lit.depends_on: The specified reference "nowhere" (in lit) is incorrect.' in (
        message
    )
    assert '"dark"' not in message

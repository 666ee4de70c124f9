"""Create, update and preview check property values before accepting the
request, as Heat's do, through python-heatclient against a live server.

Heat's ``create_stack`` (heat/engine/service.py) runs
``_parse_template_and_validate_stack``, whose ``stack.validate()``
(heat/engine/stack.py) has each resource call
``Properties.validate(with_value=True)`` (heat/engine/properties.py): every
property is resolved (``_get_property_value``), so a function's value error
or a resolved value outside the schema refuses the request with HTTP 400
and ``Property error: resources.r.properties.x: <message>``
(``StackValidationFailed``, heat/common/exception.py). Here the location
(``file:line:column path``) comes first, then Heat's message, as every
create-time property error says it. A property whose value depends on a
resource not created yet is resolved with that resource's attribute as
``None`` and its schema check skipped (``_find_deps_any_in_init``): it is
accepted. Template validate (``strict_validate`` off) resolves nothing.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from heatclient import exc
from heatclient.client import Client

from .conftest import Settle

HEAD = "heat_template_version: 2018-08-31\n"


def _value(snippet: str, parameters: str = "") -> str:
    """``v``, an OS::Heat::Value of ``snippet``, beside a RandomString ``r``."""
    return (
        f"{HEAD}{parameters}resources:\n"
        "  r: {type: OS::Heat::RandomString}\n"
        "  v:\n"
        "    type: OS::Heat::Value\n"
        f"    properties: {{value: {snippet}}}\n"
    )


def _refusal(call: Any, **kwargs: Any) -> str:
    """The 400 message of a request Heat refuses."""
    with pytest.raises(exc.HTTPBadRequest) as caught:
        call(**kwargs)
    return str(caught.value)


def _located(message: str, path: str, phrase: str) -> None:
    """``phrase`` is reported at ``path``, after a ``file:line:column``."""
    assert phrase in message, message
    assert re.search(rf"\S+:\d+:\d+ {re.escape(path)}: {re.escape(phrase)}", message), message


REFUSED = [
    pytest.param(
        _value("{str_split: [',', 5]}"),
        {},
        "resources.v.properties.value",
        "'int' object has no attribute 'split'",
        id="str_split-of-a-number",
    ),
    pytest.param(
        _value("{list_join: [',', abc]}"),
        {},
        "resources.v.properties.value",
        '"list_join" must operate on a list',
        id="list_join-of-a-string",
    ),
    pytest.param(
        _value("{map_merge: [{a: 1}, abc]}"),
        {},
        "resources.v.properties.value",
        "Incorrect arguments: Items to merge must be maps.",
        id="map_merge-of-a-string",
    ),
    pytest.param(
        _value("{yaql: {expression: '$.data.x.len()', data: {x: 5}}}"),
        {},
        "resources.v.properties.value",
        'No method "len" for receiver 5 matches supplied arguments',
        id="yaql-error",
    ),
    pytest.param(
        _value("{get_file: scripts/not-sent.sh}"),
        {},
        "resources.v.properties.value",
        'No content found in the "files" section for get_file path: scripts/not-sent.sh',
        id="get_file-key-not-in-files",
    ),
    pytest.param(
        _value("{str_split: [',', {get_param: p}]}", "parameters:\n  p: {type: json}\n"),
        {"p": '{"a": 1}'},
        "resources.v.properties.value",
        "'dict' object has no attribute 'split'",
        id="a-parameter-s-value-given-to-a-function",
    ),
    pytest.param(
        f"{HEAD}parameters:\n  n: {{type: number}}\nresources:\n"
        "  r: {type: OS::Heat::RandomString, properties: {length: {get_param: n}}}\n",
        {"n": "2000"},
        "resources.r.properties.length",
        "2000 is out of range (min: 1, max: 512)",
        id="a-parameter-s-value-outside-the-schema",
    ),
    pytest.param(
        f"{HEAD}resources:\n  r:\n    type: OS::Heat::RandomString\n"
        "    properties: {length: {str_replace: {template: abc, params: {}}}}\n",
        {},
        "resources.r.properties.length",
        "Value 'abc' is not an integer",
        id="a-function-s-value-of-the-wrong-type",
    ),
    pytest.param(
        _value(
            "{list_join: [',', [{get_attr: [r, value]}, {get_file: gone.txt}]]}",
        ),
        {},
        "resources.v.properties.value.list_join[1][1]",
        'No content found in the "files" section for get_file path: gone.txt',
        id="a-static-call-beside-an-attribute",
    ),
]


@pytest.mark.parametrize(("template", "given", "path", "phrase"), REFUSED)
def test_create_refuses_a_value_that_does_not_resolve(
    heat: Client, template: str, given: dict[str, str], path: str, phrase: str
) -> None:
    body = heat.stacks.validate(template=template, environment={"parameters": given})
    assert "Error" not in body
    message = _refusal(
        heat.stacks.create, stack_name="refused", template=template, parameters=given
    )
    _located(message, path, phrase)
    assert list(heat.stacks.list()) == []


@pytest.mark.parametrize(("template", "given", "path", "phrase"), REFUSED[:2])
def test_preview_refuses_it_too(
    heat: Client, template: str, given: dict[str, str], path: str, phrase: str
) -> None:
    message = _refusal(
        heat.stacks.preview, stack_name="previewed", template=template, parameters=given
    )
    _located(message, path, phrase)


def test_update_refuses_it_and_leaves_the_stack_as_it_was(heat: Client, settle: Settle) -> None:
    stack_id = heat.stacks.create(stack_name="kept", template=_value("'a,b'"))["stack"]["id"]
    assert settle(heat, stack_id).stack_status == "CREATE_COMPLETE"
    message = _refusal(
        heat.stacks.update, stack_id=stack_id, template=_value("{str_split: [',', 5]}")
    )
    _located(message, "resources.v.properties.value", "'int' object has no attribute 'split'")
    stack = heat.stacks.get(stack_id)
    assert stack.stack_status == "CREATE_COMPLETE"


def test_a_hidden_parameter_s_value_stays_masked(heat: Client) -> None:
    template = (
        f"{HEAD}parameters:\n  secret: {{type: string, hidden: true}}\nresources:\n"
        "  r: {type: OS::Heat::RandomString, properties: {length: {get_param: secret}}}\n"
    )
    message = _refusal(
        heat.stacks.create, stack_name="masked", template=template, parameters={"secret": "hunter2"}
    )
    _located(message, "resources.r.properties.length", "Value '******' is not an integer")
    assert "hunter2" not in message


ACCEPTED = [
    pytest.param("{get_attr: [r, value]}", id="an-attribute-of-a-resource-not-created-yet"),
    pytest.param("{get_resource: r}", id="a-reference-id"),
    pytest.param(
        "{yaql: {expression: '$.data.x.len()', data: {x: {get_attr: [r, value]}}}}",
        id="yaql-over-an-attribute",
    ),
    pytest.param(
        "{str_split: [',', {list_join: [',', [{get_attr: [r, value]}, b]]}]}",
        id="functions-over-an-attribute",
    ),
    pytest.param("{str_split: [',', 'a,b']}", id="a-static-call-that-resolves"),
]


@pytest.mark.parametrize("snippet", ACCEPTED)
def test_create_accepts_values_that_wait_for_resources(
    heat: Client, settle: Settle, snippet: str
) -> None:
    stack_id = heat.stacks.create(stack_name="accepted", template=_value(snippet))["stack"]["id"]
    stack = settle(heat, stack_id)
    assert stack.stack_status == "CREATE_COMPLETE", stack.stack_status_reason


def test_a_length_from_a_resource_is_checked_when_it_runs(heat: Client, settle: Settle) -> None:
    """An integer property whose value needs a resource skips the check at
    create (Heat's ``_find_deps_any_in_init``)."""
    template = (
        f"{HEAD}resources:\n"
        "  n: {type: OS::Heat::Value, properties: {value: 8}}\n"
        "  r: {type: OS::Heat::RandomString, properties: {length: {get_attr: [n, value]}}}\n"
    )
    stack_id = heat.stacks.create(stack_name="later", template=template)["stack"]["id"]
    stack = settle(heat, stack_id)
    assert stack.stack_status == "CREATE_COMPLETE", stack.stack_status_reason

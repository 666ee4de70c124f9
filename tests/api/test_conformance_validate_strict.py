"""Template validate is exactly as strict as Heat's, through python-heatclient
against a live server.

Heat's ``validate_template`` (heat/engine/service.py) builds its stack with
``strict_validate=False`` and calls ``stack.validate(validate_res_tmpl_only=True)``
(heat/engine/stack.py), so:

* each resource gets ``Resource.validate_template`` only, never the type's
  own ``validate()`` (RandomString's length rule, ``OS::Heat::Value``'s
  ``type``), and that calls ``Properties.validate(with_value=False)``
  (heat/engine/resource.py, heat/engine/properties.py): the section's own
  names are checked, and nothing that needs a value (range, type, allowed
  values, the names inside nested maps, required properties). Property
  functions are not resolved either, so ``str_split`` of a list waits too;
* ``Parameters.validate(validate_value=False)`` (heat/engine/parameters.py)
  checks that every given name is the template's and that defaults meet
  their constraints, not the given values, and demands no value. JSON and
  list values are parsed when the stack is built (``ParsedParameter``), and
  a resource's ``condition`` reads the values it uses.

Create validates strictly (``_parse_template_and_validate_stack``), so each
case validate accepts here is refused by create, with Heat's words after its
place: that is what makes accepting it at validate a real check.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from heatclient import exc
from heatclient.client import Client

HEAD = "heat_template_version: 2018-08-31\n"


def _random(props: str) -> str:
    return f"{HEAD}resources:\n  r:\n    type: OS::Heat::RandomString\n    properties: {props}\n"


def _value(props: str) -> str:
    return f"{HEAD}resources:\n  v:\n    type: OS::Heat::Value\n    properties: {props}\n"


def _refusal(call: Any, **kwargs: Any) -> str:
    """The 400 message of a request Heat refuses."""
    with pytest.raises(exc.HTTPBadRequest) as caught:
        call(**kwargs)
    return str(caught.value)


def _located(message: str, path: str, phrase: str) -> None:
    """``phrase`` is reported at ``path``, after a ``file:line:column``."""
    assert phrase in message, message
    assert re.search(rf"\S+:\d+:\d+ {re.escape(path)}: ", message), message


# -- properties: names at validate, values at create --------------------------------

PROPERTY_CASES = [
    pytest.param(
        _random("{length: 2000}"),
        "resources.r.properties.length",
        "2000 is out of range (min: 1, max: 512)",
        id="out-of-range",
    ),
    pytest.param(
        _random("{length: abc}"),
        "resources.r.properties.length",
        "Value 'abc' is not an integer",
        id="wrong-type",
    ),
    pytest.param(
        _random("{character_classes: [{class: bogus}]}"),
        "resources.r.properties.character_classes[0].class",
        '"bogus" is not an allowed value [lettersdigits, letters',
        id="allowed-values-in-a-list-of-maps",
    ),
    pytest.param(
        _random("{character_classes: [{class: letters, wibble: 1}]}"),
        "resources.r.properties.character_classes[0].wibble",
        "Unknown Property wibble",
        id="unknown-name-in-a-nested-map",
    ),
    pytest.param(
        _value("{type: string}"),
        "resources.v.properties.value",
        "Property value not assigned",
        id="missing-required",
    ),
    pytest.param(
        _value('{type: boolean, value: "yes"}'),
        "resources.v.properties.value",
        '"yes" is not a valid boolean',
        id="value-not-of-its-type",
    ),
    pytest.param(
        _value("{type: json, value: '{\"a\": 1}'}"),
        "resources.v.properties.value",
        "is not a map",
        id="json-text-is-not-a-map",
    ),
    pytest.param(
        _random("{length: 2, character_classes: [{class: letters, min: 3}]}"),
        "resources.r.properties.length",
        "Length property cannot be smaller than combined character class and "
        "character sequence minimums",
        id="the-type-s-own-rule",
    ),
]


@pytest.mark.parametrize(("template", "path", "phrase"), PROPERTY_CASES)
def test_validate_accepts_property_values_heat_checks_at_create(
    heat: Client, template: str, path: str, phrase: str
) -> None:
    body = heat.stacks.validate(template=template)
    assert body["Description"] == "No description"
    assert "Error" not in body
    message = _refusal(heat.stacks.create, stack_name="refused", template=template)
    _located(message, path, phrase)
    assert list(heat.stacks.list()) == []


@pytest.mark.parametrize(
    "value",
    [
        pytest.param("{str_split: [',', [a, b]]}", id="str_split-of-a-list"),
        pytest.param("{list_join: [',', abc]}", id="list_join-of-a-string"),
        pytest.param(
            "{yaql: {expression: '$.data.x.len()', data: {x: {get_attr: [r, value]}}}}",
            id="yaql-over-an-attribute-not-there-yet",
        ),
    ],
)
def test_validate_does_not_resolve_property_functions(heat: Client, value: str) -> None:
    """Heat resolves properties only with values (``with_value``): a
    function's value errors wait for create, which refuses the first two
    (``test_conformance_create_values.py``) and accepts the yaql over an
    attribute, which waits for the resource."""
    template = f"""\
{HEAD}resources:
  r: {{type: OS::Heat::RandomString}}
  v:
    type: OS::Heat::Value
    properties: {{value: {value}}}
"""
    body = heat.stacks.validate(template=template)
    assert "Error" not in body


def test_validate_refuses_an_unknown_top_level_property(heat: Client) -> None:
    template = _random("{length: 8, wibble: 1}")
    message = _refusal(heat.stacks.validate, template=template)
    _located(message, "resources.r.properties.wibble", "Unknown Property wibble")


# -- parameters: names and defaults at validate, given values at create -------------

PARAMETERS = f"""\
{HEAD}parameters:
  av: {{type: string, constraints: [{{allowed_values: [a, b]}}]}}
  ap: {{type: string, constraints: [{{allowed_pattern: "[a-z]+"}}]}}
  ls: {{type: string, constraints: [{{length: {{min: 2, max: 3}}}}]}}
  ll: {{type: comma_delimited_list, constraints: [{{length: {{max: 2}}}}]}}
  lj: {{type: json, constraints: [{{length: {{max: 1}}}}]}}
  rg: {{type: number, constraints: [{{range: {{min: 1, max: 5}}}}]}}
  md: {{type: number, constraints: [{{modulo: {{step: 2, offset: 0}}}}]}}
  sv: {{type: string, constraints: [{{length: {{min: 5}}}}, {{allowed_pattern: "[0-9]+"}}]}}
  nm: {{type: number}}
  bl: {{type: boolean}}
  rq: {{type: string}}
  nd: {{type: string, default: null}}
resources:
  r: {{type: OS::Heat::None}}
"""

GIVEN = {
    "av": "c",
    "ap": "A1",
    "ls": "x",
    "ll": "a,b,c",
    "lj": '{"a": 1, "b": 2}',
    "rg": "9",
    "md": "3",
    "sv": "ab",
    "nm": "abc",
    "bl": "maybe",
}

#: What create says of each, in Heat's words (``Parameter.validate``).
REFUSED = {
    "av": "Parameter 'av' is invalid: \"c\" is not an allowed value [a, b]",
    "ap": 'Parameter \'ap\' is invalid: "A1" does not match pattern "[a-z]+"',
    "ls": "Parameter 'ls' is invalid: length (1) is out of range (min: 2, max: 3)",
    "ll": "Parameter 'll' is invalid: length (3) is out of range (min: None, max: 2)",
    "lj": "Parameter 'lj' is invalid: length (2) is out of range (min: None, max: 1)",
    "rg": "Parameter 'rg' is invalid: 9 is out of range (min: 1, max: 5)",
    "md": "Parameter 'md' is invalid: 3 is not a multiple of 2 with an offset of 0",
    "sv": "Parameter 'sv' is invalid: length (2) is out of range (min: 5, max: None)",
    "nm": "Parameter 'nm' is invalid: could not convert string to float: 'abc'",
    "bl": "Parameter 'bl' is invalid: Unrecognized value 'maybe', acceptable values are:",
    "rq": "The Parameter (rq) was not provided.",
    "nd": "The Parameter (nd) was not provided.",
}


def test_validate_shows_given_values_it_does_not_check(heat: Client) -> None:
    """``format_validate_parameter`` shows ``param.user_value`` as given;
    a parameter with no value (none given, a null default) has none."""
    body = heat.stacks.validate(template=PARAMETERS, environment={"parameters": GIVEN})
    shown = {name: p.get("Value") for name, p in body["Parameters"].items()}
    assert shown == {**GIVEN, "rq": None, "nd": None}
    assert all("Default" not in body["Parameters"][n] for n in ("rq", "nd"))


def test_create_refuses_each_value_validate_accepted(heat: Client) -> None:
    message = _refusal(
        heat.stacks.create, stack_name="refused", template=PARAMETERS, parameters=GIVEN
    )
    for name, words in REFUSED.items():
        _located(message, f"parameters.{name}", words)


def test_validate_accepts_good_values_of_the_same_parameters(heat: Client) -> None:
    good = {
        "av": "a",
        "ap": "abc",
        "ls": "xy",
        "ll": "a,b",
        "lj": '{"a": 1}',
        "rg": "5",
        "md": "4",
        "sv": "12345",
        "nm": "1.5",
        "bl": "yes",
        "rq": "r",
        "nd": "n",
    }
    body = heat.stacks.validate(template=PARAMETERS, environment={"parameters": good})
    assert {n: p["Value"] for n, p in body["Parameters"].items()} == good


PARAMETER_REFUSALS = [
    pytest.param(
        f"{HEAD}parameters:\n  p: {{type: string}}\n",
        {"nope": "x"},
        "parameters.nope",
        "The Parameter (nope) was not defined in template.",
        id="a-name-the-template-lacks",
    ),
    pytest.param(
        f"{HEAD}parameters:\n  j: {{type: json}}\n",
        {"j": "{not json"},
        "parameters.j",
        "Parameter 'j' is invalid: Value must be valid JSON",
        id="json-that-does-not-parse",
    ),
    pytest.param(
        f"{HEAD}parameters:\n  n:\n    type: number\n    default: 10\n"
        "    constraints: [{range: {min: 1, max: 5}}]\n",
        {},
        "parameters.n.default",
        "Parameter 'n' is invalid: Invalid default 10 (10 is out of range (min: 1, max: 5))",
        id="a-default-outside-its-constraints",
    ),
    pytest.param(
        f"""{HEAD}parameters:
  n: {{type: number}}
conditions:
  one: {{equals: [{{get_param: n}}, 1]}}
resources:
  r: {{type: OS::Heat::None, condition: one}}
""",
        {},
        "resources.r.condition",
        "The Parameter (n) was not provided.",
        id="a-condition-reads-a-parameter-without-a-value",
    ),
]


@pytest.mark.parametrize(("template", "given", "path", "phrase"), PARAMETER_REFUSALS)
def test_validate_refuses_what_heat_refuses_of_parameters(
    heat: Client, template: str, given: dict[str, str], path: str, phrase: str
) -> None:
    message = _refusal(heat.stacks.validate, template=template, environment={"parameters": given})
    _located(message, path, phrase)

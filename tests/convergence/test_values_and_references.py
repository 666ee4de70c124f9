"""Values and references at create time, as Heat has them (issue 13).

* OS::Heat::Value checks ``value`` against ``type`` but its attribute is the
  value as given (heat/engine/resources/openstack/heat/value.py:
  ``_resolve_attribute`` reads the frozen definition with the class schema);
* a get_resource/get_attr whose name is computed orders the stack
  (heat/engine/hot/functions.py ``dependencies`` resolve the name);
* wallaby's two-argument ``if`` drops what holds it in properties too
  (heat/engine/hot/functions.py ``IfNullable``).
"""

from __future__ import annotations

from typing import Any

import pytest

from convection.common.errors import InvalidInput
from convection.model.compiler import StackInputs

from .conftest import Env

WALLABY = "heat_template_version: 2021-04-16\n"


def _create(env: Env, text: str, **parameters: Any) -> dict[str, Any]:
    env.stacks.create("p", "s", StackInputs.from_text(WALLABY + text, parameters=parameters))
    env.wait()
    return env.stacks.show("p", "s")


def _outputs(shown: dict[str, Any]) -> dict[str, Any]:
    return {o["output_key"]: o["output_value"] for o in shown["outputs"]}


def test_a_value_attribute_is_the_value_as_given(memory_env: Env) -> None:
    shown = _create(
        memory_env,
        """
parameters:
  flag: {type: boolean, default: true}
  text: {type: string, default: "42"}
resources:
  s: {type: OS::Heat::Value, properties: {type: string, value: {get_param: flag}}}
  n: {type: OS::Heat::Value, properties: {type: number, value: {get_param: text}}}
  b: {type: OS::Heat::Value, properties: {type: boolean, value: "false"}}
  j: {type: OS::Heat::Value, properties: {type: json, value: {a: [1]}}}
  l: {type: OS::Heat::Value, properties: {type: comma_delimited_list, value: [x, 1]}}
outputs:
  s: {value: {get_attr: [s, value]}}
  n: {value: {get_attr: [n, value]}}
  b: {value: {get_attr: [b, value]}}
  j: {value: {get_attr: [j, value]}}
  l: {value: {get_attr: [l, value]}}
""",
    )
    assert shown["stack_status"] == "CREATE_COMPLETE", shown["stack_status_reason"]
    assert _outputs(shown) == {"s": True, "n": "42", "b": "false", "j": {"a": [1]}, "l": ["x", 1]}


def test_a_value_of_the_wrong_type_is_refused_at_create(memory_env: Env) -> None:
    """Heat's create resolves the property (``with_value``) before the
    type's own check reads it, so the request is refused, not the resource
    failed."""
    with pytest.raises(InvalidInput) as caught:
        _create(
            memory_env,
            """
parameters:
  text: {type: string, default: '{"a": 1}'}
resources:
  j: {type: OS::Heat::Value, properties: {type: json, value: {get_param: text}}}
""",
        )
    assert "resources.j.properties.value: " in str(caught.value)
    assert "is not a map" in str(caught.value)


def test_a_computed_get_attr_waits_for_the_resource_it_names(memory_env: Env) -> None:
    shown = _create(
        memory_env,
        """
parameters:
  which: {type: string, default: second}
resources:
  first: {type: OS::Heat::RandomString, properties: {length: 8}}
  second: {type: OS::Heat::RandomString, properties: {length: 12}}
  copy:
    type: OS::Heat::Value
    properties: {value: {get_attr: [{get_param: which}, value]}}
outputs:
  copied: {value: {get_attr: [copy, value]}}
  second: {value: {get_attr: [second, value]}}
""",
    )
    assert shown["stack_status"] == "CREATE_COMPLETE", shown["stack_status_reason"]
    resources = memory_env.resources()
    assert resources["second"]["required_by"] == ["copy"]
    assert resources["first"]["required_by"] == []
    outputs = _outputs(shown)
    assert outputs["copied"] == outputs["second"] and len(outputs["second"]) == 12


def test_a_two_argument_if_drops_a_whole_properties_section(memory_env: Env) -> None:
    shown = _create(
        memory_env,
        """
parameters:
  on_: {type: boolean, default: false}
conditions:
  set: {get_param: on_}
resources:
  r:
    type: OS::Heat::TestResource
    properties: {if: [set, {value: given}]}
    metadata: {if: [set, {a: 1}]}
    deletion_policy: {if: [set, Retain]}
  v:
    type: OS::Heat::Value
    properties:
      value:
        keys: {kept: 1, dropped: {if: [set, 2]}}
        items: [1, {if: [set, 2]}, 3]
        joined: {list_join: [',', [a, {if: [set, b]}, c]]}
outputs:
  r: {value: {get_attr: [r, output]}}
  v: {value: {get_attr: [v, value]}}
  none: {value: {if: [set, 1]}}
""",
    )
    assert shown["stack_status"] == "CREATE_COMPLETE", shown["stack_status_reason"]
    assert _outputs(shown) == {
        "r": "test_string",
        "v": {"keys": {"kept": 1}, "items": [1, 3], "joined": "a,c"},
        "none": None,
    }

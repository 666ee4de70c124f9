"""What a stack reads of its nested stacks, as Heat's StackResource answers:
``get_attr: [owner, resource.NAME]`` and ``[owner, resource.NAME.ATTR, ...]``
through any depth (heat/engine/resources/template_resource.py
``get_attribute`` and heat/common/grouputils.py ``get_nested_attrs``), a
template resource's reference id as its nested stack's ARN (its
``get_reference_id``), a child's failing output as that child's
``output_error`` that does not fail the owner, and JSON nested templates.
"""

from __future__ import annotations

import json
import textwrap

from .conftest import HEADER, Env
from .test_nested import WEB, children, create, outputs

READER = """\
parameters:
  greeting: {type: string, default: hi}
resources:
  web:
    type: web.yaml
    properties:
      name: {get_param: greeting}
outputs:
  inner_ref: {value: {get_attr: [web, resource.v]}}
  inner_value: {value: {get_attr: [web, resource.v.value]}}
  inner_first: {value: {get_attr: [web, resource.v.value, 0]}}
  inner_split: {value: {get_attr: [web, resource.v, value]}}
  inner_split_first: {value: {get_attr: [web, resource.v, value, 0]}}
  web_ref: {value: {get_resource: web}}
"""


def test_resource_paths_read_the_nested_stacks_resources(env: Env) -> None:
    stack_id = create(env, READER, {"web.yaml": WEB})
    assert env.wait()["stack_status"] == "CREATE_COMPLETE"
    [child] = children(env.store, stack_id)
    [v] = env.store.list_resources(child.id, current_only=True)
    got = outputs(env)
    assert got["inner_value"] == "hi-plain"
    assert got["inner_first"] == "h"  # the rest of the path selects, as select_from_attribute
    # get_nested_attrs joins the key and the path: [web, resource.v, value]
    # is v's value, not a key of v's reference id.
    assert got["inner_split"] == "hi-plain"
    assert got["inner_split_first"] == "h"
    assert got["inner_ref"] == (v.physical_id or "v")
    assert got["web_ref"] == f"arn:openstack:heat::p:stacks/{child.name}/{child.id}"


def test_resource_paths_reach_through_nested_levels_and_updates(env: Env) -> None:
    middle = HEADER + textwrap.dedent(
        """\
        parameters:
          name: {type: string}
        resources:
          web:
            type: web.yaml
            properties: {name: {get_param: name}}
        """
    )
    parent = """\
    parameters:
      greeting: {type: string, default: hi}
    resources:
      mid:
        type: middle.yaml
        properties: {name: {get_param: greeting}}
    outputs:
      deep: {value: {get_attr: [mid, resource.web.resource.v.value]}}
    """
    files = {"middle.yaml": middle, "web.yaml": WEB}
    create(env, parent, files)
    assert env.wait()["stack_status"] == "CREATE_COMPLETE"
    assert outputs(env)["deep"] == "hi-plain"
    from .test_nested import inputs

    env.stacks.update("p", "s", inputs(parent, files, greeting="hello"))
    assert env.wait()["stack_status"] == "UPDATE_COMPLETE"
    assert outputs(env)["deep"] == "hello-plain"


def test_a_childs_failing_output_is_its_output_error_not_the_owners_failure(env: Env) -> None:
    web = WEB + "  broken:\n    value: {str_split: [',', {get_attr: [v, value]}, 5]}\n"
    parent = """\
    resources:
      web:
        type: web.yaml
        properties: {name: x}
    outputs:
      fine: {value: {get_attr: [web, value_out]}}
    """
    stack_id = create(env, parent, {"web.yaml": web})
    assert env.wait()["stack_status"] == "CREATE_COMPLETE"
    [child] = children(env.store, stack_id)
    broken = next(o for o in child.outputs if o["output_key"] == "broken")
    assert "output_error" in broken
    assert outputs(env)["fine"] == "x-plain"


def test_a_json_nested_template_gives_its_outputs_as_attributes(env: Env) -> None:
    web = {
        "heat_template_version": "2018-08-31",
        "parameters": {"name": {"type": "string"}},
        "resources": {
            "v": {"type": "OS::Heat::Value", "properties": {"value": {"get_param": "name"}}}
        },
        "outputs": {"value_out": {"value": {"get_attr": ["v", "value"]}}},
    }
    parent = """\
    resources:
      web:
        type: web.template
        properties: {name: from-json}
    outputs:
      got: {value: {get_attr: [web, value_out]}}
    """
    create(env, parent, {"web.template": json.dumps(web)})
    assert env.wait()["stack_status"] == "CREATE_COMPLETE"
    assert outputs(env)["got"] == "from-json"

"""Resource types as the user wrote them, as Heat shows them
(``Resource.type()`` is the definition's ``resource_type``): an alias, a
template resource's own file name, a group's members, events, and after an
update that renames an alias of the same class."""

from __future__ import annotations

from typing import Any

from heatclient.client import Client

WEB = """\
heat_template_version: 2018-08-31
resources:
  v: {type: OS::Heat::None}
"""


def template(alias: str) -> dict[str, Any]:
    return {
        "heat_template_version": "2018-08-31",
        "resources": {
            "a": {"type": alias},
            "t": {"type": "My::Web"},
            "f": {"type": "web.yaml"},
            "g": {
                "type": "OS::Heat::ResourceGroup",
                "properties": {"count": 2, "resource_def": {"type": alias}},
            },
        },
    }


ENV = {
    "resource_registry": {
        "My::Thing": "OS::Heat::None",
        "My::Other": "OS::Heat::None",
        "My::Web": "web.yaml",
    }
}


def types(heat: Client, stack_id: str, depth: int = 0) -> dict[str, str]:
    listed = heat.resources.list(stack_id, nested_depth=depth)
    return {
        f"{getattr(r, 'parent_resource', '') or ''}/{r.resource_name}": r.resource_type
        for r in listed
    }


def test_resources_and_events_show_the_type_as_written(heat: Client, settle: Any) -> None:
    created = heat.stacks.create(
        stack_name="types", template=template("My::Thing"), environment=ENV,
        files={"web.yaml": WEB},
    )  # fmt: skip
    stack = settle(heat, created["stack"]["id"])
    assert stack.stack_status == "CREATE_COMPLETE", stack.stack_status_reason
    top = types(heat, stack.id)
    assert (top["/a"], top["/t"], top["/f"]) == ("My::Thing", "My::Web", "web.yaml")
    assert top["/g"] == "OS::Heat::ResourceGroup"
    deep = types(heat, stack.id, depth=1)
    assert deep["g/0"] == deep["g/1"] == "My::Thing"
    assert heat.resources.get(stack.id, "t").resource_type == "My::Web"
    [first, *_] = heat.events.list(stack.id, resource_name="a")
    assert heat.events.get(stack.id, "a", first.id).resource_type == "My::Thing"

    heat.stacks.update(
        stack.id, template=template("My::Other"), environment=ENV, files={"web.yaml": WEB}
    )
    stack = settle(heat, stack.id)
    assert stack.stack_status == "UPDATE_COMPLETE", stack.stack_status_reason
    assert types(heat, stack.id)["/a"] == "My::Other"

"""Nested stacks at run time: template resources and OS::Heat::Stack.

A child stack is a real stack in the store, with its own traversal, run by
the same engine; these tests read it back from the store (memory, SQLite
and PostgreSQL) and check what Heat's users see: outputs as attributes, the
reference id, parameter_defaults reaching the child, the failing resource's
full path, update in place, delete, and the limits.
"""

from __future__ import annotations

import textwrap
from typing import Any

import pytest

from convection.common.limits import Limits
from convection.convergence import EngineConfig
from convection.model.compiler import StackInputs
from convection.service.stacks import Stacks, StacksConfig
from convection.store.api import StackRecord, Store

from .conftest import HEADER, Env

WEB = HEADER + textwrap.dedent(
    """\
    parameters:
      name: {type: string}
      extra: {type: string, default: plain}
    resources:
      v:
        type: OS::Heat::Value
        properties:
          value: {list_join: ['-', [{get_param: name}, {get_param: extra}]]}
    outputs:
      value_out:
        value: {get_attr: [v, value]}
    """
)

PARENT = """\
parameters:
  greeting: {type: string, default: hi}
resources:
  web:
    type: web.yaml
    properties:
      name: {get_param: greeting}
outputs:
  web_value:
    value: {get_attr: [web, value_out]}
  web_ref:
    value: {get_resource: web}
"""


def inputs(
    text: str,
    files: dict[str, str],
    *,
    env: str | None = None,
    **parameters: Any,
) -> StackInputs:
    envs = [("env.yaml", textwrap.dedent(env))] if env else []
    return StackInputs.from_text(
        HEADER + textwrap.dedent(text), files=files, environments=envs, parameters=parameters
    )


def create(env: Env, text: str, files: dict[str, str], name: str = "s", **kw: Any) -> str:
    environment = kw.pop("environment", None)
    params = kw.pop("parameters", {})
    made = env.stacks.create("p", name, inputs(text, files, env=environment, **params), **kw)
    return str(made["id"])


def outputs(env: Env, name: str = "s") -> dict[str, Any]:
    shown = env.stacks.show("p", name)
    return {o["output_key"]: o.get("output_value") for o in shown["outputs"]}


def children(store: Store, parent_id: str) -> list[StackRecord]:
    return [s for s in store.list_stacks("p", parent_id=parent_id)]


def test_template_resource_runs_as_a_child_stack(env: Env) -> None:
    stack_id = create(env, PARENT, {"web.yaml": WEB})
    assert env.wait()["stack_status"] == "CREATE_COMPLETE"
    [child] = children(env.store, stack_id)
    assert child.name.startswith("s-web-") and len(child.name) == len("s-web-") + 12
    assert (child.action, child.status) == ("CREATE", "COMPLETE")
    assert (child.parent_resource, child.root_id, child.nested_depth) == ("web", stack_id, 1)
    # Heat's TemplateResource.get_reference_id: the nested stack's ARN.
    arn = f"arn:openstack:heat::p:stacks/{child.name}/{child.id}"
    assert outputs(env) == {"web_value": "hi-plain", "web_ref": arn}
    web = env.resources()["web"]
    assert web["physical_resource_id"] == child.id
    root = env.store.get_stack_by_id(stack_id)
    assert root is not None and (root.resource_count, root.nested_resources) == (1, 1)


def test_os_stack_id_output_is_the_reference_id(env: Env) -> None:
    web = WEB + "  OS::stack_id:\n    value: {get_attr: [v, value]}\n"
    create(env, PARENT, {"web.yaml": web})
    env.wait()
    assert outputs(env)["web_ref"] == "hi-plain"


def test_registry_mapping_and_parameter_defaults_reach_the_child(env: Env) -> None:
    # My::Server, not a class type: a template standing in for one must fit
    # it (Heat's facade check, tests/model/test_facades.py).
    parent = """\
    resources:
      server:
        type: My::Server
        properties:
          name: mapped
    outputs:
      out:
        value: {get_attr: [server, value_out]}
    """
    environment = """\
    resource_registry:
      My::Server: web.yaml
    parameter_defaults:
      extra: from-defaults
    """
    create(env, parent, {"web.yaml": WEB}, environment=environment)
    assert env.wait()["stack_status"] == "CREATE_COMPLETE"
    assert outputs(env) == {"out": "mapped-from-defaults"}


def test_update_converges_the_same_child_in_place(env: Env) -> None:
    stack_id = create(env, PARENT, {"web.yaml": WEB})
    env.wait()
    [before] = children(env.store, stack_id)
    env.stacks.update("p", "s", inputs(PARENT, {"web.yaml": WEB}, greeting="hello"))
    assert env.wait()["stack_status"] == "UPDATE_COMPLETE"
    [after] = children(env.store, stack_id)
    assert after.id == before.id
    assert (after.action, after.status) == ("UPDATE", "COMPLETE")
    assert outputs(env)["web_value"] == "hello-plain"
    assert env.resources()["web"]["resource_status"] == "UPDATE_COMPLETE"


def test_delete_deletes_the_child_and_releases_its_count(env: Env) -> None:
    stack_id = create(env, PARENT, {"web.yaml": WEB})
    env.wait()
    [child] = children(env.store, stack_id)
    env.stacks.delete("p", "s")
    env.wait()
    gone = env.store.get_stack_by_id(child.id)
    assert gone is not None and (gone.action, gone.status) == ("DELETE", "COMPLETE")
    assert gone.deleted_at is not None
    root = env.store.get_stack_by_id(stack_id)
    assert root is not None and root.nested_resources == 0


def test_deleting_an_owner_does_not_sleep_a_whole_poll(env: Env) -> None:
    """A child's end cannot wake an owner waiting in a cleanup node, so the
    owner's delete polls at growing intervals: a child that is gone in a
    moment is seen in a moment, not after ``poll_seconds`` (5 s)."""
    stack_id = create(env, PARENT, {"web.yaml": WEB})
    env.wait()
    env.stacks.delete("p", "s")
    env.stacks.wait(stack_id, timeout=4.0)  # raises TimeoutError if it slept 5 s
    gone = env.store.get_stack_by_id(stack_id)
    assert gone is not None and (gone.action, gone.status) == ("DELETE", "COMPLETE")


def test_a_nested_failure_names_its_full_path(env: Env) -> None:
    web = HEADER + textwrap.dedent(
        """\
        resources:
          server:
            type: OS::Heat::TestResource
            properties: {fail: true}
        """
    )
    parent = """\
    resources:
      web: {type: web.yaml}
    """
    create(env, parent, {"web.yaml": web})
    shown = env.wait()
    assert shown["stack_status"] == "CREATE_FAILED"
    reason = env.resources()["web"]["resource_status_reason"]
    assert reason.startswith("Error: resources.web.resources.server: ")
    assert shown["stack_status_reason"].startswith(
        "Resource CREATE failed: Error: resources.web.resources.server: "
    )


def test_two_levels_deep_and_back(env: Env) -> None:
    inner = WEB
    middle = HEADER + textwrap.dedent(
        """\
        parameters:
          name: {type: string}
        resources:
          inner:
            type: inner.yaml
            properties: {name: {get_param: name}}
        outputs:
          value_out: {value: {get_attr: [inner, value_out]}}
        """
    )
    parent = PARENT.replace("web.yaml", "middle.yaml")
    stack_id = create(env, parent, {"middle.yaml": middle, "inner.yaml": inner})
    assert env.wait()["stack_status"] == "CREATE_COMPLETE"
    assert outputs(env)["web_value"] == "hi-plain"
    [mid] = children(env.store, stack_id)
    [deep] = children(env.store, mid.id)
    assert (deep.nested_depth, deep.root_id) == (2, stack_id)
    root = env.store.get_stack_by_id(stack_id)
    assert root is not None and root.nested_resources == 2
    env.stacks.delete("p", "s")
    env.wait()
    gone = env.store.get_stack_by_id(deep.id)
    assert gone is not None and gone.deleted_at is not None


OS_STACK = """\
resources:
  inner:
    type: OS::Heat::Stack
    properties:
      template: {get_file: web.yaml}
      parameters: {name: {get_param: greeting}}
      timeout: 10
outputs:
  all: {value: {get_attr: [inner, outputs]}}
  name: {value: {get_attr: [inner, stack_name]}}
  ref: {value: {get_resource: inner}}
parameters:
  greeting: {type: string, default: hi}
"""


def test_os_heat_stack_create_update_delete(env: Env) -> None:
    stack_id = create(env, OS_STACK, {"web.yaml": WEB})
    assert env.wait()["stack_status"] == "CREATE_COMPLETE"
    [child] = children(env.store, stack_id)
    assert outputs(env) == {"all": {"value_out": "hi-plain"}, "name": child.name, "ref": child.id}
    assert child.timeout_mins == 10
    env.stacks.update("p", "s", inputs(OS_STACK, {"web.yaml": WEB}, greeting="yo"))
    assert env.wait()["stack_status"] == "UPDATE_COMPLETE"
    assert outputs(env)["all"] == {"value_out": "yo-plain"}
    env.stacks.delete("p", "s")
    env.wait()
    gone = env.store.get_stack_by_id(child.id)
    assert gone is not None and gone.deleted_at is not None


def test_os_heat_stack_refuses_a_remote_region(env: Env) -> None:
    text = OS_STACK.replace("timeout: 10", "context: {region_name: RegionTwo}")
    with pytest.raises(Exception, match="local region only"):
        create(env, text, {"web.yaml": WEB})


def limited(store: Store, **limits: int) -> Stacks:
    config = StacksConfig(limits=Limits(**limits), engine=EngineConfig(scan_seconds=0.05))
    return Stacks(store, config=config)


def test_nesting_depth_limit_and_the_recursion_chain(store: Store) -> None:
    stacks = limited(store, max_nested_stack_depth=2)
    looped = HEADER + "resources:\n  again: {type: loop.yaml}\n"
    text = "resources:\n  top: {type: loop.yaml}\n"
    made = stacks.create("p", "s", inputs(text, {"loop.yaml": looped}))
    shown = stacks.wait(made["id"], timeout=60)
    assert shown["stack_status"] == "CREATE_FAILED"
    reason = shown["stack_status_reason"]
    assert "RequestLimitExceeded: resources.top.resources.again.resources.again: " in reason
    assert "Recursion depth exceeds 2." in reason
    assert "The template loop.yaml includes itself: loop.yaml -> loop.yaml -> loop.yaml." in reason


def test_resources_count_across_the_whole_tree(store: Store) -> None:
    stacks = limited(store, max_resources_per_stack=4)
    web = HEADER + "resources:\n  a: {type: OS::Heat::None}\n  b: {type: OS::Heat::None}\n"
    text = "resources:\n  one: {type: web.yaml}\n  two: {type: web.yaml}\n"
    made = stacks.create("p", "s", inputs(text, {"web.yaml": web}))
    shown = stacks.wait(made["id"], timeout=60)
    assert shown["stack_status"] == "CREATE_FAILED"
    assert "You have reached the maximum resources per stack" in shown["stack_status_reason"]
    root = store.get_stack_by_id(made["id"])
    # The root's 2 plus the one child that fitted (2): the other was refused.
    assert root is not None and (root.resource_count, root.nested_resources) == (2, 2)


def test_resource_facade_reads_the_owner(env: Env) -> None:
    web = HEADER + textwrap.dedent(
        """\
        resources:
          v:
            type: OS::Heat::Value
            properties:
              value:
                meta: {resource_facade: metadata}
                policy: {resource_facade: deletion_policy}
        outputs:
          seen: {value: {get_attr: [v, value]}}
        """
    )
    parent = """\
    parameters:
      role: {type: string, default: frontend}
    resources:
      web:
        type: web.yaml
        metadata: {role: {get_param: role}}
    outputs:
      seen: {value: {get_attr: [web, seen]}}
    """
    create(env, parent, {"web.yaml": web})
    assert env.wait()["stack_status"] == "CREATE_COMPLETE"
    assert outputs(env)["seen"] == {"meta": {"role": "frontend"}, "policy": "Delete"}


def test_a_nested_random_string_output_shows_in_the_parent(env: Env) -> None:
    web = HEADER + textwrap.dedent(
        """\
        resources:
          pw: {type: OS::Heat::RandomString}
        outputs:
          password: {value: {get_attr: [pw, value]}}
        """
    )
    parent = """\
    resources:
      web: {type: web.yaml}
    outputs:
      password: {value: {get_attr: [web, password]}}
    """
    create(env, parent, {"web.yaml": web})
    env.wait()
    [stored] = env.stacks.store.get_stack("p", "s").outputs  # type: ignore[union-attr]
    assert "secret" not in stored
    [shown] = env.stacks.show("p", "s")["outputs"]
    # As Heat: the child's output is its value, and the parent's reads it.
    assert shown["output_value"] == stored["output_value"]
    assert isinstance(shown["output_value"], str) and len(shown["output_value"]) == 32


def test_a_changed_template_file_updates_the_child(env: Env) -> None:
    stack_id = create(env, PARENT, {"web.yaml": WEB})
    env.wait()
    changed = WEB.replace("['-', [", "['+', [")
    env.stacks.update("p", "s", inputs(PARENT, {"web.yaml": changed}))
    assert env.wait()["stack_status"] == "UPDATE_COMPLETE"
    assert outputs(env)["web_value"] == "hi+plain"
    [child] = children(env.store, stack_id)
    assert (child.action, child.status) == ("UPDATE", "COMPLETE")
    # Unchanged template and properties: the child is left alone.
    env.stacks.update("p", "s", inputs(PARENT, {"web.yaml": changed}))
    env.wait()
    [same] = children(env.store, stack_id)
    assert same.updated_at == child.updated_at

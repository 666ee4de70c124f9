"""Wait conditions inside a nested stack, and a replaced handle.

Heat: a wait condition counts the signals its handle holds; a handle that
is replaced (``OS::Heat::UpdateWaitConditionHandle`` on every update, or a
``WaitConditionHandle`` whose properties force a replacement) starts with
no signals, so the wait condition depending on it, replaced too, waits for
new ones. Old signals never count.
"""

from __future__ import annotations

import json
import textwrap
from typing import Any

from convection.model.compiler import StackInputs

from .conftest import HEADER, Env

WAITER = HEADER + textwrap.dedent(
    """\
    parameters:
      transport: {type: string, default: TOKEN_SIGNAL}
    resources:
      handle:
        type: OS::Heat::WaitConditionHandle
        properties: {signal_transport: {get_param: transport}}
      wc:
        type: OS::Heat::WaitCondition
        properties: {handle: {get_resource: handle}, timeout: 60}
    outputs:
      data: {value: {get_attr: [wc, data]}}
    """
)

PARENT = """\
parameters:
  transport: {type: string, default: TOKEN_SIGNAL}
resources:
  waiter:
    type: waiter.yaml
    properties: {transport: {get_param: transport}}
outputs:
  data: {value: {get_attr: [waiter, data]}}
"""


def inputs(**parameters: Any) -> StackInputs:
    return StackInputs.from_text(
        HEADER + PARENT, files={"waiter.yaml": WAITER}, parameters=parameters
    )


def child_name(env: Env) -> str:
    parent = env.store.get_stack("p", "s")
    assert parent is not None
    [child] = env.store.list_stacks("p", parent_id=parent.id)
    return child.name


def waiting_in_child(env: Env, action: str) -> bool:
    parent = env.store.get_stack("p", "s")
    children = env.store.list_stacks("p", parent_id=parent.id) if parent else []
    if not children:
        return False
    rows = env.store.list_resources(children[0].id)
    return any(r.name == "wc" and (r.action, r.status) == (action, "IN_PROGRESS") for r in rows)


def output(env: Env) -> Any:
    [out] = env.stacks.show("p", "s")["outputs"]
    return json.loads(out["output_value"])


def test_a_nested_wait_condition_is_signalled_through_its_child(env: Env) -> None:
    env.stacks.create("p", "s", inputs())
    env.run_until(lambda: waiting_in_child(env, "CREATE"))
    env.stacks.signal("p", child_name(env), "handle", {"id": "a", "data": "first"})
    assert env.wait()["stack_status"] == "CREATE_COMPLETE"
    assert output(env) == {"a": "first"}


def test_a_replaced_handle_starts_with_no_signals(env: Env) -> None:
    env.stacks.create("p", "s", inputs())
    env.run_until(lambda: waiting_in_child(env, "CREATE"))
    env.stacks.signal("p", child_name(env), "handle", {"id": "a", "data": "first"})
    assert env.wait()["stack_status"] == "CREATE_COMPLETE"
    # signal_transport is not update_allowed: the handle is replaced, and
    # so is the wait condition that names it; it waits for a new signal.
    env.stacks.update("p", "s", inputs(transport="NO_SIGNAL"))
    env.run_until(lambda: waiting_in_child(env, "CREATE"))
    env.stacks.signal("p", child_name(env), "handle", {"id": "b", "data": "second"})
    assert env.wait()["stack_status"] == "UPDATE_COMPLETE"
    assert output(env) == {"b": "second"}

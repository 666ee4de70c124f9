"""restricted_actions, and what a rollback of a failed create leaves in the
event log, as Heat does them.

Expectations follow ``heat_integrationtests/functional/test_update_restricted.py``:
a restricted update or replace fails the stack, leaves the resource in the
state it was (so a later unrestricted update still updates it in place),
and records an ``UPDATE_FAILED`` event "update is restricted for resource.".
"""

from __future__ import annotations

import textwrap
from typing import Any

from convection.model.compiler import StackInputs

from .conftest import HEADER

ONE = """
resources:
  bar: {type: Test::Rec, properties: {value: '1234'}}
"""

BOTH = "resource_registry: {resources: {bar: {restricted_actions: [update, replace]}}}\n"
REPLACE_ONLY = "resource_registry: {resources: {'*ar': {restricted_actions: replace}}}\n"


def update(env: Any, text: str, env_text: str) -> dict[str, Any]:
    inputs = StackInputs.from_text(
        HEADER + textwrap.dedent(text), environments=[("env.yaml", env_text)]
    )
    env.stacks.update("p", "s", inputs)
    return dict(env.wait())


def reasons(env: Any, status: str) -> list[str]:
    found = env.stacks.events("p", "s", resource_name="bar")
    return [e["resource_status_reason"] for e in found if e["resource_status"] == status]


def test_restricted_update(env: Any) -> None:
    env.create(ONE)
    env.wait()
    before = env.resources()["bar"]["physical_resource_id"]
    changed = ONE.replace("'1234'", "'4567'")  # value is update_allowed: in place
    shown = update(env, changed, BOTH)
    assert (shown["stack_status"], shown["stack_status_reason"]) == (
        "UPDATE_FAILED",
        "Resource UPDATE failed: ResourceActionRestricted: resources.bar: "
        "update is restricted for resource.",
    )
    assert env.resource_status("bar") == "CREATE_COMPLETE"
    assert reasons(env, "UPDATE_FAILED") == ["update is restricted for resource."]
    assert env.rec.ops("update", "delete") == []

    # Only replace restricted: the in-place update goes through.
    assert update(env, changed, REPLACE_ONLY)["stack_status"] == "UPDATE_COMPLETE"
    assert env.resource_status("bar") == "UPDATE_COMPLETE"
    assert env.resources()["bar"]["physical_resource_id"] == before
    assert reasons(env, "UPDATE_FAILED") == ["update is restricted for resource."]


def test_restricted_replace(env: Any) -> None:
    env.create(ONE)
    env.wait()
    changed = ONE.replace("value: '1234'", "value: '1234', fixed: x")  # fixed: replace
    for env_text in (BOTH, REPLACE_ONLY):
        shown = update(env, changed, env_text)
        assert shown["stack_status"] == "UPDATE_FAILED"
        assert shown["stack_status_reason"].endswith(
            "resources.bar: replace is restricted for resource."
        )
        assert env.resource_status("bar") == "CREATE_COMPLETE"
    assert reasons(env, "UPDATE_FAILED") == ["replace is restricted for resource."] * 2
    assert env.rec.ops("create") == [("create", "bar")]  # never replaced


def test_restricted_replace_of_a_type_change(env: Any) -> None:
    env.create(ONE)
    env.wait()
    shown = update(env, ONE.replace("Test::Rec", "OS::Heat::None"), REPLACE_ONLY)
    assert shown["stack_status"] == "UPDATE_FAILED"
    assert env.resource_status("bar") == "CREATE_COMPLETE"
    assert reasons(env, "UPDATE_FAILED") == ["replace is restricted for resource."]


THREE = """
resources:
  a: {type: Test::Rec, properties: {value: one}}
  b: {type: Test::Rec, properties: {value: {get_resource: a}}}
  c: {type: Test::Rec, properties: {value: {get_resource: b}}}
"""


def test_rollback_of_a_failed_create_leaves_no_trace_of_what_never_existed(env: Any) -> None:
    """Heat deletes what a failed create made; a resource it never started
    (c, after b failed) is dropped without DELETE events."""
    env.rec.fail[("create", "b")] = "no"
    env.create(THREE, enable_rollback=True)
    assert env.wait()["stack_status"] == "ROLLBACK_COMPLETE"
    by_resource: dict[str, list[str]] = {}
    for e in env.stacks.events("p", "s"):
        by_resource.setdefault(e["resource_name"], []).append(e["resource_status"])
    assert by_resource["a"] == [
        "CREATE_IN_PROGRESS",
        "CREATE_COMPLETE",
        "DELETE_IN_PROGRESS",
        "DELETE_COMPLETE",
    ]
    assert by_resource["b"] == [
        "CREATE_IN_PROGRESS",
        "CREATE_FAILED",
        "DELETE_IN_PROGRESS",
        "DELETE_COMPLETE",
    ]
    assert "c" not in by_resource
    assert env.resources() == {}
    stack_id = env.store.get_stack("p", "s").id
    assert env.store.list_resources(stack_id) == []

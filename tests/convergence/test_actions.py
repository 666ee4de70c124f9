"""Whole-stack actions, deletion policies and concurrency bounds."""

from __future__ import annotations

from typing import Any

import pytest

from convection.common.errors import Conflict
from convection.convergence import EngineConfig

CHAIN = """
resources:
  a: {type: Test::Rec, properties: {value: one}}
  b: {type: Test::Rec, properties: {value: {get_resource: a}}}
  c: {type: Test::Rec, properties: {value: {get_resource: b}}}
"""


def test_check_marks_drifted_resources(env: Any) -> None:
    env.create(CHAIN)
    env.wait()
    env.rec.drift["b"] = "size is 3, expected 4"
    env.stacks.check("p", "s")
    shown = env.wait()
    assert (shown["stack_status"], shown["stack_status_reason"]) == (
        "CHECK_FAILED",
        "Resource CHECK failed: size is 3, expected 4",
    )
    res = env.resources()
    assert res["b"]["resource_status"] == "CHECK_FAILED"
    assert res["a"]["resource_status"] == res["c"]["resource_status"] == "CHECK_COMPLETE"
    # Every resource is checked, dependents of the drifted one too.
    assert sorted(env.rec.ops("check")) == [("check", n) for n in "abc"]
    env.rec.calls.clear()
    env.update(CHAIN)
    assert env.wait()["stack_status"] == "UPDATE_COMPLETE"
    assert env.rec.ops("create", "delete")[:1] == [("create", "b")]


def test_check_of_a_type_without_check_is_complete(env: Any) -> None:
    env.create("resources:\n  n: {type: OS::Heat::None}\n")
    env.wait()
    env.stacks.check("p", "s")
    assert env.wait()["stack_status"] == "CHECK_COMPLETE"
    res = env.resources()["n"]
    assert res["resource_status_reason"] == "CHECK not supported for OS::Heat::None"


def test_suspend_in_reverse_order_and_resume_in_order(env: Any) -> None:
    env.create(CHAIN)
    env.wait()
    env.stacks.suspend("p", "s")
    assert env.wait()["stack_status"] == "SUSPEND_COMPLETE"
    assert env.rec.ops("suspend") == [("suspend", "c"), ("suspend", "b"), ("suspend", "a")]
    with pytest.raises(Conflict, match="suspended"):
        env.update(CHAIN)
    env.stacks.resume("p", "s")
    assert env.wait()["stack_status"] == "RESUME_COMPLETE"
    assert env.rec.ops("resume") == [("resume", "a"), ("resume", "b"), ("resume", "c")]
    assert {r["resource_status"] for r in env.resources().values()} == {"RESUME_COMPLETE"}


def test_mark_unhealthy_then_update_replaces(env: Any) -> None:
    env.create(CHAIN)
    env.wait()
    env.stacks.mark_unhealthy("p", "s", "c", "disk gone")
    res = env.resources()["c"]
    assert (res["resource_status"], res["resource_status_reason"]) == ("CHECK_FAILED", "disk gone")
    env.rec.calls.clear()
    env.update(CHAIN)
    assert env.wait()["stack_status"] == "UPDATE_COMPLETE"
    assert env.rec.ops("create", "delete") == [("create", "c"), ("delete", "c")]


def test_delete_honours_retain_and_external_id(env: Any) -> None:
    text = """
resources:
  plain: {type: Test::Rec}
  kept: {type: Test::Rec, deletion_policy: Retain}
  outside: {type: Test::Rec, external_id: ext-123}
"""
    env.create(text)
    shown = env.wait()
    assert shown["stack_status"] == "CREATE_COMPLETE"
    res = env.resources()
    assert res["outside"]["physical_resource_id"] == "ext-123"
    assert ("create", "outside") not in env.rec.calls
    env.stacks.delete("p", "s")
    assert env.wait()["stack_status"] == "DELETE_COMPLETE"
    assert env.rec.ops("delete") == [("delete", "plain")]
    stack_id = env.store.get_stack("p", shown["id"]).id
    assert env.store.list_resources(stack_id) == []
    deleted = [
        e["resource_name"]
        for e in env.stacks.events("p", stack_id)
        if e["resource_status"] == "DELETE_COMPLETE"
    ]
    assert sorted(deleted) == ["kept", "outside", "plain", "s"]


@pytest.mark.parametrize("limit", [1, 3])
def test_concurrency_bound(memory_env: Any, limit: int) -> None:
    env = memory_env
    env.stacks.config = type(env.stacks.config)(
        engine=EngineConfig(concurrency=limit, scan_seconds=0.05)
    )
    env.stacks._engine = None
    env.rec.hold = 0.01
    text = "resources:\n" + "".join(f"  r{i}: {{type: Test::Rec}}\n" for i in range(12))
    env.create(text)
    assert env.wait()["stack_status"] == "CREATE_COMPLETE"
    assert env.rec.peak == limit
    assert env.stacks.engine.peak == limit


def test_per_type_bound(memory_env: Any) -> None:
    env = memory_env
    env.stacks.config = type(env.stacks.config)(
        engine=EngineConfig(concurrency=10, per_type={"Test::Rec": 2}, scan_seconds=0.05)
    )
    env.stacks._engine = None
    env.rec.hold = 0.01
    text = "resources:\n" + "".join(f"  r{i}: {{type: Test::Rec}}\n" for i in range(8))
    env.create(text)
    assert env.wait()["stack_status"] == "CREATE_COMPLETE"
    assert env.rec.peak == 2


def test_waits_use_timers_not_workers(memory_env: Any) -> None:
    env = memory_env
    env.stacks.config = type(env.stacks.config)(
        engine=EngineConfig(concurrency=2, scan_seconds=0.05)
    )
    env.stacks._engine = None
    text = "resources:\n" + "".join(
        f"  r{i}: {{type: Test::Rec, properties: {{wait: 0.3}}}}\n" for i in range(10)
    )
    env.create(text)
    import time

    start = time.monotonic()
    assert env.wait()["stack_status"] == "CREATE_COMPLETE"
    # Ten 0.3 s waits with two workers: far less than 10 * 0.3 / 2 s.
    assert time.monotonic() - start < 1.4


def test_completions_of_one_turn_share_a_commit(env: Any) -> None:
    text = "resources:\n" + "".join(f"  r{i}: {{type: OS::Heat::None}}\n" for i in range(50))
    env.create(text)
    assert env.wait()["stack_status"] == "CREATE_COMPLETE"
    # 50 independent creates: one batch for their IN_PROGRESS states,
    # placeholder ids (OS::Heat::None's need no commit of their own) and
    # completions, and the stack's own end.
    assert env.stacks.engine.journal.commits <= 2


def test_another_engine_takes_over(env: Any) -> None:
    from convection.service.stacks import Stacks, StacksConfig

    env.create("resources:\n  slow: {type: Test::Rec, properties: {wait: 0.3}}\n")
    env.run_until(lambda: env.resource_status("slow") == "CREATE_IN_PROGRESS")
    # A second service on the same store, as another process would be.
    other = Stacks(
        env.store, env.registry, config=StacksConfig(engine=EngineConfig(scan_seconds=0.05))
    )
    stack_id = env.store.get_stack("p", "s").id
    assert other.wait(stack_id, timeout=30)["stack_status"] == "CREATE_COMPLETE"
    assert env.rec.ops("create") == [("create", "slow")]


def test_signal_reaches_the_plugin(env: Any) -> None:
    env.create("resources:\n  a: {type: Test::Rec}\n  n: {type: OS::Heat::None}\n")
    env.wait()
    env.stacks.signal("p", "s", "a", {"status": "SUCCESS"})
    assert env.rec.ops("signal") == [("signal", "a")]
    with pytest.raises(Conflict, match="does not accept signals"):
        env.stacks.signal("p", "s", "n", {})
    events = [e for e in env.stacks.events("p", "s") if e["resource_status"] == "SIGNAL_COMPLETE"]
    assert [e["resource_name"] for e in events] == ["a"]


@pytest.mark.parametrize(
    ("before", "after"),
    [("ext-123", "ext-456"), (None, "ext-456"), ("ext-123", None)],
)
def test_changing_external_id_fails_the_update_as_heat(
    env: Any, before: str | None, after: str | None
) -> None:
    """Heat's Resource.update: any change of external_id is NotSupported;
    the resource is left as it was, nothing is created or deleted."""

    def template(external: str | None, note: str) -> str:
        ext = f", external_id: {external}" if external else ""
        return f"resources:\n  r: {{type: Test::Rec, properties: {{value: {note}}}{ext}}}\n"

    env.create(template(before, "a"))
    assert env.wait()["stack_status"] == "CREATE_COMPLETE"
    env.rec.calls.clear()
    env.update(template(after, "a"))
    shown = env.wait()
    assert shown["stack_status"] == "UPDATE_FAILED"
    why = "Update to property external_id of r (Test::Rec) is not supported."
    assert shown["stack_status_reason"] == (
        f"Resource UPDATE failed: NotSupported: resources.r: {why}"
    )
    assert env.rec.ops("create", "update", "delete") == []


def test_an_external_resource_is_never_updated(env: Any) -> None:
    text = "resources:\n  r: {{type: Test::Rec, properties: {{value: {}}}, external_id: ext-1}}\n"
    env.create(text.format("a"))
    assert env.wait()["stack_status"] == "CREATE_COMPLETE"
    env.update(text.format("b"))
    assert env.wait()["stack_status"] == "UPDATE_COMPLETE"
    assert env.rec.ops("create", "update", "delete") == []
    assert env.resources()["r"]["physical_resource_id"] == "ext-1"

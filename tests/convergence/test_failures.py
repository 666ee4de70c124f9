"""Rollback, cancel, timeout and superseding an operation in progress."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from convection.convergence import frontend
from convection.service.stacks import Stacks
from convection.store.api import UpdateTraversal


def _stack_statuses(env: Any) -> list[str]:
    """The statuses of the stack's own events, oldest first."""
    return [e["resource_status"] for e in env.stacks.events("p", "s") if e["resource_name"] == "s"]


TWO = """
resources:
  a: {type: Test::Rec, properties: {value: one}}
  b: {type: Test::Rec, properties: {value: {get_resource: a}}}
"""

SLOW = """
resources:
  fast: {type: Test::Rec, properties: {value: v}}
  slow: {type: Test::Rec, properties: {value: v, wait: 30}}
"""


def test_failed_create_rolls_back_to_nothing(env: Any) -> None:
    env.rec.fail[("create", "b")] = "no"
    env.create(TWO, enable_rollback=True)
    shown = env.wait()
    assert (shown["stack_status"], shown["stack_status_reason"]) == (
        "ROLLBACK_COMPLETE",
        "Stack ROLLBACK completed successfully",
    )
    assert env.resources() == {}
    assert env.rec.ops("create", "delete") == [
        ("create", "a"),
        ("create", "b"),
        ("delete", "b"),
        ("delete", "a"),
    ]
    statuses = [
        e["resource_status"] for e in env.stacks.events("p", "s") if e["resource_name"] == "s"
    ]
    assert statuses == [
        "CREATE_IN_PROGRESS",
        "CREATE_FAILED",
        "ROLLBACK_IN_PROGRESS",
        "ROLLBACK_COMPLETE",
    ]


def test_a_crash_before_the_rollback_starts_is_rolled_back_by_the_next_engine(
    env: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The failure is written first, the rollback's start next: between the
    two, the stack stays in progress (no reader sees a failed stack about
    to roll back) and an engine that dies there leaves a traversal the next
    engine ends and rolls back."""
    env.rec.fail[("create", "b")] = "no"
    monkeypatch.setattr(frontend.StackFrontEnd, "_rollback", lambda self, run: None)  # dies here
    env.create(TWO, enable_rollback=True)
    stack_id = env.store.get_stack("p", "s").id
    env.run_until(lambda: "CREATE_FAILED" in _stack_statuses(env))
    assert env.status() == ("CREATE_IN_PROGRESS", "Stack CREATE started")
    statuses = [e["resource_status"] for e in env.stacks.events("p", "s")]
    assert statuses[-1] == "CREATE_FAILED"
    monkeypatch.undo()
    fresh = Stacks(env.store, env.registry)  # another process's engine
    assert fresh.wait(stack_id, timeout=60)["stack_status"] == "ROLLBACK_COMPLETE"
    assert env.resources() == {}
    stack_events = _stack_statuses(env)
    assert stack_events.count("CREATE_FAILED") == 1  # the second engine saw it written
    assert stack_events[-2:] == ["ROLLBACK_IN_PROGRESS", "ROLLBACK_COMPLETE"]


def test_a_rollback_that_cannot_start_fails_the_stack(
    env: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*_: Any) -> Any:
        raise RuntimeError("no target")

    monkeypatch.setattr(frontend, "rollback_operation", broken)
    env.rec.fail[("create", "b")] = "no"
    env.create(TWO, enable_rollback=True)
    status, reason = env.wait()["stack_status"], env.status()[1]
    assert status == "CREATE_FAILED"
    assert reason.endswith("RuntimeError: rollback could not start: no target")


def test_a_stack_without_a_timeout_gets_the_default_deadline(env: Any) -> None:
    """Stored as given (None, shown null as in Heat); the traversal's
    deadline is the engine's ``default_timeout_mins``, and plugins see it."""
    before = datetime.now(UTC)
    env.create(TWO)
    stack = env.store.get_stack("p", "s")
    assert stack is not None and stack.timeout_mins is None
    traversal = env.store.get_traversal(stack.traversal_id)
    default = env.stacks.config.engine.default_timeout_mins
    assert traversal is not None and traversal.deadline is not None
    minutes = (traversal.deadline - before).total_seconds() / 60
    assert default <= minutes < default + 1
    assert env.wait()["stack_status"] == "CREATE_COMPLETE"
    assert env.stacks.show("p", "s")["timeout_mins"] is None


def test_failed_update_rolls_back_and_restores_the_replaced_resource(env: Any) -> None:
    env.create(TWO)
    env.wait()
    before = env.resources()
    env.rec.fail[("update", "b")] = "refused"
    env.rec.calls.clear()
    env.update(TWO.replace("value: one", "value: one, fixed: new"), rollback=True)
    shown = env.wait()
    assert shown["stack_status"] == "ROLLBACK_COMPLETE"
    after = env.resources()
    # The original a came back: same physical resource, nothing re-created.
    assert after["a"]["physical_resource_id"] == before["a"]["physical_resource_id"]
    # b failed its update, so (as in Heat) rollback replaces it.
    calls = env.rec.ops("create", "delete")
    assert calls[:2] == [("create", "a"), ("create", "b")]
    assert sorted(calls[2:]) == [("delete", "a"), ("delete", "b")]
    stack_id = env.store.get_stack("p", "s").id
    assert sorted(r.name for r in env.store.list_resources(stack_id)) == ["a", "b"]


def test_update_failure_without_rollback_leaves_the_stack_failed(env: Any) -> None:
    env.create(TWO)
    env.wait()
    env.rec.fail[("update", "a")] = "nope"
    env.update(TWO.replace("value: one", "value: two"))
    assert env.status() == ("UPDATE_IN_PROGRESS", "Stack UPDATE started")
    assert env.wait()["stack_status_reason"] == ("Resource UPDATE failed: Error: resources.a: nope")


def _in_progress(env: Any, resource: str) -> bool:
    return str(env.resource_status(resource)).endswith("_IN_PROGRESS")


def test_cancel_with_rollback(env: Any) -> None:
    env.create(TWO)
    env.wait()
    env.update(SLOW)
    env.run_until(lambda: _in_progress(env, "slow"))
    env.stacks.cancel_update("p", "s", rollback=True)
    shown = env.wait()
    assert shown["stack_status"] == "ROLLBACK_COMPLETE"
    assert set(env.resources()) == {"a", "b"}


def test_cancel_without_rollback_stops_starting_work(env: Any) -> None:
    text = SLOW + "  after: {type: Test::Rec, properties: {value: {get_resource: slow}}}\n"
    env.create(text)
    env.run_until(lambda: _in_progress(env, "slow"))
    env.stacks.cancel_update("p", "s", rollback=False)
    assert env.status() == ("CREATE_FAILED", "Stack CREATE cancelled")
    env.wait()
    assert env.resource_status("after") == "INIT_COMPLETE"
    assert ("create", "after") not in env.rec.calls


def test_timeout_fails_the_stack(env: Any) -> None:
    stack_id = env.create(SLOW, timeout_mins=5)
    traversal_id = env.store.get_stack_by_id(stack_id).traversal_id
    env.store.apply([UpdateTraversal(traversal_id, {"deadline": datetime.now(UTC)})])
    shown = env.wait()
    assert (shown["stack_status"], shown["stack_status_reason"]) == ("CREATE_FAILED", "Timed out")


def test_update_supersedes_an_update_in_progress(env: Any) -> None:
    env.create(SLOW)
    env.run_until(lambda: _in_progress(env, "slow"))
    env.update(SLOW.replace("wait: 30", "wait: 0"))
    shown = env.wait()
    assert shown["stack_status"] == "UPDATE_COMPLETE"
    res = env.resources()
    assert {r["resource_status"] for r in res.values()} <= {"CREATE_COMPLETE", "UPDATE_COMPLETE"}
    stack_id = env.store.get_stack("p", "s").id
    rows = env.store.list_resources(stack_id)
    assert sorted(r.name for r in rows) == ["fast", "slow"]
    # The interrupted create was replaced: created twice, the first deleted.
    assert env.rec.ops("create", "delete").count(("create", "slow")) == 2
    assert ("delete", "slow") in env.rec.calls


def test_delete_supersedes_a_create_in_progress(env: Any) -> None:
    env.create(SLOW)
    env.run_until(lambda: _in_progress(env, "slow"))
    env.stacks.delete("p", "s")
    shown = env.wait()
    assert shown["stack_status"] == "DELETE_COMPLETE"
    assert env.stacks.list("p") == []
    assert sorted(env.rec.ops("delete")) == [("delete", "fast"), ("delete", "slow")]

"""Stored environments and cron triggers on every store (memory, SQLite,
PostgreSQL): unique names per project, and a trigger's firing as one
compare-and-set transaction that starts its execution."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest

from convection.store import (
    CronFire,
    CronTriggerExists,
    CronTriggerRecord,
    EnvironmentExists,
    EnvironmentRecord,
    ExecutionRecord,
    NodeRecord,
    Store,
    TraversalRecord,
)

T0 = datetime(2030, 1, 1, tzinfo=UTC)


def _trigger(
    tid: str, name: str, due: datetime, project: str = "p", **kw: object
) -> CronTriggerRecord:
    return CronTriggerRecord(
        id=tid, project=project, name=name, pattern="* * * * *", next_execution_time=due,
        workflow_name="wf", workflow_id="w1", workflow_input={"a": 1}, **kw,  # type: ignore[arg-type]
    )  # fmt: skip


def _start(eid: str) -> tuple[ExecutionRecord, TraversalRecord, list[NodeRecord]]:
    execution = ExecutionRecord(
        id=eid, project="p", workflow_id="w1", workflow_name="wf", state="RUNNING"
    )
    traversal = TraversalRecord(id=f"t-{eid}", kind="workflow", execution_id=eid, action="RUN")
    node = NodeRecord(
        traversal_id=traversal.id, key="a", kind="task", resource_name="a", state="ready"
    )
    return execution, traversal, [node]


def test_environments_are_unique_per_project(store: Store) -> None:
    rows = store.schedules
    rows.create_environment(EnvironmentRecord(id="e1", project="p", name="env", variables={"x": 1}))
    with pytest.raises(EnvironmentExists, match=r"Duplicate entry for Environment"):
        rows.create_environment(EnvironmentRecord(id="e2", project="p", name="env"))
    rows.create_environment(EnvironmentRecord(id="e3", project="q", name="env", scope="public"))
    assert rows.get_environment_named("p", "env").id == "e1"  # type: ignore[union-attr]
    assert rows.get_environment_named("r", "env").id == "e3"  # type: ignore[union-attr]
    assert rows.get_environment_named("r", "nope") is None
    updated = rows.update_environment("e1", {"variables": {"x": 2}, "description": "d"})
    assert updated is not None and updated.variables == {"x": 2} and updated.updated_at
    assert [e.id for e in rows.list_environments("p")] == ["e1"]
    assert rows.delete_environment("e1") and not rows.delete_environment("e1")


def test_cron_triggers_are_unique_and_due_in_order(store: Store) -> None:
    rows = store.schedules
    rows.create_cron_trigger(_trigger("c2", "later", T0 + timedelta(minutes=5)))
    rows.create_cron_trigger(_trigger("c1", "soon", T0))
    rows.create_cron_trigger(_trigger("c3", "future", T0 + timedelta(days=1)))
    with pytest.raises(CronTriggerExists, match=r"Duplicate entry for cron trigger soon"):
        rows.create_cron_trigger(_trigger("c4", "soon", T0))
    due = rows.due_cron_triggers(T0 + timedelta(minutes=5))
    assert [t.id for t in due] == ["c1", "c2"]
    assert due[0].workflow_input == {"a": 1} and due[0].next_execution_time == T0
    assert [t.id for t in rows.due_cron_triggers(T0 + timedelta(minutes=5), limit=1)] == ["c1"]
    assert rows.get_cron_trigger_named("p", "soon").id == "c1"  # type: ignore[union-attr]


def test_a_firing_moves_the_trigger_and_starts_once(store: Store) -> None:
    rows = store.schedules
    rows.create_cron_trigger(_trigger("c1", "t", T0, remaining_executions=2))
    execution, traversal, nodes = _start("x1")
    fire = CronFire("c1", T0, T0 + timedelta(minutes=1), 1, execution, traversal, nodes)
    assert rows.fire_cron_trigger(fire)
    assert not rows.fire_cron_trigger(fire)  # the due time it read is gone
    moved = rows.get_cron_trigger("c1")
    assert moved is not None and moved.next_execution_time == T0 + timedelta(minutes=1)
    assert moved.remaining_executions == 1
    started = store.workflows.get_execution("x1")
    assert started is not None and started.traversal_id == traversal.id
    assert [n.key for n in store.list_nodes(traversal.id)] == ["a"]
    last = CronFire("c1", T0 + timedelta(minutes=1), None, 0)
    assert rows.fire_cron_trigger(last) and rows.get_cron_trigger("c1") is None


def test_a_refused_start_leaves_the_trigger_as_it_was(store: Store) -> None:
    rows = store.schedules
    rows.create_cron_trigger(_trigger("c1", "t", T0))
    execution, traversal, nodes = _start("x1")
    store.workflows.create_execution(execution)  # the id is taken
    fire = CronFire("c1", T0, T0 + timedelta(minutes=1), None, execution, traversal, nodes)
    with pytest.raises(ValueError):
        rows.fire_cron_trigger(fire)
    kept = rows.get_cron_trigger("c1")
    assert kept is not None and kept.next_execution_time == T0


def test_engines_racing_on_one_due_time_start_one_execution(
    store_factory: Callable[[], Store],
) -> None:
    """Several store instances (as engine processes are) fire the same due
    time at once: one compare-and-set wins, one execution exists."""
    first = store_factory()
    first.schedules.create_cron_trigger(_trigger("c1", "t", T0))
    stores = [store_factory() for _ in range(4)]
    barrier = threading.Barrier(len(stores))
    won: list[bool] = []

    def race(index: int) -> None:
        execution, traversal, nodes = _start(f"x{index}")
        fire = CronFire("c1", T0, T0 + timedelta(minutes=1), None, execution, traversal, nodes)
        barrier.wait()
        won.append(stores[index].schedules.fire_cron_trigger(fire))

    threads = [threading.Thread(target=race, args=(i,)) for i in range(len(stores))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(won) == [False, False, False, True]
    assert len(first.workflows.list_executions("p")) == 1

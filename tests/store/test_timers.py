"""Taking a timer: exactly one of several engines fires a due timer.

Two engines sharing a store can read the same due timer. Each fires it as
one batch that starts with ``TakeTimer`` (delete the row by id); the batch
of the engine that finds the row gone must fail and change nothing.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta

import pytest

from convection.common.errors import NotFound
from convection.store.api import (
    AddTimer,
    DeleteTimers,
    NodeRecord,
    StackRecord,
    Store,
    TakeTimer,
    TraversalRecord,
    UpdateNode,
)

NOW = datetime(2030, 1, 1, 12, 0, tzinfo=UTC)


def _sleeping(store: Store, keys: Sequence[str] = "a") -> None:
    """A stack whose traversal ``t1`` has a sleeping node per key, each with
    a due poll timer."""
    stack = StackRecord(id="s1", project="p", name="s", action="CREATE", status="IN_PROGRESS")
    store.create_stack(stack)
    nodes = [
        NodeRecord(traversal_id="t1", key=k, kind="update", resource_name=k, state="sleeping")
        for k in keys
    ]
    store.start_traversal(TraversalRecord(id="t1", stack_id="s1", action="CREATE"), nodes, {})
    store.apply([AddTimer("t1", k, NOW - timedelta(seconds=1)) for k in keys])


def _fire(store: Store, timer_id: int, key: str = "a") -> None:
    """What an engine writes to fire a poll timer."""
    store.apply(
        [
            TakeTimer(timer_id, "t1", key),
            DeleteTimers("t1", key),
            UpdateNode("t1", key, {"state": "ready"}),
        ],
        traversal_id="t1",
    )


def test_a_timer_is_taken_once(store_factory: Callable[[], Store]) -> None:
    first, second = store_factory(), store_factory()
    _sleeping(first)
    (seen_by_first,) = first.due_timers(NOW, 10)
    (seen_by_second,) = second.due_timers(NOW, 10)  # both read it before either fires
    assert seen_by_first.id == seen_by_second.id

    _fire(first, seen_by_first.id)
    claimed = first.claim_ready("t1", "engine-1", 1, NOW + timedelta(minutes=1))
    assert [n.key for n in claimed] == ["a"]

    with pytest.raises(NotFound, match="timer"):
        _fire(second, seen_by_second.id)
    got = second.get_node("t1", "a")
    assert got is not None and (got.state, got.lease_owner) == ("running", "engine-1")
    assert second.due_timers(NOW, 10) == []


def test_a_stale_take_leaves_a_newer_timer_of_the_node(store: Store) -> None:
    """The node slept again (a new timer row) before the late engine acted:
    the late batch must not delete the new timer by node key."""
    _sleeping(store)
    (old,) = store.due_timers(NOW, 10)
    _fire(store, old.id)
    store.apply(
        [
            UpdateNode("t1", "a", {"state": "sleeping"}),
            AddTimer("t1", "a", NOW + timedelta(seconds=5)),
        ]
    )
    with pytest.raises(NotFound):
        _fire(store, old.id)
    assert store.next_timer_due("t1") == NOW + timedelta(seconds=5)
    got = store.get_node("t1", "a")
    assert got is not None and got.state == "sleeping"


def test_taking_several_timers_is_all_or_nothing(store: Store) -> None:
    _sleeping(store, "ab")
    a, b = store.due_timers(NOW, 10)
    _fire(store, a.id, a.node_key)
    with pytest.raises(NotFound):
        store.apply([TakeTimer(b.id, "t1", b.node_key), TakeTimer(a.id, "t1", a.node_key)])
    assert [t.id for t in store.due_timers(NOW, 10)] == [b.id]


def test_concurrent_firings_of_one_timer_commit_once(
    store_factory: Callable[[], Store],
) -> None:
    """Engines on their own connections fire the same timers at once: every
    timer is fired by exactly one of them (PostgreSQL: the second delete
    waits on the row lock, then matches nothing)."""
    setup = store_factory()
    keys = [f"n{i:02d}" for i in range(40)]
    _sleeping(setup, keys)
    timers = setup.due_timers(NOW, 100)
    assert len(timers) == len(keys)
    fired: dict[str, list[int]] = {"e1": [], "e2": []}
    errors: list[BaseException] = []
    barrier = threading.Barrier(2)

    def engine(name: str) -> None:
        try:
            mine = store_factory()
            barrier.wait()
            for timer in timers:
                try:
                    _fire(mine, timer.id, timer.node_key)
                except NotFound:
                    continue
                fired[name].append(timer.id)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=engine, args=(name,)) for name in fired]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert not set(fired["e1"]) & set(fired["e2"])
    assert sorted(fired["e1"] + fired["e2"]) == sorted(t.id for t in timers)
    assert {n.state for n in setup.list_nodes("t1")} == {"ready"}

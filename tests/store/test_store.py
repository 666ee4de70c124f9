"""One behaviour suite for every store: memory, SQLite and PostgreSQL."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import platformdirs
import pytest

from convection.common.errors import NotFound
from convection.store.api import (
    AddTimer,
    AppendEvent,
    Change,
    ConsumeSignal,
    DeleteResource,
    DeleteTimers,
    NodeRecord,
    ReleaseSuccessors,
    ResourceRecord,
    StackExists,
    StackRecord,
    StaleTraversal,
    Store,
    TraversalRecord,
    UpdateNode,
    UpdateResource,
    UpdateStack,
    UpdateTraversal,
)
from convection.store.memory import MemoryStore
from convection.store.sql import SQLStore, default_url, open_store

NOW = datetime(2030, 1, 1, 12, 0, tzinfo=UTC)


def make_stack(store: Store, name: str = "web", project: str = "p1", **kw: Any) -> StackRecord:
    sid = str(
        kw.pop("id", f"{project}-{name}-{len(store.list_stacks(None, include_deleted=True))}")
    )
    record = StackRecord(
        id=sid, project=project, name=name, action="CREATE", status="IN_PROGRESS", **kw
    )
    store.create_stack(record)
    found = store.get_stack_by_id(sid)
    assert found is not None
    return found


def node(
    tid: str, key: str, pending: int = 0, state: str | None = None, **kw: object
) -> NodeRecord:
    return NodeRecord(
        traversal_id=tid,
        key=key,
        kind="update",
        resource_name=key,
        pending=pending,
        state=state or ("ready" if pending == 0 else "waiting"),
        **kw,  # type: ignore[arg-type]
    )


def start(
    store: Store, stack: StackRecord, tid: str, nodes: Sequence[NodeRecord] = (), **fields: object
) -> None:
    store.start_traversal(
        TraversalRecord(id=tid, stack_id=stack.id, action="CREATE"), nodes, dict(fields)
    )


def resource(stack: StackRecord, name: str = "server", **kw: object) -> ResourceRecord:
    return ResourceRecord(
        id=0,
        stack_id=stack.id,
        name=name,
        type="OS::Heat::None",
        action="INIT",
        status="COMPLETE",
        **kw,  # type: ignore[arg-type]
    )


def event(stack: StackRecord, reason: str, name: str = "server") -> AppendEvent:
    return AppendEvent(stack.id, name, "OS::Heat::None", None, "CREATE", "COMPLETE", reason)


# -- stacks ----------------------------------------------------------------------------
def test_stack_create_get_update_and_soft_delete(store: Store) -> None:
    stack = make_stack(store, parameters={"flavor": "m1", "n": [1, {"x": None}]}, tags=["a"])
    assert stack.created_at is not None and stack.created_at.tzinfo is not None
    assert store.get_stack("p1", "web") == stack
    assert store.get_stack("p1", stack.id) == stack
    assert store.get_stack("other", "web") is None
    assert store.get_stack("other", stack.id) is None

    store.apply([UpdateStack(stack.id, {"status": "COMPLETE", "outputs": [{"output_key": "k"}]})])
    updated = store.get_stack_by_id(stack.id)
    assert updated is not None and updated.status == "COMPLETE"
    assert updated.outputs == [{"output_key": "k"}]
    assert updated.updated_at is not None and updated.updated_at.tzinfo == UTC

    store.apply([UpdateStack(stack.id, {"deleted_at": NOW, "action": "DELETE"})])
    assert store.get_stack("p1", "web") is None  # by name: live stacks only
    by_id = store.get_stack("p1", stack.id)  # by id: as Heat's show
    assert by_id is not None and by_id.deleted_at == NOW
    assert store.list_stacks("p1") == []
    assert [s.id for s in store.list_stacks("p1", include_deleted=True)] == [stack.id]


def test_stack_names_are_unique_per_project_among_live_stacks(store: Store) -> None:
    first = make_stack(store, "web", "p1", id="a")
    with pytest.raises(StackExists) as info:
        make_stack(store, "web", "p1", id="b")
    assert info.value.name == "web"
    make_stack(store, "web", "p2", id="c")  # another project may use it
    with pytest.raises(StackExists):
        make_stack(store, "other", "p1", id="a")  # ids are unique too

    store.apply([UpdateStack(first.id, {"deleted_at": NOW})])
    again = make_stack(store, "web", "p1", id="d")  # a deleted stack frees its name
    store.apply([UpdateStack(again.id, {"deleted_at": NOW})])
    make_stack(store, "web", "p1", id="e")
    assert {s.id for s in store.list_stacks("p1", include_deleted=True)} == {"a", "d", "e"}


def test_list_stacks_filters_sorts_and_pages(store: Store) -> None:
    for i, name in enumerate(["delta", "Alpha", "charlie", "bravo", "echo"]):
        make_stack(store, name, id=f"s{i}", created_at=NOW + timedelta(minutes=i))
    make_stack(store, "zulu", "p2", id="z")
    make_stack(store, "child", id="kid", parent_id="s0", created_at=NOW)
    store.apply([UpdateStack("s3", {"status": "COMPLETE", "updated_at": NOW + timedelta(hours=1)})])

    assert [s.name for s in store.list_stacks("p1", show_nested=False)] == [
        "echo",
        "bravo",
        "charlie",
        "Alpha",
        "delta",
    ]
    names = [s.name for s in store.list_stacks("p1", sort_keys=["name"], sort_dir="asc")]
    assert names == ["Alpha", "bravo", "charlie", "child", "delta", "echo"]  # code point order
    assert [s.id for s in store.list_stacks(None, filters={"name": ["zulu", "echo"]})] == [
        "s4",
        "z",
    ]
    assert [s.id for s in store.list_stacks("p1", filters={"status": "COMPLETE"})] == ["s3"]
    assert [s.id for s in store.list_stacks("p1", parent_id="s0")] == ["kid"]

    pages, marker = [], None
    while True:
        page = store.list_stacks("p1", sort_keys=["name"], sort_dir="desc", limit=2, marker=marker)
        if not page:
            break
        pages.append([s.name for s in page])
        marker = page[-1].id
    assert pages == [["echo", "delta"], ["child", "charlie"], ["bravo", "Alpha"]]

    # updated_at sorts a never-updated stack by its creation time
    by_update = [s.id for s in store.list_stacks("p1", sort_keys=["updated_at"], sort_dir="asc")]
    assert by_update[-1] == "s3" and by_update[0] in {"s0", "kid"}
    with pytest.raises(ValueError):
        store.list_stacks("p1", sort_keys=["password"])
    with pytest.raises(ValueError):
        store.list_stacks("p1", filters={"tenant": "x"})
    with pytest.raises(NotFound):
        store.list_stacks("p1", marker="nope")


def test_purge_removes_the_stack_tree_and_unused_templates(store: Store) -> None:
    shared = store.put_template({"t": 1}, {}, {})
    own = store.put_template({"t": 2}, {}, {})
    parent = make_stack(store, "parent", template_id=own, prev_template_id=shared)
    child = make_stack(
        store, "child", parent_id=parent.id, template_id=store.put_template({}, {}, {})
    )
    keeper = make_stack(store, "keeper", template_id=shared)
    rid = store.add_resource(resource(child))
    start(store, child, "t-child", [node("t-child", "a")])
    store.apply([event(child, "made"), AddTimer("t-child", "a", NOW)])
    store.add_signal(child.id, "server", {"x": 1})

    store.purge_stack(parent.id)
    assert store.get_stack_by_id(parent.id) is None and store.get_stack_by_id(child.id) is None
    assert store.get_resource(rid) is None
    assert store.get_traversal("t-child") is None and store.list_nodes("t-child") == []
    assert store.list_events(child.id) == [] and store.due_timers(NOW, 10) == []
    assert store.pending_signals(child.id, "server") == []
    with pytest.raises(NotFound):
        store.get_template(own)
    assert store.get_template(shared).template == {"t": 1}  # still used by keeper
    assert store.get_stack_by_id(keeper.id) is not None


# -- templates -------------------------------------------------------------------------
def test_templates_round_trip_with_json_fidelity(store: Store) -> None:
    template = {
        "heat_template_version": "2021-04-16",
        "description": 'Ünïcødé ✓ 日本語 \u0000 "quoted" \\ back',
        "resources": {"z": {"type": "A"}, "a": {"type": "B", "properties": {"l": [1, 2.5, None]}}},
        "outputs": {"deep": {"value": [[{"x": [True, False, {"y": {}}]}]]}},
        "big": 2**53 + 1,
    }
    env = {"parameters": {"k": "v"}, "resource_registry": {"My::T": "file:///t.yaml"}}
    tid = store.put_template(template, env, {"file:///t.yaml": "heat_template_version: x\n"})
    got = store.get_template(tid)
    assert got.template == template and got.environment == env
    assert list(got.template["resources"]) == ["z", "a"]  # key order survives
    assert got.files == {"file:///t.yaml": "heat_template_version: x\n"}
    assert store.put_template({}, {}, {}) != tid
    with pytest.raises(NotFound):
        store.get_template(tid + 1000)
    with pytest.raises(ValueError):
        store.put_template({"x": float("nan")}, {}, {})


def test_returned_json_is_a_copy(store: Store) -> None:
    stack = make_stack(store, parameters={"a": {"b": 1}})
    stack.parameters["a"]["b"] = 2
    again = store.get_stack_by_id(stack.id)
    assert again is not None and again.parameters == {"a": {"b": 1}}


# -- resources -------------------------------------------------------------------------
def test_resource_versions_and_replacement(store: Store) -> None:
    stack = make_stack(store)
    old_id = store.add_resource(resource(stack, properties={"size": 1}, requires=("net",)))
    old = store.get_resource(old_id)
    assert old is not None and old.requires == ("net",) and old.current and old.created_at
    new_id = store.add_resource(resource(stack, properties={"size": 2}, replaces=old_id))
    store.apply(
        [
            UpdateResource(old_id, {"current": False, "replaced_by": new_id}),
            UpdateResource(
                new_id,
                {
                    "action": "CREATE",
                    "status": "COMPLETE",
                    "physical_id": "p-2",
                    "attributes": {"ip": "10.0.0.2"},
                    "requires": ["net", "sg"],
                },
            ),
        ]
    )
    assert [r.id for r in store.list_resources(stack.id)] == [old_id, new_id]
    current = store.list_resources(stack.id, current_only=True)
    assert [(r.id, r.physical_id, r.requires) for r in current] == [(new_id, "p-2", ("net", "sg"))]
    assert current[0].updated_at is not None
    store.apply([DeleteResource(old_id)])
    store.apply([DeleteResource(old_id)])  # absent already: a no-op
    assert store.get_resource(old_id) is None
    ids = store.add_resources([resource(stack, f"r{i}") for i in range(5)])
    assert ids == sorted(ids) and len(set(ids)) == 5 and old_id not in ids
    assert [store.get_resource(i).name for i in ids] == [f"r{i}" for i in range(5)]  # type: ignore[union-attr]
    with pytest.raises(NotFound):
        store.add_resource(
            resource(StackRecord(id="nope", project="p", name="n", action="", status=""))
        )


# -- traversals ------------------------------------------------------------------------
def test_start_traversal_supersedes_the_running_one(store: Store) -> None:
    stack = make_stack(store)
    other = make_stack(store, "other")
    start(store, stack, "t1", [node("t1", "a"), node("t1", "b", 1)], status="IN_PROGRESS")
    start(store, other, "o1", [node("o1", "a")])
    assert {t.id for t in store.active_traversals()} == {"t1", "o1"}

    start(
        store,
        stack,
        "t2",
        [node("t2", "a", successors=("b",), payload={"action": "create"})],
        action="UPDATE",
        status="IN_PROGRESS",
    )
    s = store.get_stack_by_id(stack.id)
    assert s is not None and (s.traversal_id, s.action) == ("t2", "UPDATE")
    t1, t2 = store.get_traversal("t1"), store.get_traversal("t2")
    assert t1 is not None and t1.status == "SUPERSEDED" and t1.finished_at is not None
    assert t2 is not None and t2.status == "IN_PROGRESS" and t2.started_at is not None
    assert {t.id for t in store.active_traversals()} == {"t2", "o1"}
    nodes = store.list_nodes("t2")
    assert [(n.key, n.successors, n.payload) for n in nodes] == [
        ("a", ("b",), {"action": "create"})
    ]
    assert store.get_node("t2", "a") == nodes[0] and store.get_node("t2", "zz") is None


def test_start_traversal_failures_change_nothing(store: Store) -> None:
    stack = make_stack(store)
    start(store, stack, "t1", [node("t1", "a")])
    with pytest.raises(NotFound):
        store.start_traversal(TraversalRecord(id="t9", stack_id="nope", action="CREATE"), [], {})
    with pytest.raises(ValueError):
        start(store, stack, "t2", [node("t2", "a"), node("t2", "a")])
    with pytest.raises(ValueError):
        start(store, stack, "t2", [node("t2", "a", state="sleepy")])
    with pytest.raises(ValueError):
        start(store, stack, "t1", [node("t1", "b")])  # the traversal exists already
    assert store.get_traversal("t2") is None
    assert store.get_stack_by_id(stack.id).traversal_id == "t1"  # type: ignore[union-attr]
    assert store.get_traversal("t1").status == "IN_PROGRESS"  # type: ignore[union-attr]


def test_start_traversal_with_many_nodes(store: Store) -> None:
    stack = make_stack(store)
    nodes = [node("big", f"n{i:05d}", i % 3, successors=(f"n{i + 1:05d}",)) for i in range(3000)]
    start(store, stack, "big", nodes)
    assert store.list_nodes("big") == nodes


# -- claims and leases -----------------------------------------------------------------
def test_claim_ready_takes_each_ready_node_once(store: Store) -> None:
    stack = make_stack(store)
    start(store, stack, "t1", [node("t1", f"n{i}") for i in range(5)] + [node("t1", "w", 1)])
    until = NOW + timedelta(minutes=5)
    first = store.claim_ready("t1", "e1", 3, until)
    second = store.claim_ready("t1", "e2", 10, until)
    assert len(first) == 3 and len(second) == 2
    assert {n.key for n in first} | {n.key for n in second} == {f"n{i}" for i in range(5)}
    assert all(n.state == "running" and n.attempt == 1 and n.lease_until == until for n in first)
    assert {n.lease_owner for n in second} == {"e2"}
    assert store.claim_ready("t1", "e3", 10, until) == []
    assert store.get_node("t1", "n0").state == "running"  # type: ignore[union-attr]


def test_claim_ready_refuses_a_superseded_traversal(store: Store) -> None:
    stack = make_stack(store)
    start(store, stack, "t1", [node("t1", "a")])
    start(store, stack, "t2", [node("t2", "a")])
    assert store.claim_ready("t1", "e1", 10, NOW) == []
    assert [n.key for n in store.claim_ready("t2", "e1", 10, NOW)] == ["a"]


def test_concurrent_claimers_never_share_a_node(store_factory: Callable[[], Store]) -> None:
    setup = store_factory()
    stack = make_stack(setup)
    keys = {f"n{i:03d}" for i in range(300)}
    start(setup, stack, "t1", [node("t1", k) for k in sorted(keys)])
    claimed: dict[str, list[str]] = {"e1": [], "e2": []}
    barrier = threading.Barrier(2)
    errors: list[BaseException] = []

    def claimer(owner: str) -> None:
        try:
            mine = store_factory()  # an instance of its own, like another engine process
            barrier.wait()
            while batch := mine.claim_ready("t1", owner, 7, NOW + timedelta(minutes=1)):
                claimed[owner].extend(n.key for n in batch)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=claimer, args=(o,)) for o in claimed]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert not set(claimed["e1"]) & set(claimed["e2"])
    assert sorted(claimed["e1"] + claimed["e2"]) == sorted(keys)


def test_expired_leases_are_reclaimed(store: Store) -> None:
    stack = make_stack(store)
    start(store, stack, "t1", [node("t1", "a"), node("t1", "b")])
    store.claim_ready("t1", "dead", 1, NOW - timedelta(seconds=1))
    store.claim_ready("t1", "alive", 1, NOW + timedelta(minutes=1))
    assert store.reclaim_expired(NOW) == 1
    states = {n.key: (n.state, n.lease_owner) for n in store.list_nodes("t1")}
    assert sorted(states.values()) == [("ready", None), ("running", "alive")]
    again = store.claim_ready("t1", "new", 5, NOW + timedelta(minutes=1))
    assert len(again) == 1 and again[0].attempt == 2  # the retry knows it is one
    assert store.reclaim_expired(NOW) == 0


# -- timers ----------------------------------------------------------------------------
def test_timers_come_due_in_order(store: Store) -> None:
    stack = make_stack(store)
    start(store, stack, "t1", [node("t1", k) for k in "abcd"])
    plus_two = timezone(timedelta(hours=2))
    store.apply(
        [
            AddTimer("t1", "c", NOW + timedelta(seconds=30)),
            AddTimer("t1", "a", NOW - timedelta(seconds=10)),
            AddTimer("t1", "b", (NOW + timedelta(seconds=5)).astimezone(plus_two), purpose="wait"),
            AddTimer("t1", "d", NOW + timedelta(hours=1)),
        ]
    )
    due = store.due_timers(NOW + timedelta(seconds=30), 10)
    assert [(t.node_key, t.due_at) for t in due] == [
        ("a", NOW - timedelta(seconds=10)),
        ("b", NOW + timedelta(seconds=5)),
        ("c", NOW + timedelta(seconds=30)),
    ]
    assert due[1].due_at.tzinfo == UTC and due[1].purpose == "wait"
    assert [t.node_key for t in store.due_timers(NOW + timedelta(days=1), 2)] == ["a", "b"]
    assert store.next_timer_due() == NOW - timedelta(seconds=10)
    store.apply([DeleteTimers("t1", "a"), DeleteTimers("t1", "nothing-here")])
    assert store.next_timer_due("t1") == NOW + timedelta(seconds=5)
    assert store.next_timer_due("other") is None
    with pytest.raises(ValueError):
        store.apply([AddTimer("t1", "a", datetime(2030, 1, 1))])  # naive


# -- the journal -----------------------------------------------------------------------
def test_a_failing_change_applies_nothing(store: Store) -> None:
    stack = make_stack(store)
    rid = store.add_resource(resource(stack))
    start(store, stack, "t1", [node("t1", "a"), node("t1", "b", 1)])
    good: list[Change] = [
        UpdateStack(stack.id, {"status_reason": "half"}),
        UpdateResource(rid, {"status": "FAILED"}),
        UpdateNode("t1", "a", {"state": "done"}),
        ReleaseSuccessors("t1", ("b",)),
        event(stack, "should not be there"),
        AddTimer("t1", "b", NOW),
        DeleteResource(rid),
    ]
    bad_batches: list[tuple[type[Exception], list[Change]]] = [
        (NotFound, [*good, UpdateResource(rid + 999, {"status": "X"})]),
        (NotFound, [*good, UpdateNode("t1", "ghost", {"state": "done"})]),
        (NotFound, [*good, ReleaseSuccessors("t1", ("ghost",))]),
        (NotFound, [*good, ConsumeSignal(12345)]),
        (
            NotFound,
            [*good, event(StackRecord(id="nope", project="", name="", action="", status=""), "x")],
        ),
        (NotFound, [*good, AddTimer("no-such-traversal", "a", NOW)]),
        (ValueError, [*good, ReleaseSuccessors("t1", ("b",))]),  # released twice
        (ValueError, [*good, UpdateNode("t1", "a", {"colour": "blue"})]),
        (ValueError, [*good, UpdateNode("t1", "a", {"state": "bogus"})]),
        (ValueError, [*good, UpdateStack(stack.id, {"id": "new-id"})]),
    ]
    before = snapshot(store, stack.id, "t1")
    for error, batch in bad_batches:
        with pytest.raises(error):
            store.apply(batch, traversal_id="t1")
        assert snapshot(store, stack.id, "t1") == before, batch[-1]
    store.apply(good, traversal_id="t1")
    assert snapshot(store, stack.id, "t1") != before


def snapshot(store: Store, stack_id: str, tid: str) -> object:
    return (
        store.get_stack_by_id(stack_id),
        store.list_resources(stack_id),
        store.list_nodes(tid),
        store.list_events(stack_id),
        store.next_timer_due(tid),
    )


def test_a_superseded_traversal_cannot_apply(store: Store) -> None:
    stack = make_stack(store)
    start(store, stack, "t1", [node("t1", "a")])
    store.apply([UpdateNode("t1", "a", {"state": "done"})], traversal_id="t1")
    start(store, stack, "t2", [node("t2", "a")])
    with pytest.raises(StaleTraversal):
        store.apply(
            [UpdateStack(stack.id, {"status": "COMPLETE"}), event(stack, "late")], traversal_id="t1"
        )
    with pytest.raises(StaleTraversal):
        store.apply([], traversal_id="unknown")
    assert store.list_events(stack.id) == []
    assert store.get_stack_by_id(stack.id).status == "IN_PROGRESS"  # type: ignore[union-attr]
    store.apply(
        [UpdateTraversal("t2", {"status": "COMPLETE", "finished_at": NOW})], traversal_id="t2"
    )
    assert store.get_traversal("t2").finished_at == NOW  # type: ignore[union-attr]
    store.apply([UpdateNode("t1", "a", {"state": "failed"})])  # no traversal_id: no check


def test_release_successors_flips_to_ready_exactly_at_zero(store: Store) -> None:
    stack = make_stack(store)
    start(
        store,
        stack,
        "t1",
        [node("t1", "join", 3), node("t1", "skip", 1, state="skipped"), node("t1", "x", 2)],
    )

    def state(key: str) -> tuple[int, str]:
        n = store.get_node("t1", key)
        assert n is not None
        return n.pending, n.state

    store.apply([ReleaseSuccessors("t1", ("join", "x")), ReleaseSuccessors("t1", ("join",))])
    assert state("join") == (1, "waiting") and state("x") == (1, "waiting")
    store.apply([ReleaseSuccessors("t1", ("join", "skip"))])
    assert state("join") == (0, "ready")
    assert state("skip") == (0, "skipped")  # only waiting nodes become ready
    store.apply([ReleaseSuccessors("t1", ("x",)), UpdateNode("t1", "x", {"state": "skipped"})])
    assert state("x") == (0, "skipped")  # changes apply in order


def test_batches_keep_their_order_on_shared_rows(store: Store) -> None:
    stack = make_stack(store)
    rid = store.add_resource(resource(stack))
    start(store, stack, "t1", [node("t1", "a"), node("t1", "b")])
    store.apply(
        [
            AddTimer("t1", "a", NOW),
            DeleteTimers("t1", "a"),
            AddTimer("t1", "a", NOW + timedelta(seconds=9)),  # a re-poll: delete, then add
            AddTimer("t1", "b", NOW),
            DeleteTimers("t1", "b"),
            UpdateNode("t1", "a", {"state": "sleeping"}),
            UpdateNode("t1", "a", {"payload": {"n": 1}}),
            UpdateNode("t1", "a", {"state": "done", "payload": {"n": 2}}),
            UpdateResource(rid, {"data": {"token": "x"}}),
            DeleteResource(rid),
        ]
    )
    assert [(t.node_key, t.due_at) for t in store.due_timers(NOW + timedelta(days=1), 9)] == [
        ("a", NOW + timedelta(seconds=9))
    ]
    a = store.get_node("t1", "a")
    assert a is not None and (a.state, a.payload) == ("done", {"n": 2})
    assert store.get_resource(rid) is None


def test_a_large_mixed_batch(store: Store) -> None:
    stack = make_stack(store)
    ids = store.add_resources([resource(stack, f"r{i}") for i in range(200)])
    nodes = [node("t1", f"n{i:03d}", 0 if i < 200 else 1) for i in range(400)]
    start(store, stack, "t1", nodes)
    batch: list[Change] = []
    for i, rid in enumerate(ids):
        batch += [
            UpdateResource(rid, {"action": "CREATE", "status": "COMPLETE", "physical_id": f"p{i}"}),
            event(stack, f"done {i}", f"r{i}"),
            UpdateNode("t1", f"n{i:03d}", {"state": "done"}),
            ReleaseSuccessors("t1", (f"n{i + 200:03d}",)),
        ]
    store.apply(batch, traversal_id="t1")
    states = [n.state for n in store.list_nodes("t1")]
    assert states == ["done"] * 200 + ["ready"] * 200
    assert [e.reason for e in store.list_events(stack.id)] == [f"done {i}" for i in range(200)]
    assert all(r.status == "COMPLETE" for r in store.list_resources(stack.id))


# -- events and signals ----------------------------------------------------------------
def test_events_are_ordered_and_paged_by_id(store: Store) -> None:
    stack = make_stack(store)
    other = make_stack(store, "other")
    for batch in range(5):
        store.apply(
            [event(stack, f"e{batch}-{i}", "db" if i == 0 else "web") for i in range(5)]
            + [event(other, "elsewhere")]
        )
    everything = store.list_events(stack.id)
    assert [e.reason for e in everything] == [f"e{b}-{i}" for b in range(5) for i in range(5)]
    assert [e.id for e in everything] == sorted(e.id for e in everything)
    assert len({e.uuid for e in everything}) == 25
    assert all(e.timestamp.tzinfo == UTC for e in everything)
    pages, after = [], None
    while page := store.list_events(stack.id, after_id=after, limit=10):
        pages.append(len(page))
        after = page[-1].id
    assert pages == [10, 10, 5]
    db = store.list_events(stack.id, resource_name="db")
    assert [e.reason for e in db] == [f"e{b}-0" for b in range(5)]
    assert store.list_events(stack.id, after_id=everything[-1].id) == []
    newest = store.last_events(stack.id, 3)
    assert [e.reason for e in newest] == ["e4-4", "e4-3", "e4-2"]
    assert store.last_events(make_stack(store, "quiet").id, 3) == []


def test_signals_are_pending_until_consumed(store: Store) -> None:
    stack = make_stack(store)
    first = store.add_signal(stack.id, "wait", {"status": "SUCCESS", "data": "ü", "id": "1"})
    second = store.add_signal(stack.id, "wait", {"status": "FAILURE"})
    store.add_signal(stack.id, "other", {})
    pending = store.pending_signals(stack.id, "wait")
    assert [(g.id, g.data) for g in pending] == [
        (first, {"status": "SUCCESS", "data": "ü", "id": "1"}),
        (second, {"status": "FAILURE"}),
    ]
    assert not pending[0].consumed and pending[0].created_at.tzinfo == UTC
    store.apply([ConsumeSignal(first)])
    store.apply([ConsumeSignal(first)])  # consuming twice is harmless
    assert [g.id for g in store.pending_signals(stack.id, "wait")] == [second]
    with pytest.raises(NotFound):
        store.add_signal("nope", "wait", {})


def test_naive_datetimes_are_refused(store: Store) -> None:
    stack = make_stack(store)
    with pytest.raises(ValueError):
        store.apply([UpdateStack(stack.id, {"deleted_at": datetime(2030, 1, 1)})])
    with pytest.raises(ValueError):
        make_stack(store, "naive", created_at=datetime(2030, 1, 1))
    local = datetime(2030, 1, 1, 14, 0, tzinfo=timezone(timedelta(hours=2)))
    store.apply([UpdateStack(stack.id, {"deleted_at": local})])
    got = store.get_stack_by_id(stack.id)
    assert got is not None and got.deleted_at == NOW and got.deleted_at.tzinfo == UTC


def test_open_store_chooses_the_backend(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(platformdirs, "user_data_dir", lambda app: str(tmp_path / "data" / app))
    assert default_url() == f"sqlite:///{tmp_path / 'data' / 'convection' / 'convection.db'}"
    assert isinstance(open_store("memory://"), MemoryStore)
    default = open_store(None)
    try:
        assert isinstance(default, SQLStore)
        assert (tmp_path / "data" / "convection" / "convection.db").is_file()
    finally:
        default.close()
    with pytest.raises(ValueError):
        open_store("sqlite://")  # in-memory SQLite cannot be shared by connections
    with pytest.raises(ValueError):
        open_store("mysql://localhost/db")


def test_stack_updates_keep_the_stack_constraints(store: Store) -> None:
    stack = make_stack(store, "web")
    make_stack(store, "db")
    with pytest.raises(NotFound):
        store.apply([UpdateStack(stack.id, {"template_id": 4242})])
    with pytest.raises(NotFound):
        store.apply([UpdateStack(stack.id, {"parent_id": "no-such-stack"})])
    with pytest.raises(StackExists):
        store.apply([UpdateStack(stack.id, {"name": "db"})])
    tid = store.put_template({}, {}, {})
    store.apply([UpdateStack(stack.id, {"template_id": tid, "prev_template_id": tid})])
    assert store.get_stack("p1", "web").template_id == tid  # type: ignore[union-attr]


def test_every_resource_field_round_trips(store: Store) -> None:
    stack = make_stack(store)
    rid = store.add_resource(
        resource(
            stack,
            physical_id="phys-1",
            reference_id="ref-1",
            properties={"a": [1, {"b": "ü"}]},
            attributes={"value": "x"},
            data={"deadline": 3},
            definition_hash="abc",
            requires=("db", "net"),
            deletion_policy="Retain",
            external_id="ext",
            unhealthy=True,
        )
    )
    got = store.get_resource(rid)
    assert got is not None
    assert (got.physical_id, got.reference_id) == ("phys-1", "ref-1")
    assert got.properties == {"a": [1, {"b": "ü"}]}
    assert got.requires == ("db", "net")
    assert (got.deletion_policy, got.external_id, got.unhealthy) == ("Retain", "ext", True)
    store.apply([UpdateResource(rid, {"reference_id": "ref-2"})])
    got = store.get_resource(rid)
    assert got is not None and got.reference_id == "ref-2"

"""``Store.start_stacks``: many child stacks created and started at once.

Runs on memory, SQLite and PostgreSQL (the store fixtures): the bulk path
must leave exactly what the one-call-at-a-time path leaves, and all or
nothing of it.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from convection.common.errors import NotFound
from convection.store.api import (
    AppendEvent,
    NewStack,
    NodeRecord,
    ResourceRecord,
    StackExists,
    StackRecord,
    Store,
    TraversalRecord,
    UpdateNode,
)

LEASE = datetime(2030, 1, 1, tzinfo=UTC)


def _root(store: Store, count: int = 1) -> StackRecord:
    root = StackRecord(
        id="root",
        project="p",
        name="root",
        action="CREATE",
        status="IN_PROGRESS",
        resource_count=count,
    )
    store.create_stack(root)
    return root


def _child(index: int, *, root: str = "root", resources: int = 2) -> NewStack:
    sid, tid = f"child-{index}", f"trav-{index}"
    stack = StackRecord(
        id=sid,
        project="p",
        name=f"root-m{index}",
        action="CREATE",
        status="IN_PROGRESS",
        status_reason="Stack CREATE started",
        traversal_id=tid,
        parameters={"index": str(index)},
        parent_id=root,
        parent_resource=str(index),
        root_id=root,
        nested_depth=1,
        resource_count=resources,
    )
    rows = [
        ResourceRecord(
            id=0,
            stack_id=sid,
            name=f"r{j}",
            type="OS::Heat::None",
            action="INIT",
            status="COMPLETE",
            requires=(f"r{j - 1}",) if j else (),
        )
        for j in range(resources)
    ]
    nodes = [
        NodeRecord(
            traversal_id=tid,
            key=f"update:r{j}",
            kind="update",
            resource_name=f"r{j}",
            pending=1 if j else 0,
            state="waiting" if j else "ready",
            successors=(f"update:r{j + 1}",) if j + 1 < resources else (),
            payload={"action": "CREATE"},
        )
        for j in range(resources)
    ]
    traversal = TraversalRecord(
        id=tid,
        stack_id=sid,
        action="CREATE",
        lease_owner="me",
        lease_until=LEASE,
        deadline=LEASE + timedelta(hours=1),
    )
    started = AppendEvent(sid, stack.name, "OS::Heat::Stack", sid, "CREATE", "IN_PROGRESS", "go")
    return NewStack(
        stack=stack,
        template={"heat_template_version": "2018-08-31", "resources": {}},
        environment={"parameters": {"index": str(index)}},
        files={"f.yaml": "x"},
        resources=rows,
        traversal=traversal,
        nodes=nodes,
        events=[started],
    )


def test_start_stacks_writes_every_row_in_one_go(store: Store) -> None:
    _root(store)
    started = store.start_stacks([_child(i) for i in range(3)], limit=-1)
    assert started is not None and len(started) == 3
    for i, done in enumerate(started):
        stack = store.get_stack_by_id(f"child-{i}")
        assert stack is not None
        assert (stack.template_id, stack.traversal_id) == (done.template_id, f"trav-{i}")
        assert stack.parent_id == "root" and stack.parameters == {"index": str(i)}
        template = store.get_template(done.template_id)
        assert template.environment == {"parameters": {"index": str(i)}}
        assert template.files == {"f.yaml": "x"}
        rows = store.list_resources(stack.id)
        assert [r.id for r in rows] == done.resource_ids
        assert [r.requires for r in rows] == [(), ("r0",)]
        nodes = {n.key: n for n in store.list_nodes(f"trav-{i}")}
        assert nodes["update:r1"].resource_id == done.resource_ids[1]
        assert nodes["update:r1"].successors == ()
        traversal = store.get_traversal(f"trav-{i}")
        assert traversal is not None and traversal.lease_owner == "me"
        assert traversal.started_at is not None
        assert [e.reason for e in store.list_events(stack.id)] == ["go"]
    assert {t.id for t in store.active_traversals()} == {"trav-0", "trav-1", "trav-2"}
    assert len({d.template_id for d in started}) == 3
    root = store.get_stack_by_id("root")
    assert root is not None and root.nested_resources == 6
    claimed = store.claim_ready("trav-0", "me", 10, LEASE)
    assert [n.key for n in claimed] == ["update:r0"]


def test_start_stacks_over_the_limit_writes_nothing(store: Store) -> None:
    _root(store, count=1)
    assert store.start_stacks([_child(0), _child(1)], limit=4) is None
    assert store.get_stack_by_id("child-0") is None
    root = store.get_stack_by_id("root")
    assert root is not None and root.nested_resources == 0
    assert store.start_stacks([_child(0)], limit=4) is not None


def test_a_name_clash_writes_nothing(store: Store) -> None:
    _root(store)
    assert store.start_stacks([_child(1)], limit=-1) is not None
    clash = _child(1)
    clash = NewStack(
        stack=StackRecord(**{**_fields(clash.stack), "id": "other"}),
        template=clash.template,
        environment=clash.environment,
        files=clash.files,
        resources=[],
        traversal=TraversalRecord(id="trav-x", stack_id="other", action="CREATE"),
        nodes=[],
        events=[],
    )
    with pytest.raises(StackExists, match="root-m1"):
        store.start_stacks([_child(2), clash], limit=-1)
    assert store.get_stack_by_id("child-2") is None
    assert store.get_traversal("trav-2") is None
    root = store.get_stack_by_id("root")
    assert root is not None and root.nested_resources == 2


def _fields(stack: StackRecord) -> dict[str, object]:
    return {name: getattr(stack, name) for name in StackRecord.__dataclass_fields__}


def test_apply_many_leaves_out_stale_batches_only(store: Store) -> None:
    _root(store)
    assert store.start_stacks([_child(0), _child(1)], limit=-1) is not None
    store.start_traversal(TraversalRecord(id="newer", stack_id="child-1", action="UPDATE"), [], {})
    done = UpdateNode("trav-0", "update:r0", {"state": "done"})
    lost = UpdateNode("trav-1", "update:r0", {"state": "done"})
    note = AppendEvent("child-0", "r0", "OS::Heat::None", None, "CREATE", "COMPLETE", "ok")
    assert store.apply_many([("trav-0", [done]), ("trav-1", [lost]), (None, [note])]) == [
        False,
        True,
        False,
    ]
    assert {n.key: n.state for n in store.list_nodes("trav-0")}["update:r0"] == "done"
    assert {n.key: n.state for n in store.list_nodes("trav-1")}["update:r0"] == "ready"
    assert [e.reason for e in store.list_events("child-0")][-1] == "ok"


def test_apply_many_applies_nothing_when_a_change_fails(store: Store) -> None:
    _root(store)
    assert store.start_stacks([_child(0)], limit=-1) is not None
    done = UpdateNode("trav-0", "update:r0", {"state": "done"})
    missing = UpdateNode("trav-0", "update:nope", {"state": "done"})
    with pytest.raises(NotFound):
        store.apply_many([("trav-0", [done]), (None, [missing])])
    assert {n.key: n.state for n in store.list_nodes("trav-0")}["update:r0"] == "ready"


def test_claim_many_claims_from_current_traversals_only(store: Store) -> None:
    _root(store)
    assert store.start_stacks([_child(i) for i in range(3)], limit=-1) is not None
    store.start_traversal(TraversalRecord(id="newer", stack_id="child-2", action="UPDATE"), [], {})
    claimed = store.claim_many([("trav-0", 5), ("trav-1", 0), ("trav-2", 5)], "me", LEASE)
    assert [n.key for n in claimed["trav-0"]] == ["update:r0"]
    assert not claimed.get("trav-1") and not claimed.get("trav-2")
    found = store.get_nodes("trav-0", ["update:r0", "update:r1", "nope"])
    assert {n.key: n.state for n in found} == {"update:r0": "running", "update:r1": "waiting"}
    assert store.claim_many([("trav-0", 5)], "me", LEASE).get("trav-0", []) == []

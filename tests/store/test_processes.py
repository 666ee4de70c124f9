"""The ``processes`` rows and the operators' counts on every store (memory,
SQLite, PostgreSQL): a beat is an upsert stamped by the store's clock;
leases held count only unexpired traversal leases and running nodes."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import psycopg
import pytest

from convection.store import (
    BEAT_SECONDS,
    ExecutionRecord,
    FenceTraversal,
    LostLease,
    NodeRecord,
    ProcessRecord,
    Store,
    TraversalRecord,
    UpdateNode,
    UpdateStack,
    UpdateTraversal,
)

from .test_store import make_stack, node, start

LONG_AGO = datetime(2000, 1, 1, tzinfo=UTC)


def _process(owner: str, kind: str = "engine", host: str = "h1", **kw: object) -> ProcessRecord:
    values: dict[str, object] = {
        "id": owner,
        "kind": kind,
        "host": host,
        "pid": 100,
        "queues": ("default",),
        "concurrency": 8,
        "running": 0,
        "stats": {"jobs_done": 0.0},
        "started_at": LONG_AGO,
        **kw,
    }
    return ProcessRecord(**values)  # type: ignore[arg-type]


def test_a_beat_keeps_one_row_per_id_with_the_latest_values(store: Store) -> None:
    store.beat(_process("e1", running=1, stats={"jobs_done": 1.0}))
    store.beat(_process("w1", kind="worker", host="h0", queues=("a", "b")))
    store.beat(_process("e1", host="h2", pid=7, running=3, concurrency=4, stats={"jobs_done": 5.5}))
    rows = store.list_processes()
    assert [(p.kind, p.host, p.id) for p in rows] == [
        ("engine", "h2", "e1"),
        ("worker", "h0", "w1"),
    ]
    e1 = rows[0]
    assert (e1.pid, e1.running, e1.concurrency) == (7, 3, 4)
    assert e1.queues == ("default",) and e1.stats == {"jobs_done": 5.5}
    assert e1.started_at == LONG_AGO
    assert rows[1].queues == ("a", "b")


def test_list_processes_orders_by_kind_host_and_id(store: Store) -> None:
    for pid, kind, host in [("z", "worker", "a"), ("b", "engine", "b"), ("a", "engine", "b"),
                            ("c", "engine", "a"), ("s", "server", "a")]:  # fmt: skip
        store.beat(_process(pid, kind=kind, host=host))
    assert [p.id for p in store.list_processes()] == ["c", "a", "b", "s", "z"]


def test_heartbeat_at_is_the_stores_clock_not_the_callers(store: Store) -> None:
    before = datetime.now(UTC)
    store.beat(_process("e1", heartbeat_at=LONG_AGO))
    after = datetime.now(UTC)
    (row,) = store.list_processes()
    assert row.heartbeat_at is not None and before <= row.heartbeat_at <= after
    assert row.heartbeat_at.tzinfo is not None
    assert not row.is_stale(after)
    assert row.is_stale(after + timedelta(seconds=3 * BEAT_SECONDS + 1))


def test_a_returned_record_is_a_copy(store: Store) -> None:
    store.beat(_process("e1"))
    store.list_processes()[0].stats["jobs_done"] = 99.0
    assert store.list_processes()[0].stats == {"jobs_done": 0.0}


def test_forget_removes_the_row_and_forgetting_twice_is_fine(store: Store) -> None:
    store.beat(_process("e1"))
    store.beat(_process("e2"))
    store.forget_process("e1")
    store.forget_process("e1")
    store.forget_process("never")
    assert [p.id for p in store.list_processes()] == ["e2"]


def test_naive_started_at_is_refused(store: Store) -> None:
    with pytest.raises(ValueError, match="naive"):
        store.beat(_process("e1", started_at=datetime(2030, 1, 1)))


def test_leases_held_count_unexpired_traversals_and_running_nodes(store: Store) -> None:
    now = datetime.now(UTC)
    soon, gone = now + timedelta(minutes=5), now - timedelta(minutes=5)
    s1, s2, s3 = (make_stack(store, name) for name in ("a", "b", "c"))
    start(store, s1, "t1", [node("t1", k) for k in ("a", "b", "c")])
    start(store, s2, "t2", [node("t2", "x")])
    start(store, s3, "t3", [node("t3", "y")])
    assert store.take_traversal("t1", "e1", soon, now)
    assert store.take_traversal("t2", "e2", gone, now - timedelta(minutes=10))  # expired
    assert store.take_traversal("t3", "e1", soon, now)
    assert len(store.claim_ready("t1", "e1", 2, soon)) == 2
    assert len(store.claim_ready("t2", "e2", 1, soon)) == 1
    assert len(store.claim_ready("t1", "e3", 1, soon)) == 1
    assert store.leases_held() == {"e1": (2, 2), "e2": (0, 1), "e3": (0, 1)}
    # A node that is no longer running is no longer counted, whatever its
    # lease_owner still says; a released traversal neither.
    store.apply([UpdateNode("t1", "c", {"state": "done"})])
    store.release_traversals(["t3"], "e1")
    assert store.leases_held() == {"e1": (1, 2), "e2": (0, 1)}


def test_leases_held_is_empty_without_leases(store: Store) -> None:
    assert store.leases_held() == {}


def test_count_by_state(store: Store) -> None:
    assert store.count_by_state() == {
        "traversal:stack": {},
        "traversal:workflow": {},
        "execution": {},
    }
    s1, s2 = make_stack(store, "a"), make_stack(store, "b")
    start(store, s1, "t1", [node("t1", "a")])
    start(store, s2, "t2", [node("t2", "a")])
    store.apply([UpdateTraversal("t2", {"status": "COMPLETE"})])
    for eid, state in (("e1", "RUNNING"), ("e2", "RUNNING"), ("e3", "SUCCESS")):
        execution = ExecutionRecord(
            id=eid, project="p", workflow_id="w", workflow_name="w", state=state
        )
        traversal = TraversalRecord(id=f"t-{eid}", kind="workflow", execution_id=eid, action="RUN")
        first = NodeRecord(
            traversal_id=traversal.id, key="a", kind="task", resource_name="a", state="ready"
        )
        store.workflows.create_execution(execution, traversal=traversal, nodes=[first])
    assert store.count_by_state() == {
        "traversal:stack": {"IN_PROGRESS": 1, "COMPLETE": 1},
        "traversal:workflow": {"IN_PROGRESS": 3},
        "execution": {"RUNNING": 2, "SUCCESS": 1},
    }


def test_queue_depths_are_empty_without_procrastinates_table(store: Store) -> None:
    assert store.queue_depths() == {}


@pytest.fixture
def procrastinate_jobs(postgres_database: str) -> Iterator[str]:
    """A stand-in for procrastinate's job table (its enum status and the
    two columns read), in the session's PostgreSQL database."""
    from .conftest import _libpq

    with psycopg.connect(_libpq(postgres_database), autocommit=True) as conn:
        conn.execute(
            "CREATE TYPE procrastinate_job_status AS ENUM "
            "('todo', 'doing', 'succeeded', 'failed', 'cancelled', 'aborted')"
        )
        conn.execute(
            "CREATE TABLE procrastinate_jobs (id bigserial PRIMARY KEY, "
            "queue_name character varying(128) NOT NULL, "
            "status procrastinate_job_status DEFAULT 'todo' NOT NULL)"
        )
        jobs = [("q1", "todo")] * 3 + [("q1", "doing"), ("q2", "doing"), ("q3", "succeeded")]
        for queue, status in jobs:
            conn.execute(
                "INSERT INTO procrastinate_jobs (queue_name, status) VALUES (%s, %s)",
                (queue, status),
            )
    try:
        yield postgres_database
    finally:
        with psycopg.connect(_libpq(postgres_database), autocommit=True) as conn:
            conn.execute("DROP TABLE procrastinate_jobs")
            conn.execute("DROP TYPE procrastinate_job_status")


def test_queue_depths_read_procrastinates_table_on_postgresql(procrastinate_jobs: str) -> None:
    from convection.store.sql import SQLStore

    store = SQLStore(procrastinate_jobs)
    try:
        assert store.queue_depths() == {
            "q1": {"todo": 3, "doing": 1},
            "q2": {"todo": 0, "doing": 1},
        }
    finally:
        store.close()


def test_a_traversal_fence_refuses_a_batch_once_the_lease_moved(store: Store) -> None:
    """An engine held up past its lease writes nothing once another engine
    took the traversal up: not its progress, not its facts."""
    now = datetime.now(UTC)
    stack = make_stack(store, "fenced")
    start(store, stack, "tf", [node("tf", "a")])
    assert store.take_traversal("tf", "old", now + timedelta(minutes=5), now)
    store.apply([FenceTraversal("tf", "old"), UpdateNode("tf", "a", {"pending": 0})])
    later = now + timedelta(minutes=10)  # the old engine's lease lapsed
    assert store.take_traversal("tf", "new", later + timedelta(minutes=5), later)
    with pytest.raises(LostLease):
        store.apply(
            [FenceTraversal("tf", "old"), UpdateStack(stack.id, {"status_reason": "stale"})]
        )
    with pytest.raises(LostLease):
        store.apply([FenceTraversal("tf", "old"), UpdateNode("tf", "a", {"state": "done"})],
                    traversal_id="tf")  # fmt: skip
    assert store.get_stack(stack.project, stack.id).status_reason != "stale"  # type: ignore[union-attr]
    assert {n.key: n.state for n in store.list_nodes("tf")}["a"] != "done"
    store.apply([FenceTraversal("tf", "new"), UpdateNode("tf", "a", {"state": "done"})])

"""kill -9 at a random instant loses no committed batch and tears none.

A real subprocess (this file, run as a script) applies journal batches to an
SQLite store in a loop until it is SIGKILLed at a seeded random moment.
After each kill the database must open, pass ``PRAGMA integrity_check``, and
show every batch either fully applied or not at all; the next worker then
carries on from where the last one stopped, over the same file.
"""

from __future__ import annotations

import random
import signal
import sqlite3
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from convection.store.api import (
    AddTimer,
    AppendEvent,
    Change,
    NodeRecord,
    ReleaseSuccessors,
    ResourceRecord,
    StackRecord,
    TraversalRecord,
    UpdateNode,
    UpdateResource,
    UpdateStack,
)
from convection.store.sql import SQLStore

TRIALS = 10
SEED = 20261130
NODES = 10_000
EVENTS_PER_BATCH = 20
STACK, TRAVERSAL = "crash-stack", "crash-traversal"
DUE = datetime(2030, 1, 1, tzinfo=UTC)


def _key(i: int) -> str:
    return f"n{i:06d}"


def _batch(i: int, resource_id: int) -> list[Change]:
    """Batch ``i`` touches every table a job completion touches."""
    events: list[Change] = [
        AppendEvent(STACK, "r", "OS::Heat::None", None, "CREATE", "COMPLETE", f"b{i}-{j}")
        for j in range(EVENTS_PER_BATCH)
    ]
    return [
        UpdateNode(TRAVERSAL, _key(i), {"state": "done", "payload": {"batch": i}}),
        *events[:10],
        ReleaseSuccessors(TRAVERSAL, (_key(i + 1),)),
        UpdateStack(STACK, {"status_reason": f"batch {i}"}),
        *events[10:],
        UpdateResource(resource_id, {"data": {"batch": i}}),
        AddTimer(TRAVERSAL, _key(i), DUE + timedelta(seconds=i)),
    ]


def _prepare(url: str) -> None:
    store = SQLStore(url)
    store.create_stack(
        StackRecord(id=STACK, project="p", name="crash", action="CREATE", status="IN_PROGRESS")
    )
    store.add_resource(
        ResourceRecord(
            id=0,
            stack_id=STACK,
            name="r",
            type="OS::Heat::None",
            action="CREATE",
            status="IN_PROGRESS",
        )
    )
    nodes = [
        NodeRecord(
            traversal_id=TRAVERSAL,
            key=_key(i),
            kind="update",
            resource_name="r",
            pending=1,
            state="waiting",
        )
        for i in range(NODES)
    ]
    store.start_traversal(TraversalRecord(id=TRAVERSAL, stack_id=STACK, action="CREATE"), nodes, {})
    store.close()


def _worker(url: str) -> None:
    """Apply batches forever from the first one not yet applied."""
    store = SQLStore(url)
    (resource,) = store.list_resources(STACK)
    stack = store.get_stack_by_id(STACK)
    assert stack is not None
    i = int(stack.status_reason.split()[-1]) + 1 if stack.status_reason else 0
    print("ready", flush=True)
    while True:
        store.apply(_batch(i, resource.id), traversal_id=TRAVERSAL)
        i += 1


def _verify(path: Path, seen: tuple[int, int]) -> tuple[int, int]:
    """Check that batches 0..k-1 are fully there and nothing else; return k
    and the last event id. ``seen`` is that pair from the previous check:
    older batches were verified then, and a worker only appends."""
    with sqlite3.connect(path) as raw:
        assert raw.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    before, after_id = seen
    store = SQLStore(f"sqlite:///{path}")
    try:
        stack = store.get_stack_by_id(STACK)
        assert stack is not None
        k = int(stack.status_reason.split()[-1]) + 1 if stack.status_reason else 0
        assert k >= before, "a committed batch was lost"
        for i in range(max(before - 1, 0), k):
            done = store.get_node(TRAVERSAL, _key(i))
            assert done is not None and (done.state, done.payload) == ("done", {"batch": i})
        for i, expected in ((k, (0, "ready") if k else (1, "waiting")), (k + 1, (1, "waiting"))):
            found = store.get_node(TRAVERSAL, _key(i))
            assert found is not None and (found.pending, found.state) == expected
        events = store.list_events(STACK, after_id=after_id)
        wanted = [f"b{i}-{j}" for i in range(before, k) for j in range(EVENTS_PER_BATCH)]
        assert [e.reason for e in events] == wanted, "a batch is torn or missing"
        (resource,) = store.list_resources(STACK)
        assert resource.data == ({"batch": k - 1} if k else {})
        assert len(store.due_timers(DUE + timedelta(days=1), NODES)) == k
        return k, events[-1].id if events else after_id
    finally:
        store.close()


def _run_and_kill(url: str, delay: float) -> None:
    proc = subprocess.Popen(
        [sys.executable, __file__, url], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.strip() == "ready", proc.stderr.read() if proc.stderr else line
        time.sleep(delay)
        assert proc.poll() is None, "the worker died on its own"
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == -signal.SIGKILL


def test_kill_9_never_tears_a_batch(tmp_path: Path) -> None:
    path = tmp_path / "crash.db"
    url = f"sqlite:///{path}"
    _prepare(url)
    rng = random.Random(SEED)
    seen = (0, 0)
    for _ in range(TRIALS):
        _run_and_kill(url, rng.uniform(0.05, 0.3))
        seen = _verify(path, seen)
    assert seen[0] > 10 * TRIALS, "the workers made too little progress to mean anything"


if __name__ == "__main__":
    _worker(sys.argv[1])

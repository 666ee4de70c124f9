"""The kernel with a front-end that is not stacks.

``Steps`` is a second front-end in a few dozen lines: its nodes are named
steps whose payload says what the job does, and it records what ran. If
the kernel knew anything of stacks or resources, this could not work; it
is also the shape the workflow engine will take.

The store still keys a traversal to an owner row (today a stack row), so
each traversal here gets a bare one; the front-end reads nothing of it.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from convection.kernel import Journal, Kernel, Outcome, Run, done
from convection.store import (
    AddTimer,
    Change,
    DeleteTimers,
    NodeRecord,
    StackRecord,
    Store,
    TimerRecord,
    TraversalRecord,
    UpdateNode,
    UpdateTraversal,
)


@dataclass(frozen=True)
class Settings:
    concurrency: int = 8
    lease_seconds: float = 30.0
    scan_seconds: float = 0.05
    owner: str = field(default_factory=lambda: f"k-{uuid.uuid4().hex[:8]}")


class StepRun(Run):
    __slots__ = ()


class Steps:
    """Nodes are steps: ``ok`` is done, ``fail`` fails, ``nap`` sleeps once
    on a poll timer, ``park`` waits for a wake timer of its own purpose."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.ran: list[str] = []
        self.ended: dict[str, str] = {}
        self.stop_on_failure = False

    def take_up(self, traversal: TraversalRecord) -> StepRun | None:
        run = StepRun(traversal)
        run.count(self.store.list_nodes(traversal.id))
        return run

    def current(self, run: StepRun) -> bool:
        return True

    def wanted(self, traversal: TraversalRecord) -> bool:
        return True

    async def run_job(self, run: StepRun, node: NodeRecord) -> Outcome:
        self.ran.append(node.key)
        op = node.payload["op"]
        if op == "fail":
            return Outcome("failed", failure=("STEP", f"{node.key} said no"))
        if op == "nap" and node.payload.get("progress") is None:
            return Outcome("sleeping", due_at=_soon(), resume={"napped": True})
        if op == "park" and not node.payload.get("woken"):
            parked = {"state": "sleeping", "lease_owner": None, "payload": {**node.payload}}
            wake = AddTimer(run.id, node.key, _soon(), purpose="wake")
            return Outcome("paused", progress=[UpdateNode(run.id, node.key, parked), wake])
        return done()

    def observe(self, run: StepRun, changes: Sequence[Change]) -> None:
        pass

    def stops_on_failure(self, run: StepRun) -> bool:
        return self.stop_on_failure

    def fire_timer(
        self, run: StepRun, timer: TimerRecord, node: NodeRecord | None
    ) -> list[Change] | None:
        assert timer.purpose == "wake"
        payload = {"op": "park", "woken": True}
        ready = UpdateNode(run.id, timer.node_key, {"state": "ready", "payload": payload})
        return [DeleteTimers(run.id, timer.node_key), ready]

    def fail_node(
        self, run: StepRun, node: NodeRecord, error: Exception, problem: str
    ) -> list[Outcome]:
        return [Outcome("failed", failure=("STEP", problem))]

    def finish(self, runs: Sequence[StepRun], now: datetime) -> bool:
        for run in runs:
            status = "FAILED" if run.tally.failure else "COMPLETE"
            self.ended[run.id] = status
            self.store.apply([UpdateTraversal(run.id, {"status": status, "finished_at": now})])
        return False


def _soon() -> datetime:
    return datetime.now(UTC) + timedelta(seconds=0.05)


def start(store: Store, steps: dict[str, tuple[str, Sequence[str]]]) -> str:
    """A traversal of ``steps``: key -> (op, keys it needs)."""
    owner = StackRecord(
        id=str(uuid.uuid4()), project="p", name=f"o-{uuid.uuid4().hex[:6]}", action="RUN",
        status="IN_PROGRESS",
    )  # fmt: skip
    store.create_stack(owner)
    tid = str(uuid.uuid4())
    after: dict[str, list[str]] = {k: [] for k in steps}
    for key, (_, needs) in steps.items():
        for need in needs:
            after[need].append(key)
    nodes = [
        NodeRecord(
            traversal_id=tid,
            key=key,
            kind="step",
            resource_name=key,
            pending=len(needs),
            state="waiting" if needs else "ready",
            successors=tuple(after[key]),
            payload={"op": op},
        )
        for key, (op, needs) in steps.items()
    ]
    traversal = TraversalRecord(id=tid, stack_id=owner.id, action="RUN")
    store.start_traversal(traversal, nodes, {"traversal_id": tid})
    return tid


def run_kernel(store: Store, steps: Steps, **settings: Any) -> Kernel[StepRun, Store]:
    kernel: Kernel[StepRun, Store] = Kernel(Journal(store), steps, Settings(**settings))
    asyncio.run(asyncio.wait_for(kernel.run(), 30))
    return kernel


def states(store: Store, tid: str) -> dict[str, str]:
    return {n.key: n.state for n in store.list_nodes(tid)}


def test_a_diamond_runs_in_dependency_order(store: Store) -> None:
    steps = Steps(store)
    tid = start(store, {"a": ("ok", []), "b": ("ok", ["a"]), "c": ("ok", ["a"]),
                        "d": ("ok", ["b", "c"])})  # fmt: skip
    run_kernel(store, steps)
    assert steps.ran[0] == "a" and steps.ran[-1] == "d"
    assert sorted(steps.ran) == ["a", "b", "c", "d"]
    assert steps.ended == {tid: "COMPLETE"}
    assert set(states(store, tid).values()) == {"done"}
    traversal = store.get_traversal(tid)
    assert traversal is not None and traversal.lease_until is None  # released


def test_a_failure_skips_only_what_needs_it(store: Store) -> None:
    steps = Steps(store)
    tid = start(store, {"a": ("fail", []), "b": ("ok", ["a"]), "c": ("ok", ["b"]),
                        "x": ("ok", [])})  # fmt: skip
    run_kernel(store, steps)
    assert states(store, tid) == {"a": "failed", "b": "skipped", "c": "skipped", "x": "done"}
    assert steps.ended == {tid: "FAILED"}


def test_a_front_end_may_end_a_run_at_its_first_failure(store: Store) -> None:
    steps = Steps(store)
    steps.stop_on_failure = True
    tid = start(store, {"a": ("fail", []), "later": ("ok", ["z"]), "z": ("nap", [])})
    run_kernel(store, steps, concurrency=1)
    assert steps.ended == {tid: "FAILED"}
    assert "later" not in steps.ran


def test_waits_are_timer_rows_not_held_workers(store: Store) -> None:
    steps = Steps(store)
    tid = start(store, {"nap": ("nap", []), "park": ("park", []), "end": ("ok", ["nap", "park"])})
    kernel = run_kernel(store, steps, concurrency=1)
    assert steps.ran.count("nap") == 2 and steps.ran.count("park") == 2
    assert steps.ran[-1] == "end"
    assert steps.ended == {tid: "COMPLETE"}
    assert store.next_timer_due() is None
    # Sleeping and parked nodes held no slot: one slot ran all of them.
    assert kernel.executor.peak == 1


def test_another_engine_takes_up_a_traversal_whose_lease_lapsed(store: Store) -> None:
    steps = Steps(store)
    tid = start(store, {"a": ("ok", []), "b": ("ok", ["a"])})
    dead = Settings(lease_seconds=0.2)
    past = datetime.now(UTC) - timedelta(seconds=1)
    assert store.take_traversal(tid, dead.owner, past, past)  # a crashed engine's lapsed lease
    claimed = store.claim_ready(tid, dead.owner, 1, past)
    assert [n.key for n in claimed] == ["a"]
    run_kernel(store, steps)
    assert steps.ran == ["a", "b"]
    assert steps.ended == {tid: "COMPLETE"}


def test_a_live_lease_elsewhere_is_left_alone(store: Store) -> None:
    steps = Steps(store)
    tid = start(store, {"a": ("ok", [])})
    now = datetime.now(UTC)
    assert store.take_traversal(tid, "someone-else", now + timedelta(minutes=5), now)
    kernel: Kernel[StepRun, Store] = Kernel(Journal(store), steps, Settings())
    kernel.start()
    assert kernel.runs == {} and steps.ran == []

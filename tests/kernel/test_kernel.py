"""The kernel with a front-end that is not stacks, and with both at once.

``Steps`` is a second front-end in a few dozen lines: its nodes are named
steps whose payload says what the job does, and it records what ran. If
the kernel knew anything of stacks or resources, this could not work; it
is also the shape the workflow engine will take. Its traversals are of
kind ``workflow``, each owned by a real workflow execution row, and one
kernel (``kernel.FrontEnds``) runs them beside real stacks: one scan, one
concurrency bound, one timer loop, and take-up after a crash of both.
"""

from __future__ import annotations

import asyncio
import dataclasses
import importlib.util
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from convection.convergence import EngineConfig
from convection.kernel import FrontEnds, Journal, Kernel, Outcome, RemoteJobs, Run, done
from convection.store import (
    WORKFLOW,
    AddTimer,
    Change,
    DeleteTimers,
    ExecutionRecord,
    FenceNode,
    NodeRecord,
    StaleNode,
    Store,
    TimerRecord,
    TraversalRecord,
    UpdateExecution,
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
        self.taken: list[str] = []

    def take_up(self, traversal: TraversalRecord) -> StepRun | None:
        assert traversal.kind == WORKFLOW and traversal.execution_id
        self.taken.append(traversal.id)
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
            state = "ERROR" if run.tally.failure else "SUCCESS"
            ended = UpdateTraversal(run.id, {"status": status, "finished_at": now})
            execution = UpdateExecution(run.traversal.execution_id, {"state": state})
            self.store.apply([ended, execution])
        return False


def _soon() -> datetime:
    return datetime.now(UTC) + timedelta(seconds=0.05)


def start(store: Store, steps: dict[str, tuple[str, Sequence[str]]]) -> str:
    """A workflow execution running a traversal of ``steps``: key -> (op,
    keys it needs)."""
    execution = ExecutionRecord(
        id=str(uuid.uuid4()), project="p", workflow_id="w", workflow_name="steps",
        state="RUNNING",
    )  # fmt: skip
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
    traversal = TraversalRecord(id=tid, kind=WORKFLOW, execution_id=execution.id, action="RUN")
    store.workflows.create_execution(execution, traversal=traversal, nodes=nodes)
    return tid


def state_of(store: Store, tid: str) -> str:
    traversal = store.get_traversal(tid)
    assert traversal is not None
    execution = store.workflows.get_execution(traversal.execution_id)
    assert execution is not None and execution.traversal_id == tid
    return execution.state


def steps_kernel(store: Store, steps: Steps, **settings: Any) -> Kernel[StepRun, Store]:
    frontends: FrontEnds[StepRun] = FrontEnds({WORKFLOW: steps})
    return Kernel(Journal(store), frontends, Settings(**settings))


def run_kernel(store: Store, steps: Steps, **settings: Any) -> Kernel[StepRun, Store]:
    kernel = steps_kernel(store, steps, **settings)
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
    assert steps.ended == {tid: "COMPLETE"} and state_of(store, tid) == "SUCCESS"
    assert set(states(store, tid).values()) == {"done"}
    traversal = store.get_traversal(tid)
    assert traversal is not None and traversal.lease_until is None  # released


def test_a_failure_skips_only_what_needs_it(store: Store) -> None:
    steps = Steps(store)
    tid = start(store, {"a": ("fail", []), "b": ("ok", ["a"]), "c": ("ok", ["b"]),
                        "x": ("ok", [])})  # fmt: skip
    run_kernel(store, steps)
    assert states(store, tid) == {"a": "failed", "b": "skipped", "c": "skipped", "x": "done"}
    assert steps.ended == {tid: "FAILED"} and state_of(store, tid) == "ERROR"


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
    kernel = steps_kernel(store, steps)
    kernel.start()
    assert kernel.runs == {} and steps.ran == []


# -- one kernel, two kinds -------------------------------------------------------------
def _convergence_helpers() -> Any:
    """The convergence suite's ``Env`` (a Stacks service with a recording
    ``Test::Rec`` type) and ``Recorder``."""
    path = Path(__file__).parent.parent / "convergence" / "conftest.py"
    spec = importlib.util.spec_from_file_location("_convergence_conftest_kernel", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_conv = _convergence_helpers()

#: Two resources, the first polled on a timer (``wait``) before it is done.
STACK = """
resources:
  slow: {type: Test::Rec, properties: {wait: 0.1}}
  after: {type: Test::Rec, depends_on: slow}
"""

#: A poll timer (``nap``) and a wake timer of the front-end's own (``park``).
WAITING_STEPS: dict[str, tuple[str, Sequence[str]]] = {
    "nap": ("nap", []),
    "park": ("park", []),
    "end": ("ok", ["nap", "park"]),
}


def _env(store: Store) -> Any:
    recorder = _conv.Recorder()
    return _conv.Env(store, recorder, EngineConfig(scan_seconds=0.05, concurrency=4))


def _stack_state(env: Any) -> str:
    stack = env.store.get_stack("p", "s")
    assert stack is not None
    return f"{stack.action}_{stack.status}"


def test_one_kernel_runs_a_stack_and_a_workflow_with_timers_of_both(store: Store) -> None:
    env = _env(store)
    engine = env.stacks.engine
    steps = Steps(store)
    engine.register(WORKFLOW, steps)
    env.create(STACK)
    tid = start(store, WAITING_STEPS)
    seen: list[set[str]] = []

    def both_done() -> bool:
        seen.append({run.traversal.kind for run in engine.kernel.runs.values()})
        return _stack_state(env) == "CREATE_COMPLETE" and tid in steps.ended

    env.run_until(both_done)
    assert {"stack", "workflow"} in seen  # held by one kernel at once
    assert steps.ended == {tid: "COMPLETE"} and state_of(store, tid) == "SUCCESS"
    assert steps.ran.count("nap") == 2 and steps.ran.count("park") == 2
    assert env.rec.ops("create") == [("create", "slow"), ("create", "after")]
    assert engine.kernel.executor.peak <= 4  # one bound for both kinds
    assert store.next_timer_due() is None  # every timer of both kinds fired
    assert set(engine.runs) <= {t.id for t in store.active_traversals()}  # stacks only


def test_a_stack_engine_leaves_workflow_traversals_and_their_timers_alone(store: Store) -> None:
    """Without a workflow front-end the stack engine neither leases a
    workflow traversal nor drops its due timer as an orphan."""
    env = _env(store)
    tid = start(store, {"nap": ("nap", [])})
    past = datetime.now(UTC) - timedelta(seconds=1)
    store.apply(
        [
            UpdateNode(tid, "nap", {"state": "sleeping", "payload": {"op": "nap", "progress": {}}}),
            AddTimer(tid, "nap", past),
        ]
    )
    env.create(STACK)
    env.wait()  # the stack engine runs until idle: the stack only
    assert _stack_state(env) == "CREATE_COMPLETE"
    assert store.next_timer_due(tid) == past  # still there
    traversal = store.get_traversal(tid)
    assert traversal is not None and traversal.lease_owner is None
    assert traversal.status == "IN_PROGRESS"
    steps = Steps(store)
    env.stacks.engine.register(WORKFLOW, steps)
    env.run_until(lambda: tid in steps.ended)
    assert steps.ran == ["nap"] and steps.ended == {tid: "COMPLETE"}


def test_a_crashed_engines_stack_and_workflow_are_both_taken_up(store: Store) -> None:
    """A dead engine held both traversals and had claimed a node of each;
    its leases lapsed. The next engine takes both up, reclaims the nodes
    and finishes both."""
    env = _env(store)
    env.create(STACK)
    stack = store.get_stack("p", "s")
    assert stack is not None and stack.traversal_id is not None
    tid = start(store, {"a": ("ok", []), "b": ("nap", ["a"]), "c": ("ok", ["b"])})
    dead, past = "dead-engine", datetime.now(UTC) - timedelta(seconds=5)
    for traversal_id in (stack.traversal_id, tid):
        assert store.take_traversal(traversal_id, dead, past, past)
        assert len(store.claim_ready(traversal_id, dead, 1, past)) == 1
    steps = Steps(store)
    env.stacks.engine.register(WORKFLOW, steps)
    env.run_until(lambda: _stack_state(env) == "CREATE_COMPLETE" and tid in steps.ended)
    assert steps.taken == [tid] and steps.ended == {tid: "COMPLETE"}
    assert steps.ran == ["a", "b", "b", "c"]
    assert state_of(store, tid) == "SUCCESS"
    creates = env.rec.ops("create")
    assert creates[-1] == ("create", "after") and ("create", "slow") in creates
    for traversal_id in (stack.traversal_id, tid):
        traversal = store.get_traversal(traversal_id)
        assert traversal is not None and traversal.lease_owner != dead


def test_a_fenced_write_is_refused_once_the_node_was_re_run(store: Store) -> None:
    """A paused worker's late outcome cannot overwrite the re-run's."""
    tid = start(store, {"a": ("ok", ())})
    soon = datetime.now(UTC) + timedelta(seconds=30)
    (node,) = store.claim_ready(tid, "engine-1", 1, soon)
    assert store.take_node(tid, node.key, node.attempt, "worker-a", soon) is not None
    assert store.take_node(tid, node.key, node.attempt + 1, "worker-b", soon) is None
    # worker-a is paused past its lease; the node is reclaimed and re-run.
    store.reclaim_expired(datetime.now(UTC) + timedelta(seconds=60))
    (again,) = store.claim_ready(tid, "engine-1", 1, soon)
    assert again.attempt == node.attempt + 1
    assert store.take_node(tid, node.key, again.attempt, "worker-b", soon) is not None
    finish = UpdateNode(tid, node.key, {"state": "done", "lease_owner": None})
    late: list[Change] = [FenceNode(tid, node.key, node.attempt, "worker-a"), finish]
    with pytest.raises(StaleNode):
        store.apply(late, traversal_id=tid)
    (stored,) = store.get_nodes(tid, [node.key])
    assert (stored.state, stored.lease_owner) == ("running", "worker-b")
    store.apply([FenceNode(tid, node.key, again.attempt, "worker-b"), finish], traversal_id=tid)
    (stored,) = store.get_nodes(tid, [node.key])
    assert stored.state == "done"


class _Queue:
    """A Dispatch that only remembers what it was given."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, str, dict[str, Any]]] = []

    async def defer(self, jobs: Sequence[tuple[str, str, dict[str, Any]]]) -> None:
        self.sent.extend(jobs)


def test_a_node_deferred_again_before_its_first_end_was_seen_counts_once(store: Store) -> None:
    """A woken node re-claimed before the engine saw its first job end (a
    wait condition's signal) is one job in flight, not two: counted twice,
    its run never ended."""
    tid = start(store, {"a": ("ok", ())})
    queue = _Queue()
    remote = RemoteJobs(queue, store, owner="engine-1", lease_seconds=30)
    (node,) = store.claim_ready(tid, "engine-1", 1, datetime.now(UTC) + timedelta(seconds=30))

    async def scenario() -> None:
        remote.defer("default", node)
        remote.defer("default", dataclasses.replace(node, attempt=node.attempt + 1))
        await asyncio.sleep(0.01)

    asyncio.run(scenario())
    assert remote.outstanding(tid) == 1
    assert [job[1] for job in queue.sent] == [f"{tid}/a/1", f"{tid}/a/2"]  # one lock per attempt
    store.apply([UpdateNode(tid, "a", {"state": "done", "lease_owner": None})])
    assert remote.heard(tid, "a")
    assert [n.key for n in remote.settle(every=False)[tid]] == ["a"]
    assert remote.outstanding(tid) == 0

"""Workflow executions as a front-end of the kernel (``kernel.FrontEnd``).

A workflow execution's run is a traversal of kind ``workflow``; each task
execution is a node whose key is the task's id. The kernel claims, leases,
journals and times them exactly as it does a stack's resources; this
module says what a node's job is (``job.run_node``), what a traversal is
when an engine takes it up (the execution, its definition as it started,
its task rows and their accepted results), and how a run ends
(``finish.finish``). Nothing here schedules: that is the kernel's.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from convection.kernel import FINISHED, UNREAD, Outcome
from convection.store import (
    AddNodes,
    AddTimer,
    Change,
    ExecutionRecord,
    NodeRecord,
    StaleTraversal,
    TimerRecord,
    TraversalRecord,
    UpdateNode,
)
from convection.workflows.engine import finish as ending
from convection.workflows.engine import job, states
from convection.workflows.engine.child import child_outcome
from convection.workflows.engine.dispatch import ENDED
from convection.workflows.engine.items import action_id, generation
from convection.workflows.engine.run import ExecutionRun, TaskMemory
from convection.workflows.engine.services import Services
from convection.workflows.engine.step import WAKE
from convection.workflows.lang import WorkflowSpec, parse_workflows, workflow_graph

#: A wake that finds its node still running is tried again this much later.
WAKE_RETRY_SECONDS = 0.2


class WorkflowFrontEnd:
    """Runs traversals of kind ``workflow``."""

    def __init__(self, services: Services) -> None:
        self.services = services
        self._specs: dict[tuple[str, str], WorkflowSpec] = {}

    # -- take-up ------------------------------------------------------------------
    def take_up(self, traversal: TraversalRecord) -> ExecutionRun | None:
        store = self.services.store
        execution = store.workflows.get_execution(traversal.execution_id)
        if execution is None or execution.traversal_id != traversal.id:
            return None
        spec = self.spec(execution)
        run = ExecutionRun(traversal, execution, spec, workflow_graph(spec))
        tasks = store.workflows.list_tasks(None, filters={"execution_id": execution.id})
        for record in tasks:
            run.add(TaskMemory(record))
            ended = record.runtime_context.get(ENDED)
            if ended is not None:  # fail/succeed committed; its end was not
                run.ended = (str(ended[0]), ended[1])
        self._results(run)
        run.count(store.list_nodes(traversal.id))
        return run

    def spec(self, execution: ExecutionRecord) -> WorkflowSpec:
        key = (execution.workflow_name, execution.definition)
        found = self._specs.get(key)
        if found is None:
            specs, _ = parse_workflows(execution.definition, execution.workflow_name)
            short = execution.workflow_name.rsplit(".", 1)[-1]
            found = next(
                (s for s in specs if execution.workflow_name in (s.qualified_name, s.name)),
                next((s for s in specs if s.name == short), specs[0]),
            )
            if len(self._specs) > 256:
                self._specs.clear()
            self._specs[key] = found
        return found

    def _results(self, run: ExecutionRun) -> None:
        """Accepted action results of each task, by index (the ids say which)."""
        if not run.tasks:
            return
        rows = self.services.store.workflows.list_action_executions(
            None, filters={"task_execution_id": list(run.tasks)}
        )
        by_id = {r.id: r for r in rows if r.accepted}
        for memory in run.all():
            rc = memory.record.runtime_context
            retry = int(rc.get("retry_no", 0))
            for key, kept in rc.get("kept", {}).items():
                memory.results[int(key)] = kept
            for index in range(int(rc.get("items_count", 1))):
                row = by_id.get(action_id(memory.id, retry, index, generation(rc)))
                if row is not None:
                    target = memory.results if row.state == states.SUCCESS else memory.errors
                    target[index] = row.output.get("result")
            for key, cid in rc.get("children", {}).items():
                child_outcome(self.services, memory, str(cid), int(key))

    # -- the kernel's questions ------------------------------------------------------------
    def current(self, run: ExecutionRun) -> bool:
        found = self.services.store.workflows.get_execution(run.execution.id)
        return found is not None and found.traversal_id == run.id

    def wanted(self, traversal: TraversalRecord) -> bool:
        found = self.services.store.workflows.get_execution(traversal.execution_id)
        return found is not None and found.traversal_id == traversal.id

    async def run_job(self, run: ExecutionRun, node: NodeRecord) -> Outcome:
        try:
            return await job.run_node(self.services, run, node)
        except StaleTraversal:
            raise
        except Exception as exc:
            # A bug in a job: the kernel fails the node, and the workflow
            # ends ERROR with it (never SUCCESS without the task).
            run.ended = (states.ERROR, f"{type(exc).__name__}: {node.key}: {exc}")
            raise

    def observe(self, run: ExecutionRun, changes: Sequence[Change]) -> None:
        for change in changes:
            if isinstance(change, AddNodes):
                run.tally.remaining += len(change.nodes)
                if any(n.state == "sleeping" for n in change.nodes):
                    run.tally.parked = True

    def stops_on_failure(self, run: ExecutionRun) -> bool:
        """A node fails only to end the workflow now (``fail``, ``succeed``,
        a force-fail); a task's ERROR is a completed task, not a failed node.
        In a reverse workflow a failed task skips what requires it, and the
        workflow fails late."""
        return run.ended is not None

    def fire_timer(
        self, run: ExecutionRun, timer: TimerRecord, node: NodeRecord | None
    ) -> list[Change] | None:
        """A wake from outside makes its node ready only while the node is
        parked: a late or second wake of a finished node does nothing, and
        one that reaches a node still running (a child that ended before its
        parent's task had parked) is put off a moment, never lost."""
        if timer.purpose != WAKE:
            return None  # the kernel's own poll: the node sleeps on it
        if node is UNREAD:
            node = self.services.store.get_node(timer.traversal_id, timer.node_key)
        if node is None or node.state in FINISHED:
            return []
        if node.state in ("running", "ready"):
            later = datetime.now(UTC) + timedelta(seconds=WAKE_RETRY_SECONDS)
            return [AddTimer(timer.traversal_id, timer.node_key, later, WAKE)]
        return [UpdateNode(timer.traversal_id, timer.node_key, {"state": "ready"})]

    def fail_node(
        self, run: ExecutionRun, node: NodeRecord, error: Exception, problem: str
    ) -> Sequence[Outcome]:
        run.ended = (states.ERROR, problem)
        return [Outcome("failed", failure=("RUN", problem))]

    def finish(self, runs: Sequence[ExecutionRun], now: datetime) -> bool:
        woke = False
        for run in runs:
            woke = ending.finish(self.services.store, run, now) or woke
        return woke

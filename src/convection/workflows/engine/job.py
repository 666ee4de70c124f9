"""A workflow node's job: one task's life, phase by phase, with Mistral's
policies around its action (``mistral/engine/policies.py``).

Each call advances the task as far as it can without waiting, and ends in
one outcome for the kernel:

* ``done``: the task completed and its transitions were dispatched (new
  task nodes are in the same journal entry);
* ``sleeping`` on a timer: ``wait-before``, a retry's delay,
  ``wait-after``, sleeping actions (``std.sleep``);
* parked (a ``sleeping`` node with no timer): the workflow is paused
  (``pause-before``, a task ending while paused), a join waits,
  an asynchronous action or a sub-workflow runs;
* ``failed``: the workflow ends now (``fail``, ``succeed``, a force-fail
  on an error of the workflow's own expressions).

What the task reached is kept in its ``runtime_context``, so whichever
engine runs the node next continues from there.
"""

from __future__ import annotations

import time
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

from convection.kernel import Outcome
from convection.store import NodeRecord, TaskExecutionRecord, UpdateActionExecution, UpdateNode
from convection.workflows.engine import actions as act
from convection.workflows.engine import policies, states
from convection.workflows.engine.child import run_children
from convection.workflows.engine.data import Structural
from convection.workflows.engine.dispatch import (
    BACKLOG,
    ENDED,
    dispatch,
    evaluated_name,
)
from convection.workflows.engine.finish import failure_message
from convection.workflows.engine.items import ItemRunner, action_id, generation
from convection.workflows.engine.run import ExecutionRun, TaskMemory
from convection.workflows.engine.services import Services
from convection.workflows.engine.step import (
    PARKED_ASYNC,
    PARKED_CHILD,
    PARKED_JOIN,
    PARKED_PAUSE,
    WAKE,
    Step,
)
from convection.workflows.lang import TaskSpec


def utcnow() -> datetime:
    return datetime.now(UTC)


async def run_node(svc: Services, run: ExecutionRun, node: NodeRecord) -> Outcome:
    step = Step(run, utcnow())
    # A parked node was woken from outside (a resume, a completion): the
    # execution's state is read now, whatever the rate.
    refresh(svc, run, force="parked" in node.payload)
    memory = _task_of(step, node)
    try:
        if node.kind == "dispatch":
            return _backlog(step, memory, node)
        return await _advance(svc, step, memory, node)
    except Structural as exc:
        return force_fail(step, memory, str(exc))


#: Seconds between two reads of an execution's state by its run: a pause
#: or cancel made through the API is seen within this.
REFRESH_SECONDS = 0.1


def refresh(svc: Services, run: ExecutionRun, *, force: bool = False) -> None:
    """The execution's state as operations left it (pause, cancel): its
    state column alone, at most every :data:`REFRESH_SECONDS`."""
    now = time.monotonic()
    if not force and now - run.refreshed < REFRESH_SECONDS:
        return
    run.refreshed = now
    found = svc.store.workflows.execution_state(run.execution.id)
    if found is not None and found[0] != run.execution.state:
        run.execution = replace(run.execution, state=found[0], state_info=found[1])


def _task_of(step: Step, node: NodeRecord) -> TaskMemory:
    """The node's task; a start node makes its row on its first run."""
    run = step.run
    task_id = str(node.payload["task"])
    found = run.tasks.get(task_id)
    if found is not None:
        return found
    name = str(node.payload.get("name", node.resource_name))
    record = TaskExecutionRecord(
        id=task_id, execution_id=run.execution.id, project=run.execution.project, name=name,
        node_key=node.key, state=states.RUNNING, type=run.spec.tasks[name].type,
        predecessors=[str(p) for p in node.payload.get("predecessors", [])],
        created_at=step.now, started_at=step.now,
    )  # fmt: skip
    memory = TaskMemory(record)
    run.add(memory)
    from convection.store import AddTaskExecution

    step.facts.append(AddTaskExecution(record))  # before its action runs' rows
    return memory


# -- outcomes ------------------------------------------------------------------------------
def done(step: Step) -> Outcome:
    if step.end is not None:
        step.run.ended = step.end
        return Outcome("failed", step.facts, step.changes, failure=("RUN", step.end[1] or ""))
    return Outcome("done", step.facts, step.changes, eager=tuple(step.eager))


def sleep(step: Step, memory: TaskMemory, due: datetime) -> Outcome:
    return Outcome("sleeping", step.facts, step.changes, due_at=due, resume={})


def park(step: Step, memory: TaskMemory, node: NodeRecord, reason: str) -> Outcome:
    payload = {**node.payload, "parked": reason}
    fields = {"state": "sleeping", "lease_owner": None, "lease_until": None, "payload": payload}
    step.changes.append(UpdateNode(step.run.id, node.key, fields))
    return Outcome("paused", step.facts, step.changes)


def force_fail(step: Step, memory: TaskMemory, message: str) -> Outcome:
    """Mistral's ``force_fail_task``: the task and the workflow fail now,
    with no ``on-error`` run."""
    step.task(memory, state=states.ERROR, state_info=message, finished_at=step.now, processed=True)
    step.end = (states.ERROR, failure_message([memory]))
    # Kept on the task, so an engine taking the run up after a crash ends it so too.
    step.task(memory, runtime_context={**memory.record.runtime_context, ENDED: list(step.end)})
    return done(step)


# -- the phases ------------------------------------------------------------------------------
async def _advance(svc: Services, step: Step, memory: TaskMemory, node: NodeRecord) -> Outcome:
    run = step.run
    if memory.completed:
        return _complete(step, memory, node)
    if memory.state == states.WAITING:
        return park(step, memory, node, PARKED_JOIN)
    spec = run.spec.tasks[memory.name]
    rc = dict(memory.record.runtime_context)
    if "final" in rc:  # after wait-after
        state, info = rc.pop("final")
        return _finish(step, memory, node, spec, rc, state, info)
    if not rc.get("started"):
        before = _before(step, memory, node, spec, rc)
        if before is not None:
            return before
    deadline = _deadline(rc)
    if deadline is not None and step.now >= deadline:
        info = f"Task timed out [timeout(s)={seconds(rc)}]."
        return _finish(step, memory, node, spec, {**rc, "timed_out": True}, states.ERROR, info)
    if spec.workflow is not None:
        return await _child(svc, step, memory, node, spec, rc)
    return await _action(svc, step, memory, node, spec, rc, deadline)


def _before(
    step: Step, memory: TaskMemory, node: NodeRecord, spec: TaskSpec, rc: dict[str, Any]
) -> Outcome | None:
    """pause-before, wait-before and timeout, before the task first runs."""
    run = step.run
    if run.execution.state == states.PAUSED:
        return park(step, memory, node, PARKED_PAUSE)
    if not rc.get("paused_before") and policies.flag(run, memory, spec.policies.pause_before):
        rc["paused_before"] = True
        info = "Set by 'pause-before' policy"
        step.task(memory, state=states.IDLE, state_info=info, runtime_context=rc)
        if run.execution.state == states.RUNNING:
            step.execution(state=states.PAUSED)
        return park(step, memory, node, PARKED_PAUSE)
    raw = spec.policies.wait_before
    delay = policies.number(run, memory, raw, "wait-before") if raw else 0.0
    if delay > 0 and not rc.get("waited_before"):
        rc["waited_before"] = True
        info = f"Delayed by 'wait-before' policy [delay={policies.seconds_text(delay)}]"
        step.task(memory, state=states.DELAYED, state_info=info, runtime_context=rc)
        return sleep(step, memory, step.now + timedelta(seconds=delay))
    rc["started"] = True
    raw = spec.policies.timeout
    timeout = policies.number(run, memory, raw, "timeout") if raw else 0.0
    if timeout > 0:
        rc["timeout"] = timeout
        rc["deadline"] = (step.now + timedelta(seconds=timeout)).isoformat()
    step.task(
        memory, state=states.RUNNING, state_info=None, runtime_context=rc,
        started_at=memory.record.started_at or step.now,
    )  # fmt: skip
    return None


def _deadline(rc: dict[str, Any]) -> datetime | None:
    raw = rc.get("deadline")
    return datetime.fromisoformat(raw) if isinstance(raw, str) else None


def seconds(rc: dict[str, Any]) -> str:
    return policies.seconds_text(float(rc.get("timeout", 0)))


async def _action(
    svc: Services, step: Step, memory: TaskMemory, node: NodeRecord, spec: TaskSpec,
    rc: dict[str, Any], deadline: datetime | None,
) -> Outcome:  # fmt: skip
    run = step.run
    name = evaluated_name(run, memory, spec.action or "std.noop")
    try:
        resolved = run.actions.get(name)
        if resolved is None:
            resolved = run.actions[name] = act.resolve(
                svc.store, svc.registry, run.execution.project, name, run.spec.workbook,
                run.execution.workflow_namespace,
            )  # fmt: skip
    except act.ActionError as exc:
        raise Structural(str(exc)) from exc
    runner = ItemRunner(svc, step, memory, spec, resolved, node.attempt, deadline)
    got = await runner.run_pass()
    refresh(svc, run)  # a pause or cancel while the action ran
    rc = {**rc, **runner.runtime()}
    if got.ended is not None:
        return _finish(step, memory, node, spec, rc, *got.ended)
    step.task(memory, runtime_context=rc)
    if got.due is not None:
        due = got.due if deadline is None else min(got.due, deadline)
        return sleep(step, memory, due)
    if deadline is not None:
        _timer(step, node, deadline)
    return park(step, memory, node, PARKED_ASYNC)


def _timer(step: Step, node: NodeRecord, due: datetime) -> None:
    from convection.store import AddTimer

    step.changes.append(AddTimer(step.run.id, node.key, due, WAKE))


async def _child(
    svc: Services, step: Step, memory: TaskMemory, node: NodeRecord, spec: TaskSpec,
    rc: dict[str, Any],
) -> Outcome:  # fmt: skip
    first = "children" not in rc
    ended = run_children(svc, step, memory, spec, rc)
    if ended is not None:
        return _finish(step, memory, node, spec, rc, *ended)
    step.task(memory, runtime_context=rc)
    deadline = _deadline(rc)
    if first and deadline is not None:
        _timer(step, node, deadline)
    return park(step, memory, node, PARKED_CHILD)


# -- the end of a task ----------------------------------------------------------------------------
def _finish(
    step: Step, memory: TaskMemory, node: NodeRecord, spec: TaskSpec, rc: dict[str, Any],
    state: str, info: str | None,
) -> Outcome:  # fmt: skip
    """fail-on, retry and wait-after, then the task completes."""
    run = step.run
    fail_on = spec.policies.fail_on
    if state == states.SUCCESS and fail_on and policies.flag(run, memory, fail_on, after=True):
        state, info = states.ERROR, "Failed by 'fail-on' policy"
    if spec.policies.retry is not None and not rc.get("timed_out"):
        retried = _retry(step, memory, spec, rc, state)
        if retried is not None:
            return retried
    raw = spec.policies.wait_after
    delay = policies.number(run, memory, raw, "wait-after") if raw else 0.0
    if delay > 0 and not rc.get("waited_after"):
        rc = {**rc, "waited_after": True, "final": [state, info]}
        text = f"Delayed by 'wait-after' policy [delay={policies.seconds_text(delay)}]"
        step.task(memory, state=states.DELAYED, state_info=text, runtime_context=rc)
        return sleep(step, memory, step.now + timedelta(seconds=delay))
    step.task(memory, state=state, state_info=info, finished_at=step.now, runtime_context=rc)
    return _complete(step, memory, node)


def _retry(
    step: Step, memory: TaskMemory, spec: TaskSpec, rc: dict[str, Any], state: str
) -> Outcome | None:
    """Mistral's RetryPolicy: the first run is not a retry."""
    run = step.run
    retry = spec.policies.retry
    assert retry is not None
    count = int(policies.number(run, memory, retry.count, "retry.count"))
    delay = policies.number(run, memory, retry.delay, "retry.delay")
    done_retries = int(rc.get("retry_no", 0))
    if done_retries >= count or state == states.CANCELLED:
        return None
    # The guards read the task's result and what it would publish.
    probe = memory.record
    run.update(memory.id, state=state)
    try:
        if state == states.SUCCESS:
            if retry.continue_on is None or not policies.flag(
                run, memory, retry.continue_on, after=True
            ):
                return None
        elif retry.break_on is not None and policies.flag(run, memory, retry.break_on, after=True):
            return None
    finally:
        memory.record = probe
    for index in list(memory.results) + list(memory.errors):
        aid = action_id(memory.id, done_retries, index, generation(rc))
        step.facts.append(UpdateActionExecution(aid, {"accepted": False}))
    memory.results.clear()
    memory.errors.clear()
    run.items.pop(memory.id, None)
    kept = {k: v for k, v in rc.items() if k not in ("sleeping", "pending", "children")}
    kept["retry_no"] = done_retries + 1
    text = f"Delayed by 'retry' policy [delay={policies.seconds_text(delay)}]"
    step.task(memory, state=states.DELAYED, state_info=text, runtime_context=kept)
    return sleep(step, memory, step.now + timedelta(seconds=delay))


def _complete(step: Step, memory: TaskMemory, node: NodeRecord) -> Outcome:
    """Publish, then the transitions; while the workflow is paused the
    task waits, completed, for the resume."""
    run = step.run
    if memory.record.processed:
        return done(step)
    if not memory.record.published and "published" not in memory.record.runtime_context:
        _publish(step, memory)
    if run.execution.state == states.PAUSED:
        return park(step, memory, node, PARKED_PAUSE)
    if run.execution.state in states.TERMINAL or run.tally.stopping is not None:
        # Cancelled or forced to an end meanwhile: nothing more starts.
        step.task(memory, processed=True)
        return done(step)
    if run.spec.type == "reverse":
        step.task(memory, processed=True)
        if memory.state == states.ERROR:
            return Outcome(
                "failed", step.facts, step.changes, failure=("RUN", memory.record.state_info or "")
            )
        return done(step)
    dispatch(step, memory)
    return done(step)


def _backlog(step: Step, memory: TaskMemory, node: NodeRecord) -> Outcome:
    """A resumed ``pause``: the entries that followed it."""
    if step.run.execution.state == states.PAUSED:
        return park(step, memory, node, PARKED_PAUSE)
    dispatch(step, memory, backlog=list(node.payload.get(BACKLOG, [])))
    return done(step)


def _publish(step: Step, memory: TaskMemory) -> None:
    from convection.workflows.engine.publish import publish

    publish(step, memory)

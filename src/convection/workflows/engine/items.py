"""Running a task's action: once, or once per ``with-items`` item.

Progress that must survive a crash lives in the task's ``runtime_context``
(``items``: the count and the retry it belongs to; ``sleeping``: items
waiting on a timer, with their resume state; ``pending``: asynchronous
items waiting for their completion through the API) and in its action
execution rows, whose ids are derived from (task, retry, index) so that a
take-up finds them again. An item's result is recorded when the item ends;
an action that is not safe to run twice (``safe_to_rerun`` False) is
recorded RUNNING, durably, before it starts, so an engine that finds it
RUNNING after a crash knows it may have run (Mistral's redelivery rule).

``concurrency`` bounds the items that are running, sleeping or pending
at once; a sleeping item keeps its slot, so a thousand sleeps with
``concurrency: 100`` wait in ten rounds, each on one timer row.
"""

from __future__ import annotations

import asyncio
import uuid
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Final

from convection.store import (
    ActionExecutionRecord,
    AddActionExecution,
    AddTaskExecution,
    UpdateActionExecution,
)
from convection.workflows.actions import Failure, Pending, RunContext, Sleep, Success
from convection.workflows.engine import actions as act
from convection.workflows.engine.data import Host, Structural, evaluated, expression_context
from convection.workflows.engine.dispatch import with_items_names
from convection.workflows.engine.run import ExecutionRun, TaskMemory
from convection.workflows.engine.services import Services
from convection.workflows.engine.step import Step
from convection.workflows.lang import TaskSpec

_IDS = uuid.UUID("6b1f5a52-3c8e-4f0e-9d55-5d1c0a9e4b7a")

REDELIVERED = (
    "Request to run an action was redelivered, but it cannot be re-run safely. "
    "The only safe thing to do is fail it [action={name}]."
)
FAILED_ITEMS = "One or more actions had failed."


def action_id(task_id: str, retry: int, index: int, generation: int = 0) -> str:
    """The id of an item's action execution: the same (task, rerun
    generation, retry, index) always names the same row."""
    return str(uuid.uuid5(_IDS, f"{task_id}/{generation}/{retry}/{index}"))


def generation(rc: Mapping[str, Any]) -> int:
    """How many times the task was rerun through the API."""
    return int(rc.get("generation", 0))


#: Items one with-items task may run: each is an action execution row and
#: a node's worth of journal, so a 10-million-item list from an input or an
#: action's result must not become 10 million rows. Mistral has no cap; this
#: is the same count as the tasks-per-workflow cap (``MAX_TASKS_PER_WORKFLOW``).
MAX_WITH_ITEMS: Final = 10_000


@dataclass(slots=True)
class Items:
    """Where a task's items stand after a pass."""

    #: All items ended: (state, state_info).
    ended: tuple[str, str | None] | None = None
    #: The earliest timer of a sleeping item.
    due: datetime | None = None
    #: Items wait for their completion through the API.
    pending: bool = False
    #: Items not started for want of a slot (with ``due`` or ``pending``).
    waiting: int = 0
    sleeping: dict[str, Any] = field(default_factory=dict)


def item_vars(run: ExecutionRun, memory: TaskMemory, spec: TaskSpec) -> list[dict[str, Any]]:
    """Each item's variables (``with-items``' collections zipped), or one
    empty set for a task without with-items."""
    cached = run.items.get(memory.id)
    if cached is not None:
        return cached
    if not spec.with_items:
        found: list[dict[str, Any]] = [{}]
    else:
        host = Host(run, memory, with_items_names(run))
        ctx = expression_context(run, memory)
        columns: list[tuple[str, list[Any]]] = []
        for item in spec.with_items:
            values = evaluated(item.collection, ctx, host)
            if not isinstance(values, list | tuple):
                raise Structural(
                    f"Wrong input format for: {item.var}. List type is expected for "
                    f"with-items, got {type(values).__name__}."
                )
            columns.append((item.var, list(values)))
        lengths = {len(v) for _, v in columns}
        if len(lengths) > 1:
            raise Structural(
                "Wrong input format for: with-items. All arrays must have the same length."
            )
        count = lengths.pop() if lengths else 0
        if count > MAX_WITH_ITEMS:
            raise Structural(
                f"Task {spec.name}: with-items has {count} items, more than the limit of "
                f"{MAX_WITH_ITEMS} items per task"
            )
        found = [{name: values[i] for name, values in columns} for i in range(count)]
    run.items[memory.id] = found
    return found


def item_input(
    run: ExecutionRun, memory: TaskMemory, spec: TaskSpec, variables: Mapping[str, Any],
    resolved: act.Resolved,
) -> dict[str, Any]:  # fmt: skip
    """An item's action input: evaluated, the environment's
    ``__actions`` defaults under it, through the ad-hoc layers, checked
    against the action's schema (a bad input force-fails the task, as in
    Mistral)."""
    host = Host(run, memory, with_items_names(run))
    ctx = expression_context(run, memory, items=variables)
    value = evaluated(spec.input, ctx, host)
    if not isinstance(value, Mapping):
        raise Structural(f"Task {spec.name}: input must evaluate to a mapping")
    defaults = run.execution.params.get("env", {})
    actions = defaults.get("__actions", {}) if isinstance(defaults, Mapping) else {}
    extra = actions.get(resolved.name, {}) if isinstance(actions, Mapping) else {}
    given = {**(extra if isinstance(extra, Mapping) else {}), **value}
    try:
        return act.checked(resolved, act.base_input(resolved, given, ctx))
    except act.ActionError as exc:
        raise Structural(str(exc)) from exc


class ItemRunner:
    """One pass over a task's items."""

    def __init__(
        self, svc: Services, step: Step, memory: TaskMemory, spec: TaskSpec,
        resolved: act.Resolved, attempt: int, deadline: datetime | None,
    ) -> None:  # fmt: skip
        self.svc = svc
        self.step = step
        self.run = step.run
        self.memory = memory
        self.spec = spec
        self.resolved = resolved
        self.attempt = attempt
        self.deadline = deadline
        rc = memory.record.runtime_context
        self.retry = int(rc.get("retry_no", 0))
        self.generation = generation(rc)
        self.sleeping: dict[str, Any] = dict(rc.get("sleeping", {}))
        self.pending: dict[str, str] = dict(rc.get("pending", {}))
        self._variables: list[dict[str, Any]] = []

    def ctx(self, index: int) -> RunContext:
        run = self.run
        return RunContext(
            execution_id=run.execution.id,
            task_id=self.memory.id,
            action_execution_id=action_id(self.memory.id, self.retry, index, self.generation),
            task_name=self.memory.name,
            workflow_name=run.execution.workflow_name,
            project=run.execution.project,
            limits=self.svc.limits,
            stacks=self.svc.stacks,
            signals=self.svc.signals,
        )

    async def run_pass(self) -> Items:
        variables = item_vars(self.run, self.memory, self.spec)
        count = len(variables)
        memory = self.memory
        self._collect_pending()
        now = self.step.now
        due = [int(i) for i, s in self.sleeping.items() if _time(s["due"]) <= now]
        self._keep()
        finished = set(memory.results) | set(memory.errors)
        held = {int(i) for i in self.sleeping} | {int(i) for i in self.pending}
        todo = [i for i in range(count) if i not in finished and i not in held]
        limit = self._concurrency(count)
        slots = max(0, limit - (len(held) - len(due)))
        queue: deque[tuple[int, Mapping[str, Any] | None]] = deque()
        for index in due:
            queue.append((index, self.sleeping.pop(str(index))))
        queue.extend((i, None) for i in todo)
        self._variables = variables
        workers = [self._worker(queue) for _ in range(min(len(queue), slots))]
        await asyncio.gather(*workers)
        return self._standing(count, sum(1 for _, slept in queue if slept is None))

    def _concurrency(self, count: int) -> int:
        from convection.workflows.engine import policies

        raw = self.spec.policies.concurrency
        got = int(policies.number(self.run, self.memory, raw, "concurrency")) if raw else 0
        return got if got > 0 else max(count, 1)

    async def _worker(self, queue: deque[tuple[int, Mapping[str, Any] | None]]) -> None:
        """Run items until one keeps its slot (sleeping, pending) or none
        are left: a freed slot takes the next item at once."""
        while queue:
            index, slept = queue.popleft()
            params = item_input(
                self.run, self.memory, self.spec, self._variables[index], self.resolved
            )
            if slept is None:
                if not await self._prewrite(index, params):
                    continue
                outcome = await self._bounded(act.start(self.resolved, self.ctx(index), params))
            else:
                state = slept.get("state", {})
                outcome = await self._bounded(
                    act.resume(self.resolved, self.ctx(index), params, state)
                )
            before = len(self.step.facts)
            if self._record(index, params, outcome, fresh=slept is None):
                return
            if not self.resolved.safe_to_rerun:
                # Its end, durably now: a crash later in the pass must not
                # fail an action that had finished as one that was running.
                ended = self.step.facts[before:]
                del self.step.facts[before:]
                await self.svc.journal.write(self.run.id, ended, [])

    async def _bounded(self, work: Any) -> Any:
        if self.deadline is None:
            return await work
        left = (self.deadline - datetime.now(self.deadline.tzinfo)).total_seconds()
        try:
            return await asyncio.wait_for(work, max(left, 0.001))
        except TimeoutError:
            return Failure(f"Timeout after {max(int(left), 0)} seconds")

    def _record(self, index: int, params: Mapping[str, Any], outcome: Any, *, fresh: bool) -> bool:
        """Write an item's outcome; True when it keeps its slot."""
        aid = action_id(self.memory.id, self.retry, index, self.generation)
        step = self.step
        prewritten = not self.resolved.safe_to_rerun or not fresh
        if isinstance(outcome, Sleep):
            due = step.now + timedelta(seconds=max(outcome.seconds, 0.0))
            # The input is evaluated again on resume: a secret is never kept here.
            self.sleeping[str(index)] = {"due": due.isoformat(), "state": dict(outcome.state)}
            if not prewritten:
                step.facts.append(AddActionExecution(self._row(aid, params, "RUNNING")))
            return True
        if isinstance(outcome, Pending):
            self.pending[str(index)] = aid
            row = {"is_sync": False}
            if prewritten:
                step.facts.append(UpdateActionExecution(aid, row))
            else:
                record = self._row(aid, params, "RUNNING")
                step.facts.append(AddActionExecution(_with(record, is_sync=False)))
            return True
        if isinstance(outcome, Success):
            state, output = "SUCCESS", {"result": outcome.data}
            self.memory.results[index] = outcome.data
        else:
            error = outcome.error if isinstance(outcome, Failure) else outcome
            state, output = "ERROR", {"result": error}
            self.memory.errors[index] = error
        fields = {"state": state, "accepted": True, "output": output}
        if prewritten:
            step.facts.append(UpdateActionExecution(aid, fields))
        else:
            step.facts.append(AddActionExecution(self._row(aid, params, state, output)))
        return False

    def _row(
        self, aid: str, params: Mapping[str, Any], state: str, output: dict[str, Any] | None = None
    ) -> ActionExecutionRecord:
        return ActionExecutionRecord(
            id=aid,
            project=self.run.execution.project,
            name=self.resolved.name,
            task_execution_id=self.memory.id,
            state=state,
            accepted=state in ("SUCCESS", "ERROR"),
            input=_redacted(self.resolved, params),
            output=output or {},
            created_at=self.step.now,
        )

    async def _prewrite(self, index: int, params: Mapping[str, Any]) -> bool:
        """Record RUNNING, durably, an item whose action must not run
        twice; whether to run it. An item a dead engine had recorded so is
        failed (unless the task is ``safe-rerun``), and one it finished
        keeps its outcome."""
        if self.resolved.safe_to_rerun:
            return True
        aid = action_id(self.memory.id, self.retry, index, self.generation)
        found = self.svc.store.workflows.get_action_execution(aid) if self.attempt > 1 else None
        if found is None:
            row = AddActionExecution(self._row(aid, params, "RUNNING"))
            await self.svc.journal.write(self.run.id, [*self._own_row(), row], [])
            return True
        if found.state in ("SUCCESS", "ERROR"):
            self._adopt(index, found.state, found.output)
            return False
        if self._safe_rerun():
            return True
        message = REDELIVERED.format(name=self.resolved.name)
        fields = {"state": "ERROR", "accepted": True, "output": {"result": message}}
        self.step.facts.append(UpdateActionExecution(aid, fields))
        self.memory.errors[index] = message
        return False

    def _own_row(self) -> list[Any]:
        """The task's row, when its start node made it in this step (it is
        written with the outcome): the prewritten row refers to it, so it
        is written first, with the first prewrite."""
        mine = [
            f for f in self.step.facts
            if isinstance(f, AddTaskExecution) and f.task.id == self.memory.id
        ]  # fmt: skip
        for fact in mine:
            self.step.facts.remove(fact)
        return mine

    def _safe_rerun(self) -> bool:
        raw = self.spec.safe_rerun
        if isinstance(raw, str):
            from convection.workflows.engine import policies

            return policies.flag(self.run, self.memory, raw)
        return bool(raw)

    def _adopt(self, index: int, state: str, output: Mapping[str, Any]) -> None:
        if state == "SUCCESS":
            self.memory.results[index] = output.get("result")
        else:
            self.memory.errors[index] = output.get("result")

    def _keep(self) -> None:
        """Items a rerun without reset kept (their results, from before)."""
        for key, result in self.memory.record.runtime_context.get("kept", {}).items():
            self.memory.results.setdefault(int(key), result)

    def _collect_pending(self) -> None:
        """Asynchronous items completed through the API since the last pass."""
        if not self.pending:
            return
        rows = self.svc.store.workflows
        for key, aid in list(self.pending.items()):
            found = rows.get_action_execution(aid)
            if found is None or found.state in ("RUNNING", "IDLE", "PAUSED"):
                continue
            del self.pending[key]
            self._adopt(int(key), "SUCCESS" if found.state == "SUCCESS" else "ERROR", found.output)

    def _standing(self, count: int, not_started: int) -> Items:
        memory = self.memory
        got = Items(waiting=not_started, sleeping=self.sleeping, pending=bool(self.pending))
        if self.sleeping:
            got.due = min(_time(s["due"]) for s in self.sleeping.values())
        if self.sleeping or self.pending or not_started:
            return got
        if len(memory.results) + len(memory.errors) < count:
            return got
        if memory.errors:
            if self.spec.with_items:
                got.ended = ("ERROR", FAILED_ITEMS)
            else:
                got.ended = ("ERROR", _text(memory.errors[min(memory.errors)]))
        else:
            got.ended = ("SUCCESS", None)
        return got

    def runtime(self) -> dict[str, Any]:
        """What to keep in the task's ``runtime_context``."""
        count = len(self.run.items.get(self.memory.id, [{}]))
        return {
            "sleeping": self.sleeping, "pending": self.pending, "items_count": count,
            "with_items": bool(self.spec.with_items),
        }  # fmt: skip


def _text(error: Any) -> str:
    """A task's state_info from its action's error: Python's ``str`` of it,
    as Mistral writes ``str(action_ex.output['result'])``."""
    return error if isinstance(error, str) else str(error)


def _time(text: str) -> datetime:
    return datetime.fromisoformat(text)


def _redacted(resolved: act.Resolved, params: Mapping[str, Any]) -> dict[str, Any]:
    secret = resolved.plugin.secret_params()
    return {k: ("******" if k in secret else v) for k, v in params.items()}


def _with(record: ActionExecutionRecord, **fields: Any) -> ActionExecutionRecord:
    from dataclasses import replace

    return replace(record, **fields)

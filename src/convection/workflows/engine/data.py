"""The data a task's expressions see, and the engine side of Mistral's
context functions.

Contexts are layered views (``ChainMap``), never merged copies, with the
layers of Mistral's ``ContextView`` (``mistral/workflow/data_flow.py``),
the first layer holding a key winning. A task's inbound context is the
merge of its predecessors' outbound contexts (what led to it), and a
task's outbound context is its inbound one overlaid with what it
published. Each is a new dict of the *keys*, sharing the values: a 10 MB
value published once is one object however many tasks read it.
"""

from __future__ import annotations

import dataclasses
from collections import ChainMap
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, Final

from convection.common import DEFAULT_LIMITS
from convection.workflows.engine.run import ExecutionRun, TaskMemory
from convection.workflows.lang import EvaluationError, evaluate

#: The budgets of a workflow's expressions: HOT's, but with yaql's memory
#: quota raised to the size any one value may have. A workflow's data is
#: the point of it (a file's content, an API's answer), where a template's
#: yaql only shapes parameters; Mistral sets no quota at all.
EXPRESSION_LIMITS: Final = dataclasses.replace(
    DEFAULT_LIMITS,
    yaql_memory_quota=max(DEFAULT_LIMITS.yaql_memory_quota, DEFAULT_LIMITS.max_value_size),
)


class Structural(Exception):
    """An error in the workflow's own expressions: force-fails the task
    and the workflow (Mistral's ``force_fail_task``)."""


def evaluated(value: Any, context: Any, host: Any = None) -> Any:
    """``value`` evaluated under the workflow budgets; an expression error
    is :class:`Structural`, with Mistral's message."""
    try:
        return evaluate(value, context, host, limits=EXPRESSION_LIMITS)
    except EvaluationError as exc:
        raise Structural(exc.message) from exc


#: Keys of an execution's stored ``context``.
VARS = "vars"
GLOBAL = "global"


def mistral_time(value: datetime | None) -> str | None:
    """``YYYY-MM-DD HH:MM:SS`` (Mistral's ``utils.datetime_to_str``)."""
    return None if value is None else value.strftime("%Y-%m-%d %H:%M:%S")


def env(run: ExecutionRun) -> Mapping[str, Any]:
    found = run.execution.params.get("env")
    return found if isinstance(found, Mapping) else {}


def workflow_context(run: ExecutionRun) -> dict[str, Any]:
    """The execution's own context: ``vars``, ``global`` publishes and
    ``__execution`` (what ``global(name)`` reads)."""
    stored = run.execution.context
    return {
        **stored.get(VARS, {}),
        **stored.get(GLOBAL, {}),
        "__execution": {"id": run.execution.id},
    }


def inbound(run: ExecutionRun, memory: TaskMemory) -> Mapping[str, Any]:
    """The merge of the outbound contexts of the tasks that led here."""
    preds = memory.record.predecessors
    if not preds:
        return {}
    if len(preds) == 1:
        found = run.tasks.get(preds[0])
        return outbound(run, found) if found is not None else {}
    merged: dict[str, Any] = {}
    for pred in preds:
        found = run.tasks.get(pred)
        if found is not None:
            merged.update(outbound(run, found))
    return merged


def outbound(run: ExecutionRun, memory: TaskMemory) -> Mapping[str, Any]:
    """Inbound overlaid with what the task published, built once per task
    (iteratively: a chain of 1,000 tasks must not recurse 1,000 deep)."""
    if memory.outbound is not None:
        return memory.outbound
    chain = [memory]
    while True:
        preds = chain[-1].record.predecessors
        if len(preds) != 1:
            break
        prev = run.tasks.get(preds[0])
        if prev is None or prev.outbound is not None:
            break
        chain.append(prev)
    for task in reversed(chain):
        task.outbound = {**inbound(run, task), **task.record.published}
    assert memory.outbound is not None
    return memory.outbound


def task_layer(memory: TaskMemory) -> dict[str, Any]:
    return {"__task_execution": {"id": memory.id, "name": memory.name}}


def expression_context(
    run: ExecutionRun,
    memory: TaskMemory,
    *,
    items: Mapping[str, Any] | None = None,
    after: bool = False,
) -> ChainMap[str, Any]:
    """The layers for a task's input, with-items and policies (``after``
    False), or for its publish and transition guards (``after`` True: the
    task's outbound context, so what it published is seen)."""
    own = outbound(run, memory) if after else inbound(run, memory)
    return ChainMap(
        task_layer(memory),
        {"__env": env(run)},
        dict(items or {}),
        dict(own),
        workflow_context(run),
        run.execution.input,
    )


def final_context(run: ExecutionRun, ends: Sequence[TaskMemory]) -> ChainMap[str, Any]:
    """What a workflow's ``output`` is evaluated against: the merge of the
    outbound contexts of the tasks the run ended with, then the workflow's
    context and input."""
    merged: dict[str, Any] = {}
    for task in ends:
        merged.update(outbound(run, task))
    return ChainMap(merged, {"__env": env(run)}, workflow_context(run), run.execution.input)


class Host:
    """:class:`~convection.workflows.ExpressionHost` over one run: the
    current task (if any) and the run's tasks in memory."""

    def __init__(
        self, run: ExecutionRun, current: TaskMemory | None, with_items: frozenset[str]
    ) -> None:
        self._run = run
        self._current = current
        #: Names of the workflow's with-items tasks (their result is a list).
        self._with_items = with_items

    def task(self, name: str | None) -> Mapping[str, Any] | None:
        if name is None or (self._current is not None and name == self._current.name):
            return None if self._current is None else self._shape(self._current)
        found = self._run.last(name)
        return None if found is None else self._shape(found)

    def tasks(
        self, workflow_execution_id: str | None, recursive: bool, state: str | None, flat: bool
    ) -> Sequence[Mapping[str, Any]]:
        if workflow_execution_id not in (None, self._run.execution.id):
            return []
        found = (t for t in self._run.all() if state is None or t.state == state)
        return [self._shape(t) for t in found]

    def execution(self) -> Mapping[str, Any]:
        ex = self._run.execution
        return {
            "id": ex.id,
            "name": ex.workflow_name,
            "spec": {"name": self._run.spec.name, "type": self._run.spec.type},
            "input": ex.input,
            "params": ex.params,
            "created_at": mistral_time(ex.created_at),
            "updated_at": mistral_time(ex.updated_at),
            "root_execution_id": ex.root_execution_id,
        }

    def executions(
        self,
        execution_id: str | None,
        root_execution_id: str | None,
        state: str | None,
        from_time: str | None,
        to_time: str | None,
    ) -> Sequence[Mapping[str, Any]]:
        me = self.execution()
        if execution_id not in (None, me["id"]) or state not in (None, self._run.execution.state):
            return []
        return [me]

    def env(self) -> Mapping[str, Any]:
        return env(self._run)

    def global_context(self) -> Mapping[str, Any]:
        return workflow_context(self._run)

    def _shape(self, memory: TaskMemory) -> Mapping[str, Any]:
        record = memory.record
        return {
            "id": record.id,
            "name": record.name,
            "spec": {"name": record.name},
            "state": record.state,
            "state_info": record.state_info,
            "result": memory.result(record.name in self._with_items),
            "published": record.published,
            "type": record.type,
            "workflow_execution_id": record.execution_id,
            "created_at": mistral_time(record.created_at),
            "updated_at": mistral_time(record.updated_at),
        }

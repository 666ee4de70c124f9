"""An execution's tree, read: Mistral's execution report
(``GET /v2/executions/<id>/report``) and sub-executions
(``GET /v2/executions/<id>/executions``, ``GET /v2/tasks/<id>/executions``).

Both walk the tree the same way Mistral's controllers do
(``execution_report.py``, ``sub_execution.py``): an execution at depth
``d`` has its tasks at ``d + 1``, and a task's sub-workflows at the task's
depth; ``max_depth`` (negative: no limit) stops the walk below it, and
``errors_only`` keeps only the tasks in ERROR (the root is always shown).
Each execution costs three queries (its tasks, their action executions,
their sub-workflows), so the walk is O(executions + tasks + actions),
never a query per task.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

from convection.store import ActionExecutionRecord, ExecutionRecord, Store, TaskExecutionRecord
from convection.workflows.engine import states
from convection.workflows.engine.data import mistral_time
from convection.workflows.engine.operations import (
    _execution,
    _task,
    execution_body,
)

Body = dict[str, Any]

#: Report statistics keys, by the task state each counts (Mistral's
#: ``ExecutionReportStatistics``); other states count only in the total.
_COUNTED: Final = {
    states.RUNNING: "running_tasks_count",
    states.SUCCESS: "success_tasks_count",
    states.ERROR: "error_tasks_count",
    states.IDLE: "idle_tasks_count",
    states.PAUSED: "paused_tasks_count",
}


@dataclass(frozen=True, slots=True)
class Walk:
    """How far a walk goes: Mistral's ``errors_only`` and ``max_depth``."""

    errors_only: bool = False
    max_depth: int = -1

    def stops_at(self, depth: int) -> bool:
        return 0 <= self.max_depth < depth

    def skips(self, task: TaskExecutionRecord) -> bool:
        return self.errors_only and task.state != states.ERROR


@dataclass(slots=True)
class _Level:
    """One execution's children, read in three queries."""

    tasks: list[TaskExecutionRecord]
    actions: dict[str, list[ActionExecutionRecord]] = field(default_factory=dict)
    children: dict[str, list[ExecutionRecord]] = field(default_factory=dict)


def _level(store: Store, execution_id: str, *, actions: bool) -> _Level:
    rows = store.workflows
    tasks = rows.list_tasks(None, filters={"execution_id": execution_id})
    level = _Level(tasks)
    ids = [t.id for t in tasks]
    if not ids:
        return level
    for child in rows.list_executions(None, filters={"task_execution_id": ids}):
        level.children.setdefault(child.task_execution_id or "", []).append(child)
    if actions:
        for action in rows.list_action_executions(None, filters={"task_execution_id": ids}):
            level.actions.setdefault(action.task_execution_id or "", []).append(action)
    return level


# -- the report ---------------------------------------------------------------------------
def execution_report(
    store: Store, project: str, execution_id: str, *, errors_only: bool = False,
    max_depth: int = -1, statistics_only: bool = False,
) -> Body:  # fmt: skip
    """``{"statistics": {...}, "root_workflow_execution": {...}}``; with
    ``statistics_only`` the statistics alone (the tree is still walked:
    they count what it would show)."""
    root = _execution(store, project, execution_id)
    stats = {"total_tasks_count": 0, **{k: 0 for k in _COUNTED.values()}}
    tree = _workflow_entry(store, root, Walk(errors_only, max_depth), stats, 0)
    if statistics_only:
        return {"statistics": stats}
    return {"statistics": stats, "root_workflow_execution": tree}


def _times(record: Any) -> Body:
    return {
        "id": record.id,
        "name": getattr(record, "workflow_name", None) or record.name,
        "state": record.state,
        "state_info": record.state_info,
        "created_at": mistral_time(record.created_at),
        "updated_at": mistral_time(record.updated_at),
    }


def _workflow_entry(
    store: Store, execution: ExecutionRecord, walk: Walk, stats: dict[str, int], depth: int
) -> Body:
    entry = _times(execution)
    if walk.stops_at(depth):
        return entry
    level = _level(store, execution.id, actions=True)
    entry["task_executions"] = []
    for task in level.tasks:
        if walk.skips(task):
            continue
        stats["total_tasks_count"] += 1
        counted = _COUNTED.get(task.state)
        if counted is not None:
            stats[counted] += 1
        entry["task_executions"].append(_task_entry(store, task, level, walk, stats, depth + 1))
    return entry


def _task_entry(
    store: Store, task: TaskExecutionRecord, level: _Level, walk: Walk, stats: dict[str, int],
    depth: int,
) -> Body:  # fmt: skip
    entry = _times(task)
    if "retry_no" in task.runtime_context:
        entry["retry_count"] = int(task.runtime_context["retry_no"])
    entry["action_executions"] = [
        {**_times(a), "accepted": a.accepted, "last_heartbeat": None}
        for a in level.actions.get(task.id, [])
    ]
    entry["workflow_executions"] = [
        _workflow_entry(store, child, walk, stats, depth)
        for child in level.children.get(task.id, [])
    ]
    return entry


# -- sub-executions -------------------------------------------------------------------------
def execution_sub_executions(
    store: Store, project: str, execution_id: str, *, errors_only: bool = False,
    max_depth: int = -1,
) -> list[Body]:  # fmt: skip
    """The execution and every execution below it, depth first (each
    before its own sub-workflows), as Mistral lists them."""
    root = _execution(store, project, execution_id)
    out: list[Body] = []
    _below_execution(store, root, Walk(errors_only, max_depth), 0, out)
    return out


def task_sub_executions(
    store: Store, project: str, task_id: str, *, errors_only: bool = False,
    max_depth: int = -1,
) -> list[Body]:  # fmt: skip
    """The task's sub-workflow executions and every execution below them."""
    task = _task(store, project, task_id)
    walk = Walk(errors_only, max_depth)
    out: list[Body] = []
    if walk.skips(task):
        return out
    children = store.workflows.list_executions(None, filters={"task_execution_id": task.id})
    for child in children:
        _below_execution(store, child, walk, 0, out)
    return out


def _below_execution(
    store: Store, execution: ExecutionRecord, walk: Walk, depth: int, out: list[Body]
) -> None:
    if walk.stops_at(depth):
        return
    out.append(execution_body(execution))
    level = _level(store, execution.id, actions=False)
    for task in level.tasks:
        if walk.skips(task):
            continue
        for child in level.children.get(task.id, []):
            _below_execution(store, child, walk, depth + 1, out)

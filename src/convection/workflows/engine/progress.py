"""How far an execution has got, task by task: what a live view draws.

Mistral's API answers this only piecemeal (a task's ``runtime_context``
has its retry number and its with-items count, its action executions
which items are done). This puts it together in three queries, the same
as the report's: the tasks, their action executions, their
sub-workflows. The workflow's graph is the one the execution started
with (``definition`` is kept per execution), so an upload since then
does not redraw a running execution.
"""

from __future__ import annotations

from typing import Any

from convection.common import InvalidInput
from convection.store import Store, TaskExecutionRecord
from convection.workflows.definitions import get_workflow_record
from convection.workflows.engine import states
from convection.workflows.engine.items import action_id, generation
from convection.workflows.engine.operations import _execution, execution_body, spec_of
from convection.workflows.engine.reports import _Level, _level
from convection.workflows.lang import WorkflowSpec, workflow_graph

Body = dict[str, Any]


def stored_graph(store: Store, project: str, identifier: str, namespace: str = "") -> Body:
    """A stored workflow's graph, by id or name (as ``workflow get``)."""
    record = get_workflow_record(store, project, identifier, namespace)
    return {"id": record.id, **definition_graph(spec_of(record.name, record.definition))}


def execution_progress(
    store: Store, project: str, execution_id: str, *, graph: bool = True
) -> Body:
    """The execution, its workflow's graph (tasks and transitions), and
    each task that ran: state, ``state_info``, retries so far, runs of
    that name, with-items items done and in all, sub-workflows."""
    record = _execution(store, project, execution_id)
    level = _level(store, record.id, actions=True)
    spec = None
    try:
        if graph:
            spec = spec_of(record.workflow_name, record.definition)
    except InvalidInput:
        spec = None  # an execution whose text no longer parses still shows its tasks
    return {
        "execution": execution_body(record),
        "graph": definition_graph(spec) if graph and spec is not None else None,
        "tasks": [_task(t, level) for t in level.tasks],
    }


def definition_graph(spec: WorkflowSpec) -> Body:
    """A workflow's tasks and transitions: ``on-success``/``on-error``/
    ``on-complete`` edges of a direct workflow, ``requires`` of a reverse
    one; an engine command (``fail``, ``succeed``...) is a node too."""
    graph = workflow_graph(spec)
    tasks = [
        {"name": name, "action": t.action if t.workflow is None else f"workflow {t.workflow}"}
        for name, t in spec.tasks.items()
    ]
    commands = sorted({e.target for e in graph.edges if e.command})
    return {
        "name": spec.qualified_name,
        "type": spec.type,
        "tasks": tasks,
        "commands": commands,
        "start": list(graph.start),
        "edges": [
            {"source": e.source, "target": e.target, "label": e.kind, "condition": e.condition}
            for e in graph.edges
        ],
    }


def _task(task: TaskExecutionRecord, level: _Level) -> Body:
    rc = task.runtime_context
    children = level.children.get(task.id, [])
    total = int(rc.get("items_count", 0)) if rc.get("with_items") else None
    return {
        "id": task.id,
        "name": task.name,
        "state": task.state,
        "state_info": task.state_info,
        "retries": int(rc.get("retry_no", 0)),
        "items_total": total,
        "items_done": None if total is None else _items_done(task, level, total),
        "sub_execution_ids": [c.id for c in children],
        "updated_at": task.updated_at.isoformat() if task.updated_at else None,
    }


def _items_done(task: TaskExecutionRecord, level: _Level, total: int) -> int:
    """Items that ended (in success or not) in the task's current retry."""
    rc = task.runtime_context
    kept = rc.get("kept", {})
    retry, gen = int(rc.get("retry_no", 0)), generation(rc)
    ended = {a.id for a in level.actions.get(task.id, []) if a.state in states.TERMINAL}
    child_state = {c.id: c.state for c in level.children.get(task.id, [])}
    child_ended = {
        str(key)
        for key, cid in rc.get("children", {}).items()
        if child_state.get(str(cid)) in states.TERMINAL
    }
    return sum(
        1
        for index in range(total)
        if str(index) in kept
        or action_id(task.id, retry, index, gen) in ended
        or str(index) in child_ended
    )

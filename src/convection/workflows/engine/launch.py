"""Starting a workflow execution: its row, its traversal and the nodes of
its first tasks, in one transaction (``store.workflows.create_execution``).

A direct workflow starts with its start tasks (those no transition leads
to); a reverse one with every task the target (``params.task_name``)
needs, transitively, as a graph of nodes the kernel releases as their
``requires`` finish. A start node creates its task row when it first
runs (its payload names the task); tasks reached later are created by
the task that leads to them.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from convection.common import Diagnostic, InvalidInput
from convection.store import ExecutionRecord, NodeRecord, Store, TraversalRecord
from convection.workflows.engine.data import EXPRESSION_LIMITS, GLOBAL, VARS
from convection.workflows.lang import (
    REQUIRED,
    EvaluationError,
    WorkflowSpec,
    evaluate,
    workflow_graph,
)

WORKFLOW = "workflow"


def new_id() -> str:
    return str(uuid.uuid4())


def checked_input(spec: WorkflowSpec, given: Mapping[str, Any]) -> dict[str, Any]:
    """The input with defaults, as Mistral's ``validate_input`` checks it."""
    missing = [k for k, v in spec.input.items() if v is REQUIRED and k not in given]
    unexpected = [k for k in given if k not in spec.input]
    if missing or unexpected:
        parts = []
        if missing:
            parts.append(f"missing={missing}")
        if unexpected:
            parts.append(f"unexpected={unexpected}")
        message = (
            f"Invalid input [name={spec.qualified_name}, class=WorkflowSpec, {', '.join(parts)}]"
        )
        raise InvalidInput([Diagnostic(message, ("input",))])
    values = {k: v for k, v in spec.input.items() if v is not REQUIRED}
    values.update(given)
    return values


def initial_context(spec: WorkflowSpec, execution: ExecutionRecord) -> dict[str, Any]:
    """``vars`` evaluated against the input and the environment."""
    env = execution.params.get("env", {})
    ctx = {**execution.input, "__env": env, "__execution": {"id": execution.id}}
    try:
        evaluated = evaluate(dict(spec.vars), ctx, limits=EXPRESSION_LIMITS)
    except EvaluationError as exc:
        raise InvalidInput([Diagnostic(exc.message, ("vars",))]) from exc
    return {VARS: evaluated, GLOBAL: {}}


def start_nodes(
    spec: WorkflowSpec, traversal_id: str, params: Mapping[str, Any]
) -> list[NodeRecord]:
    graph = workflow_graph(spec)
    if spec.type == "direct":
        return [_node(traversal_id, name, new_id(), ()) for name in graph.start]
    target = params.get("task_name")
    if not isinstance(target, str) or target not in spec.tasks:
        message = (
            f"Reverse workflow {spec.qualified_name} needs a target task: params.task_name "
            f"must name one of {sorted(spec.tasks)}"
        )
        raise InvalidInput([Diagnostic(message, ("params", "task_name"))])
    needed = _required(spec, target)
    ids = {name: new_id() for name in needed}
    nodes = []
    for name in needed:
        requires = [r for r in spec.tasks[name].requires if r in needed]
        successors = tuple(ids[n] for n in needed if name in spec.tasks[n].requires)
        node = _node(traversal_id, name, ids[name], successors, [ids[r] for r in requires])
        nodes.append(node)
    return nodes


def _required(spec: WorkflowSpec, target: str) -> list[str]:
    """``target`` and everything it requires, transitively, in spec order."""
    seen: set[str] = set()
    stack = [target]
    while stack:
        name = stack.pop()
        if name in seen or name not in spec.tasks:
            continue
        seen.add(name)
        stack.extend(spec.tasks[name].requires)
    return [n for n in spec.tasks if n in seen]


def _node(
    traversal_id: str, name: str, task_id: str, successors: tuple[str, ...],
    predecessors: list[str] | None = None,
) -> NodeRecord:  # fmt: skip
    preds = predecessors or []
    return NodeRecord(
        traversal_id=traversal_id, key=task_id, kind="task", resource_name=name,
        pending=len(preds), state="waiting" if preds else "ready", successors=successors,
        payload={"task": task_id, "name": name, "predecessors": preds},
    )  # fmt: skip


def start_of(
    execution: ExecutionRecord, spec: WorkflowSpec, now: datetime
) -> tuple[TraversalRecord, list[NodeRecord]]:
    """The traversal and first nodes that start ``execution``, unwritten
    (a cron trigger writes them in its own firing's transaction)."""
    traversal = TraversalRecord(
        id=new_id(), action="RUN", kind=WORKFLOW, execution_id=execution.id, started_at=now
    )
    return traversal, start_nodes(spec, traversal.id, execution.params)


def launch(
    store: Store, execution: ExecutionRecord, spec: WorkflowSpec, now: datetime
) -> TraversalRecord:
    """Write the execution RUNNING with its traversal and first nodes."""
    traversal, nodes = start_of(execution, spec, now)
    store.workflows.create_execution(execution, traversal=traversal, nodes=nodes)
    return traversal

"""Sub-workflow tasks (Mistral's ``WorkflowAction``): the child executions
(one, or one per with-items item within ``concurrency``) start when the
task runs, and the task parks until they end; each child's finish wakes
the task's node with a timer row.

A child's id is derived from the task's (its rerun generation, retry and
item index), so a task that runs again after a crash finds the children it
started instead of starting others. Task input keys the child does not declare go to its ``params``
(how ``env`` or ``task_name`` reach a child); the child reads ``env()``
from the root execution.
"""

from __future__ import annotations

import uuid
from typing import Any

from convection.common import InvalidInput
from convection.store import ExecutionRecord
from convection.workflows.engine import states
from convection.workflows.engine.data import Host, Structural, evaluated, expression_context
from convection.workflows.engine.dispatch import evaluated_name, with_items_names
from convection.workflows.engine.launch import checked_input, initial_context, launch
from convection.workflows.engine.run import TaskMemory
from convection.workflows.engine.services import Services
from convection.workflows.engine.step import Step
from convection.workflows.lang import (
    TaskSpec,
    lookup_order,
    parse_workflows,
)

_IDS = uuid.UUID("0f7c3f0e-7a55-4f40-9a3e-2b8b7b1d6c11")


def child_id(memory: TaskMemory, index: int) -> str:
    rc = memory.record.runtime_context
    key = f"{memory.id}/{rc.get('generation', 0)}/{rc.get('retry_no', 0)}/{index}"
    return str(uuid.uuid5(_IDS, key))


def run_children(
    svc: Services, step: Step, memory: TaskMemory, spec: TaskSpec, rc: dict[str, Any]
) -> tuple[str, str | None] | None:
    """Collect the children that ended and start more within the
    concurrency; the task's (state, state_info) once all have ended."""
    from convection.workflows.engine import policies
    from convection.workflows.engine.items import FAILED_ITEMS, item_vars

    variables = item_vars(step.run, memory, spec)
    children: dict[str, str] = dict(rc.get("children", {}))
    running = 0
    cancelled = False
    for key, cid in children.items():
        index = int(key)
        if index in memory.results or index in memory.errors:
            continue
        ended = child_outcome(svc, memory, cid, index)
        if ended is None:
            running += 1
        elif ended[0] == states.CANCELLED:
            cancelled = True
    raw = spec.policies.concurrency
    limit = int(policies.number(step.run, memory, raw, "concurrency")) if raw else 0
    limit = limit if limit > 0 else len(variables)
    for index in range(len(variables)):
        if running >= limit:
            break
        if str(index) not in children:
            children[str(index)] = start_child(svc, step, memory, spec, index, variables[index])
            running += 1
    rc["children"] = children
    rc["items_count"] = len(variables)
    rc["with_items"] = bool(spec.with_items)
    if running or len(children) < len(variables):
        return None
    if cancelled:
        return states.CANCELLED, "One or more actions was cancelled."
    if memory.errors:
        if spec.with_items:
            return states.ERROR, FAILED_ITEMS
        return states.ERROR, str(memory.errors[0])
    return states.SUCCESS, None


def start_child(
    svc: Services, step: Step, memory: TaskMemory, spec: TaskSpec, index: int,
    variables: dict[str, Any],
) -> str:  # fmt: skip
    run = step.run
    parent = run.execution
    new_id = child_id(memory, index)
    if svc.store.workflows.get_execution(new_id) is not None:
        return new_id  # started before a crash
    name = evaluated_name(run, memory, spec.workflow or "")
    record = None
    for candidate in lookup_order(name, run.spec.workbook):
        record = svc.store.workflows.get_workflow(
            parent.project, candidate, parent.workflow_namespace
        )
        if record is not None:
            break
    if record is None:
        raise Structural(
            f"Workflow not found [workflow_name={name}, namespace={parent.workflow_namespace}]"
        )
    specs, _ = parse_workflows(record.definition, record.name)
    child_spec = next((s for s in specs if record.name in (s.qualified_name, s.name)), None)
    if child_spec is None:
        raise Structural(f"Workflow definition {record.name} cannot be read")
    given = _input(run, memory, spec, variables)
    declared = {k: v for k, v in given.items() if k in child_spec.input}
    extra = {k: v for k, v in given.items() if k not in child_spec.input}
    root = parent.root_execution_id or parent.id
    params = {
        **extra, "root_execution_id": root, "task_execution_id": memory.id,
        "namespace": parent.workflow_namespace, "index": index,
    }  # fmt: skip
    if "env" in parent.params and "env" not in params:
        params["env"] = parent.params["env"]
    try:
        values = checked_input(child_spec, declared)
    except InvalidInput as exc:
        raise Structural(str(exc.diagnostics[0].message if exc.diagnostics else exc)) from exc
    execution = ExecutionRecord(
        id=new_id, project=parent.project, workflow_id=record.id, workflow_name=record.name,
        workflow_namespace=parent.workflow_namespace, state=states.RUNNING,
        definition=record.definition, input=values, params=params,
        task_execution_id=memory.id, root_execution_id=root, created_at=step.now,
    )  # fmt: skip
    execution = _with_context(execution, child_spec)
    traversal = launch(svc.store, execution, child_spec, step.now)
    svc.take_up_now(traversal.id)
    return new_id


def _with_context(execution: ExecutionRecord, spec: Any) -> ExecutionRecord:
    from dataclasses import replace

    try:
        return replace(execution, context=initial_context(spec, execution))
    except InvalidInput as exc:
        raise Structural(str(exc)) from exc


def _input(
    run: Any, memory: TaskMemory, spec: TaskSpec, variables: dict[str, Any]
) -> dict[str, Any]:
    host = Host(run, memory, with_items_names(run))
    value = evaluated(spec.input, expression_context(run, memory, items=variables), host)
    if not isinstance(value, dict):
        raise Structural(f"Task {spec.name}: input must evaluate to a mapping")
    return value


def child_outcome(
    svc: Services, memory: TaskMemory, cid: str, index: int
) -> tuple[str, str | None] | None:
    """An item's (state, state_info) once its child ended (its output, or
    its error, recorded as the item's), else None."""
    state = svc.store.workflows.execution_state(cid)
    if state is None:
        memory.errors[index] = f"Failed subworkflow [execution_id={cid}]"
        return states.ERROR, memory.errors[index]
    if state[0] not in states.TERMINAL:
        return None
    if state[0] == states.SUCCESS:
        child = svc.store.workflows.get_execution(cid)
        memory.results[index] = child.output if child is not None else None
        return states.SUCCESS, None
    info = state[1] or f"Failed subworkflow [execution_id={cid}]"
    memory.errors[index] = info
    return state[0], info

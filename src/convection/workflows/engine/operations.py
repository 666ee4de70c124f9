"""Executions, tasks and action executions: the operations behind
``convection execution|task|action-execution ...`` and, later, Mistral's
``/v2/executions``, ``/v2/tasks`` and ``/v2/action_executions``.

Each takes a store and a project and returns bodies with Mistral's REST
field names (``mistral/api/controllers/v2/resources.py``), JSON fields as
plain values (a REST layer encodes them as Mistral does). They decide
what is legal (Mistral's state table, ``engine/states.py``) and write the
store; the engine (``WorkflowFrontEnd`` on a kernel) does the work, in
whichever process runs it. An operation that changes a running execution
writes rows and wake timers in one transaction, so it needs no engine to
be running: the next engine to scan sees it, as a hook clear does for
stacks.

Bodies:

* execution: ``id, workflow_id, workflow_name, workflow_namespace,
  description, tags, params, state, state_info, input, output,
  created_at, updated_at, task_execution_id, root_execution_id,
  project_id``;
* task: ``id, name, workflow_name, workflow_namespace, workflow_id,
  workflow_execution_id, state, state_info, result, published,
  runtime_context, processed, type, tags, created_at, updated_at,
  started_at, finished_at, project_id``;
* action execution: ``id, name, workflow_name, workflow_namespace,
  task_name, task_execution_id, state, state_info, tags, accepted,
  input, output, params, description, created_at, updated_at, project_id``.

Times are ``YYYY-MM-DD HH:MM:SS`` as Mistral writes them.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, Final, TypeVar

from convection.common import Conflict, Diagnostic, InvalidInput, NotFound
from convection.store import (
    ActionExecutionRecord,
    AddTimer,
    Change,
    ExecutionRecord,
    NodeRecord,
    Store,
    TaskExecutionRecord,
    TraversalRecord,
    UpdateActionExecution,
    UpdateExecution,
    UpdateNode,
    UpdateTaskExecution,
    UpdateTraversal,
    WorkflowDefinitionRecord,
)
from convection.workflows.definitions import workflow_not_found
from convection.workflows.engine import states
from convection.workflows.engine.data import mistral_time
from convection.workflows.engine.items import action_id, generation
from convection.workflows.engine.launch import (
    WORKFLOW,
    checked_input,
    initial_context,
    launch,
    new_id,
)
from convection.workflows.engine.step import PARKED_PAUSE, WAKE
from convection.workflows.environments import checked_size, resolve_env
from convection.workflows.lang import WorkflowSpec, parse_workflows

Body = dict[str, Any]

#: Workflow executions' states an operation may ask for.
_SETTABLE: Final = (states.PAUSED, states.RUNNING, states.CANCELLED, states.SUCCESS, states.ERROR)


def _now() -> datetime:
    return datetime.now(UTC)


# -- bodies ----------------------------------------------------------------------------
def execution_body(record: ExecutionRecord) -> Body:
    return {
        "id": record.id,
        "workflow_id": record.workflow_id,
        "workflow_name": record.workflow_name,
        "workflow_namespace": record.workflow_namespace,
        "description": record.description,
        "tags": list(record.tags),
        "params": record.params,
        "state": record.state,
        "state_info": record.state_info,
        "input": record.input,
        "output": record.output,
        "created_at": mistral_time(record.created_at),
        "updated_at": mistral_time(record.updated_at),
        "task_execution_id": record.task_execution_id,
        "root_execution_id": record.root_execution_id,
        "project_id": record.project,
    }


def task_body(
    store: Store, record: TaskExecutionRecord, execution: ExecutionRecord | None = None
) -> Body:
    execution = execution or store.workflows.get_execution(record.execution_id)
    return {
        "id": record.id,
        "name": record.name,
        "workflow_name": execution.workflow_name if execution else None,
        "workflow_namespace": execution.workflow_namespace if execution else "",
        "workflow_id": execution.workflow_id if execution else None,
        "workflow_execution_id": record.execution_id,
        "state": record.state,
        "state_info": record.state_info,
        "result": task_result(store, record),
        "published": record.published,
        "runtime_context": _shown_runtime(record.runtime_context),
        "processed": record.processed,
        "type": record.type,
        "tags": [],
        "created_at": mistral_time(record.created_at),
        "updated_at": mistral_time(record.updated_at),
        "started_at": mistral_time(record.started_at),
        "finished_at": mistral_time(record.finished_at),
        "project_id": record.project,
    }


def _shown_runtime(rc: Mapping[str, Any]) -> dict[str, Any]:
    """What Mistral shows of a task's runtime context (retries, with-items)."""
    shown: dict[str, Any] = {}
    if "retry_no" in rc:
        shown["retry_task_policy"] = {"retry_no": rc["retry_no"]}
    if rc.get("with_items"):
        done = rc.get("items_count", 0)
        shown["with_items"] = {"count": done}
    return shown


def task_result(store: Store, record: TaskExecutionRecord) -> Any:
    """The task's result as Mistral shows it: its accepted action results
    (a list by index for with-items), or its sub-workflow's output."""
    rc = record.runtime_context
    children = rc.get("children")
    if children:
        outputs = []
        for index in range(int(rc.get("items_count", 1))):
            found = store.workflows.get_execution(str(children.get(str(index), "")))
            ok = found is not None and found.state == states.SUCCESS
            outputs.append(found.output if ok and found is not None else None)
        return outputs if rc.get("with_items") else (outputs[0] if outputs else None)
    rows = store.workflows.list_action_executions(None, filters={"task_execution_id": record.id})
    by_id = {r.id: r for r in rows if r.accepted}
    results = []
    retry, gen = int(rc.get("retry_no", 0)), generation(rc)
    kept = rc.get("kept", {})
    for index in range(int(rc.get("items_count", 1))):
        if str(index) in kept:
            results.append(kept[str(index)])
            continue
        row = by_id.get(action_id(record.id, retry, index, gen))
        results.append(None if row is None else row.output.get("result"))
    if rc.get("with_items"):
        return results
    return results[0] if results else None


def action_execution_body(store: Store, record: ActionExecutionRecord) -> Body:
    task = store.workflows.get_task(record.task_execution_id) if record.task_execution_id else None
    execution = store.workflows.get_execution(task.execution_id) if task else None
    return {
        "id": record.id,
        "name": record.name,
        "workflow_name": execution.workflow_name if execution else None,
        "workflow_namespace": execution.workflow_namespace if execution else "",
        "task_name": task.name if task else None,
        "task_execution_id": record.task_execution_id,
        "state": record.state,
        "state_info": record.state_info,
        "tags": [],
        "accepted": record.accepted,
        "input": record.input,
        "output": record.output,
        "params": {},
        "description": "",
        "created_at": mistral_time(record.created_at),
        "updated_at": mistral_time(record.updated_at),
        "project_id": record.project,
    }


# -- executions ---------------------------------------------------------------------------
def spec_of(record_name: str, definition: str) -> WorkflowSpec:
    specs, diags = parse_workflows(definition, record_name)
    short = record_name.rsplit(".", 1)[-1]
    for spec in specs:
        if record_name in (spec.qualified_name, spec.name) or spec.name == short:
            return spec
    raise InvalidInput(list(diags.errors) or [Diagnostic(f"cannot read workflow {record_name}")])


def create_execution(
    store: Store,
    project: str,
    workflow: str,
    *,
    input: Mapping[str, Any] | None = None,
    params: Mapping[str, Any] | None = None,
    namespace: str = "",
    description: str = "",
    execution_id: str | None = None,
) -> Body:
    """Start ``workflow`` (a name or an id): Mistral's ``POST /v2/executions``.

    ``execution_id`` is the caller's id for it (Mistral's client-chosen
    ``id``): when that execution exists, it is returned and nothing starts,
    so a caller that crashed after starting it can ask again."""
    if execution_id is not None:
        existing = store.workflows.get_execution(execution_id)
        if existing is not None:
            return execution_body(_owned(existing, project, "workflow execution", execution_id))
    found = store.workflows.get_workflow(project, workflow, namespace)
    if found is None:
        raise workflow_not_found(workflow, namespace)
    now = _now()
    record, spec = new_execution(
        store, project, found, execution_id or new_id(), input=input or {}, params=params or {},
        namespace=namespace, description=description, now=now,
    )  # fmt: skip
    traversal = launch(store, record, spec, now)
    # The body from what was written: a 10 MB input is not read back.
    return execution_body(ExecutionRecord(**{**_fields(record), "traversal_id": traversal.id}))


def new_execution(
    store: Store, project: str, found: WorkflowDefinitionRecord, execution_id: str, *,
    input: Mapping[str, Any], params: Mapping[str, Any], namespace: str, description: str,
    now: datetime,
) -> tuple[ExecutionRecord, WorkflowSpec]:  # fmt: skip
    """The RUNNING execution of ``found`` and its spec, not yet written: what
    every start shares (an API call, a cron trigger's firing). Its input is
    checked against the workflow's, and an ``env`` param that names a stored
    environment is copied in as it is now (Mistral's)."""
    spec = spec_of(found.name, found.definition)
    # Mistral's execution_field_size_limit_kb, checked before anything is written.
    checked_size(dict(input), "input", "WorkflowExecution")
    checked_size(dict(params), "params", "WorkflowExecution")
    given = dict(params)
    if given.get("env") is not None:
        given["env"] = resolve_env(store, project, given["env"])
    record = ExecutionRecord(
        id=execution_id, project=project, workflow_id=found.id, workflow_name=found.name,
        workflow_namespace=namespace, description=description, state=states.RUNNING,
        definition=found.definition, input=checked_input(spec, dict(input)),
        params={**given, "namespace": namespace}, created_at=now,
    )  # fmt: skip
    return ExecutionRecord(**{**_fields(record), "context": initial_context(spec, record)}), spec


def _fields(record: ExecutionRecord) -> dict[str, Any]:
    return {f: getattr(record, f) for f in record.__dataclass_fields__}


R = TypeVar("R", ExecutionRecord, TaskExecutionRecord, ActionExecutionRecord)


def _owned(found: R | None, project: str, what: str, row_id: str) -> R:
    """A row of ``project``; another project's is not found, as Mistral's."""
    if found is None or found.project != project:
        raise NotFound(what, row_id)
    return found


def _listed(
    lister: Any, project: str, filters: Mapping[str, Any] | None, parent: Mapping[str, str],
    sort_keys: Sequence[str], sort_dir: str, limit: int | None, marker: str | None,
    sort_dirs: Sequence[str] | None = None,
) -> list[Any]:  # fmt: skip
    """One page of a listing, under its parent (an execution, a task) if
    given; ``filters`` values may carry Mistral's operators (``store.Where``)."""
    return list(
        lister(
            project, filters={**(filters or {}), **parent}, sort_keys=sort_keys,
            sort_dir=sort_dir, limit=limit, marker=marker, sort_dirs=sort_dirs,
        )
    )  # fmt: skip


def _execution(store: Store, project: str, execution_id: str) -> ExecutionRecord:
    found = store.workflows.get_execution(execution_id)
    return _owned(found, project, "workflow execution", execution_id)


def get_execution(store: Store, project: str, execution_id: str) -> Body:
    return execution_body(_execution(store, project, execution_id))


def list_executions(
    store: Store, project: str, *, filters: Mapping[str, Any] | None = None,
    sort_keys: Sequence[str] = ("created_at",), sort_dir: str = "asc",
    limit: int | None = None, marker: str | None = None, sort_dirs: Sequence[str] | None = None,
) -> list[Body]:  # fmt: skip
    lister = store.workflows.list_executions
    rows = _listed(lister, project, filters, {}, sort_keys, sort_dir, limit, marker, sort_dirs)
    return [execution_body(r) for r in rows]


def update_execution(
    store: Store, project: str, execution_id: str, *, state: str | None = None,
    state_info: str | None = None, description: str | None = None,
    env: Mapping[str, Any] | None = None,
) -> Body:  # fmt: skip
    """Mistral's ``PUT /v2/executions/<id>``: a description, a new ``env``
    (merged), or a state: PAUSED (pause), RUNNING (resume), CANCELLED,
    SUCCESS or ERROR (a forced end). Children follow a pause, resume and
    cancel."""
    record = _execution(store, project, execution_id)
    if description is not None:
        store.workflows.update_execution(record.id, {"description": description})
    if env is not None:
        if record.state not in (states.IDLE, states.PAUSED, states.ERROR):
            raise Conflict(
                "The environment of a workflow execution can be updated only while it is "
                f"IDLE, PAUSED or ERROR [execution_id={record.id}, state={record.state}]"
            )
        params = copy.deepcopy(record.params)
        params["env"] = _merged(params.get("env") or {}, env)
        store.workflows.update_execution(record.id, {"params": params})
    if state is not None:
        if state not in _SETTABLE:
            raise InvalidInput(
                [Diagnostic(f"state must be one of {list(_SETTABLE)}, not {state!r}", ("state",))]
            )
        _change_state(store, record, state, state_info)
    return get_execution(store, project, execution_id)


def _merged(base: Mapping[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in extra.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = _merged(out[key], value)
        else:
            out[key] = value
    return out


def _change_state(store: Store, record: ExecutionRecord, state: str, info: str | None) -> None:
    current = record.state
    if state == current:
        return
    states.check_workflow_transition(current, state, record.workflow_name, record.id)
    now = _now()
    changes: list[Change] = []
    for execution in [record, *_descendants(store, record)]:
        if execution.state in states.TERMINAL:
            continue
        changes.extend(_state_changes(store, execution, state, info, now))
    store.apply(changes)


def _descendants(store: Store, record: ExecutionRecord) -> list[ExecutionRecord]:
    out: list[ExecutionRecord] = []
    frontier = [record.id]
    while frontier:
        children = (
            store.workflows.list_executions(
                None, filters={"task_execution_id": _task_ids(store, frontier)}
            )
            if frontier
            else []
        )
        out.extend(children)
        frontier = [c.id for c in children]
    return out


def _task_ids(store: Store, execution_ids: list[str]) -> list[str]:
    tasks = store.workflows.list_tasks(None, filters={"execution_id": execution_ids})
    return [t.id for t in tasks] or ["-"]


def _state_changes(
    store: Store, execution: ExecutionRecord, state: str, info: str | None, now: datetime
) -> list[Change]:
    if state == states.PAUSED:
        if execution.state != states.RUNNING:
            return []
        return [UpdateExecution(execution.id, {"state": states.PAUSED})]
    if state == states.RUNNING:
        if execution.state not in (states.PAUSED, states.IDLE):
            return []
        changes: list[Change] = [
            UpdateExecution(execution.id, {"state": states.RUNNING, "state_info": None})
        ]
        return changes + _wakes(store, execution, now)
    # CANCELLED, or a forced SUCCESS / ERROR: the run ends now, a forced
    # end with the output of the context reached so far (Mistral's "force
    # stop ... with the final context").
    if state == states.CANCELLED:
        output: dict[str, Any] = {"result": info}
    else:
        output = _output_so_far(store, execution, state, info)
    changes = [
        UpdateExecution(execution.id, {"state": state, "state_info": info, "output": output})
    ]
    if execution.traversal_id is None:
        return changes
    status = "CANCELLED"
    changes.append(UpdateTraversal(execution.traversal_id, {"status": status}))
    for node in store.list_nodes(execution.traversal_id):
        if node.state in ("waiting", "ready", "sleeping"):
            changes.append(UpdateNode(node.traversal_id, node.key, {"state": "skipped"}))
    for task in store.workflows.list_tasks(None, filters={"execution_id": execution.id}):
        if task.state in (states.IDLE, states.WAITING, states.DELAYED):
            changes.append(
                UpdateTaskExecution(task.id, {"state": states.CANCELLED, "finished_at": now})
            )
    return changes


def _output_so_far(
    store: Store, execution: ExecutionRecord, state: str, info: str | None
) -> dict[str, Any]:
    """The output the workflow's ``output`` (or ``output-on-error``) gives
    over what its tasks published so far."""
    from convection.kernel import Journal
    from convection.workflows.actions import ActionRegistry
    from convection.workflows.engine.finish import output
    from convection.workflows.engine.frontend import WorkflowFrontEnd
    from convection.workflows.engine.services import Services

    traversal = store.get_traversal(execution.traversal_id or "")
    if traversal is None:
        return {"result": info} if state == states.ERROR else {}
    reader = WorkflowFrontEnd(Services(store, Journal(store), ActionRegistry()))
    run = reader.take_up(traversal)
    if run is None:
        return {"result": info} if state == states.ERROR else {}
    return output(run, state, info)[2]


def _wakes(store: Store, execution: ExecutionRecord, now: datetime) -> list[Change]:
    """A timer for every node parked by the pause (the backlog included)."""
    if execution.traversal_id is None:
        return []
    return [
        AddTimer(node.traversal_id, node.key, now, WAKE)
        for node in store.list_nodes(execution.traversal_id)
        if node.state == "sleeping" and node.payload.get("parked") == PARKED_PAUSE
    ]


def delete_execution(store: Store, project: str, execution_id: str, *, force: bool = False) -> None:
    record = _execution(store, project, execution_id)
    if record.state not in states.TERMINAL and not force:
        raise Conflict(
            f"Only completed executions can be deleted; this one is {record.state}. "
            f"Use force to delete it anyway [execution_id={record.id}]"
        )
    store.workflows.delete_execution(record.id)


# -- tasks ----------------------------------------------------------------------------------
def _task(store: Store, project: str, task_id: str) -> TaskExecutionRecord:
    return _owned(store.workflows.get_task(task_id), project, "task execution", task_id)


def get_task(store: Store, project: str, task_id: str) -> Body:
    return task_body(store, _task(store, project, task_id))


def list_tasks(
    store: Store, project: str, *, execution_id: str | None = None,
    filters: Mapping[str, Any] | None = None, sort_keys: Sequence[str] = ("created_at",),
    sort_dir: str = "asc", limit: int | None = None, marker: str | None = None,
    sort_dirs: Sequence[str] | None = None,
) -> list[Body]:  # fmt: skip
    parent = {}
    if execution_id is not None:
        parent["execution_id"] = _execution(store, project, execution_id).id
    lister = store.workflows.list_tasks
    rows = _listed(lister, project, filters, parent, sort_keys, sort_dir, limit, marker, sort_dirs)
    executions: dict[str, ExecutionRecord | None] = {}
    out = []
    for row in rows:
        if row.execution_id not in executions:
            executions[row.execution_id] = store.workflows.get_execution(row.execution_id)
        out.append(task_body(store, row, executions[row.execution_id]))
    return out


RERUN_NOT_ERROR = (
    "The current task execution must be in ERROR for rerun. "
    "Only updating task to rerun is supported."
)


def rerun_task(
    store: Store, project: str, task_id: str, *, reset: bool = True,
    env: Mapping[str, Any] | None = None,
) -> Body:  # fmt: skip
    """Mistral's task rerun: an ERROR task runs again in a new traversal of
    its execution, which is RUNNING again. ``reset`` False (with-items
    only) keeps the items that succeeded."""
    task = _task(store, project, task_id)
    if task.state != states.ERROR:  # Mistral's API refuses it so, for every state
        raise Conflict(RERUN_NOT_ERROR)
    execution = _execution(store, project, task.execution_id)
    if execution.task_execution_id is not None:
        raise Conflict(
            "Rerunning a task of a sub-workflow execution is not supported yet; "
            "rerun its parent's task"
        )
    rc = task.runtime_context
    if not reset and not rc.get("with_items"):
        raise Conflict(f"Only with-items tasks can be rerun with reset false [task_id={task.id}]")
    kept = {} if reset else _succeeded_items(store, task)
    fresh = {"generation": generation(rc) + 1, "kept": kept}
    fields = {
        "state": states.RUNNING, "state_info": None, "processed": False, "error_handled": False,
        "runtime_context": fresh, "published": {}, "finished_at": None,
    }  # fmt: skip
    _restart(store, execution, task, fields, env)
    return get_task(store, project, task_id)


def _succeeded_items(store: Store, task: TaskExecutionRecord) -> dict[str, Any]:
    """The results of a with-items task's items that succeeded, by index."""
    rc = task.runtime_context
    kept: dict[str, Any] = dict(rc.get("kept", {}))
    rows = store.workflows.list_action_executions(None, filters={"task_execution_id": task.id})
    ok = {r.id: r for r in rows if r.accepted and r.state == states.SUCCESS}
    retry, gen = int(rc.get("retry_no", 0)), generation(rc)
    for index in range(int(rc.get("items_count", 0))):
        row = ok.get(action_id(task.id, retry, index, gen))
        if row is not None:
            kept[str(index)] = row.output.get("result")
    return kept


def skip_task(store: Store, project: str, task_id: str) -> Body:
    """Mistral's task skip: an ERROR task becomes SKIPPED, publishes
    ``publish-on-skip`` and the workflow goes on by ``on-skip`` (or
    ``on-success``)."""
    task = _task(store, project, task_id)
    if task.state != states.ERROR:
        raise Conflict(f"Only failed tasks can be skipped [task_id={task.id}, state={task.state}]")
    execution = _execution(store, project, task.execution_id)
    rc = {k: v for k, v in task.runtime_context.items() if k not in ("published", "next_tasks")}
    fields = {
        "state": states.SKIPPED, "state_info": "Task was skipped.", "processed": False,
        "published": {}, "runtime_context": rc,
    }  # fmt: skip
    _restart(store, execution, task, fields, None)
    return get_task(store, project, task_id)


def _restart(
    store: Store, execution: ExecutionRecord, task: TaskExecutionRecord,
    fields: dict[str, Any], env: Mapping[str, Any] | None,
) -> None:  # fmt: skip
    if execution.state not in (states.ERROR, states.CANCELLED, states.SUCCESS, states.PAUSED):
        raise Conflict(
            f"The execution is {execution.state}: a task can be rerun or skipped once it "
            f"has ended [execution_id={execution.id}]"
        )
    traversal = TraversalRecord(
        id=new_id(), action="RUN", kind=WORKFLOW, execution_id=execution.id, started_at=_now()
    )
    node = NodeRecord(
        traversal_id=traversal.id, key=task.id, kind="task", resource_name=task.name,
        state="ready", payload={"task": task.id},
    )  # fmt: skip
    owner: dict[str, Any] = {"state": states.RUNNING, "state_info": None, "output": {}}
    if env is not None:
        params = copy.deepcopy(execution.params)
        params["env"] = _merged(params.get("env") or {}, env)
        owner["params"] = params
    store.apply([UpdateTaskExecution(task.id, fields)])
    store.start_traversal(traversal, [node], owner)


# -- action executions --------------------------------------------------------------------------
def _action(store: Store, project: str, action_execution_id: str) -> ActionExecutionRecord:
    found = store.workflows.get_action_execution(action_execution_id)
    return _owned(found, project, "action execution", action_execution_id)


def get_action_execution(store: Store, project: str, action_execution_id: str) -> Body:
    return action_execution_body(store, _action(store, project, action_execution_id))


def list_action_executions(
    store: Store, project: str, *, task_execution_id: str | None = None,
    filters: Mapping[str, Any] | None = None, sort_keys: Sequence[str] = ("created_at",),
    sort_dir: str = "asc", limit: int | None = None, marker: str | None = None,
    sort_dirs: Sequence[str] | None = None,
) -> list[Body]:  # fmt: skip
    parent = {}
    if task_execution_id is not None:
        parent["task_execution_id"] = _task(store, project, task_execution_id).id
    lister = store.workflows.list_action_executions
    rows = _listed(lister, project, filters, parent, sort_keys, sort_dir, limit, marker, sort_dirs)
    return [action_execution_body(store, r) for r in rows]


def complete_action_execution(
    store: Store, project: str, action_execution_id: str, *, state: str, output: Any = None,
) -> Body:  # fmt: skip
    """Finish an asynchronous action (``PUT /v2/action_executions/<id>``):
    its result and the wake of its task, in one transaction."""
    record = _action(store, project, action_execution_id)
    if state not in (states.SUCCESS, states.ERROR, states.CANCELLED):
        raise InvalidInput(
            [Diagnostic(f"state must be SUCCESS, ERROR or CANCELLED, not {state!r}", ("state",))]
        )
    if record.state != states.RUNNING:
        raise Conflict(f"Action execution {record.id} is {record.state}, not RUNNING")
    result = (
        output.get("result", output)
        if isinstance(output, Mapping) and set(output) == {"result"}
        else output
    )
    changes: list[Change] = [
        UpdateActionExecution(
            record.id, {"state": state, "accepted": True, "output": {"result": result}}
        )
    ]
    task = store.workflows.get_task(record.task_execution_id) if record.task_execution_id else None
    if task is not None and task.node_key is not None:
        execution = store.workflows.get_execution(task.execution_id)
        if execution is not None and execution.traversal_id is not None:
            changes.append(AddTimer(execution.traversal_id, task.node_key, _now(), WAKE))
    store.apply(changes)
    return get_action_execution(store, project, action_execution_id)

"""``/v2/executions``: start, show, list, pause/resume/stop and delete
workflow executions; an execution's tasks."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from convection.api.routers.v2._common import (
    PREFIX,
    Body,
    JsonBody,
    MistralError,
    MistralRoute,
    Reader,
    StoreDep,
    Writer,
    bad_request,
    bool_param,
    encoded,
    json_dict,
    listing,
    page_of,
    with_fields,
)
from convection.api.routers.v2.tasks import TASK_FILTERS, shown_task
from convection.common import Conflict
from convection.workflows import (
    create_execution,
    delete_execution,
    get_execution,
    list_executions,
    list_tasks,
    update_execution,
)

router = APIRouter(
    prefix=PREFIX + "/executions", tags=["mistral: executions"], route_class=MistralRoute
)

JSON_FIELDS = ("input", "output", "params", "published_global")
FILTERS = {
    "id": "id",
    "workflow_id": "workflow_id",
    "workflow_name": "workflow_name",
    "workflow_namespace": "workflow_namespace",
    "state": "state",
    "state_info": "state_info",
    "description": "description",
    "task_execution_id": "task_execution_id",
    "root_execution_id": "root_execution_id",
    "created_at": "created_at",
    "updated_at": "updated_at",
}
_ALLOWED = ("RUNNING", "PAUSED", "SUCCESS", "ERROR", "CANCELLED")


def shown(body: Body, *, output: bool = True) -> Body:
    out = dict(body)
    out.setdefault("source_execution_id", None)
    out.setdefault("published_global", {})
    if not output:
        out.pop("output", None)
    return encoded(out, JSON_FIELDS)


#: Mistral's column is a String(36): a uuid.
MAX_CLIENT_ID = 36


@router.get("", summary="List executions")
def list_(request: Request, principal: Reader, store: StoreDep) -> Body:
    page = page_of(request, filters=FILTERS, operators=True)
    include_output = bool_param(request.query_params.get("include_output"), "include_output")
    items = list_executions(
        store, principal.project, filters=page.filters or None, sort_keys=page.sort_keys,
        sort_dir=page.sort_dir, limit=page.limit, marker=page.marker, sort_dirs=page.sort_dirs,
    )  # fmt: skip
    return listing(request, "executions", [shown(i, output=include_output) for i in items], page)


@router.post("", status_code=201, summary="Start an execution")
def create(principal: Writer, store: StoreDep, body: JsonBody) -> Body:
    project = principal.project
    client_id = str(body["id"]) if body.get("id") else None
    if client_id is not None and len(client_id) > MAX_CLIENT_ID:
        raise bad_request(f"id must be at most {MAX_CLIENT_ID} characters")
    params = json_dict(body.get("params"), "params")
    workflow_input = json_dict(body.get("input"), "input")
    description = str(body.get("description") or "")
    workflow = body.get("workflow_id") or body.get("workflow_name")
    source_id = body.get("source_execution_id")
    if source_id:
        source = get_execution(store, project, str(source_id))
        workflow = workflow or source["workflow_id"]
        workflow_input = workflow_input or dict(source["input"] or {})
        kept = {k: v for k, v in (source["params"] or {}).items() if k != "namespace"}
        params = {**kept, **params}
        description = f"{description} Based on the execution '{source_id}'".strip()
    if not workflow:
        raise bad_request(
            "Workflow ID or workflow name must be provided. Workflow ID is recommended."
        )
    namespace = str(body.get("workflow_namespace") or params.pop("namespace", "") or "")
    made = create_execution(
        store, project, str(workflow), input=workflow_input, params=params,
        namespace=namespace, description=description, execution_id=client_id,
    )  # fmt: skip
    return shown(made)


@router.get("/{execution_id}", summary="Show an execution")
def show(principal: Reader, store: StoreDep, execution_id: str, fields: str = "") -> Body:
    return with_fields(shown(get_execution(store, principal.project, execution_id)), fields)


@router.put("/{execution_id}", summary="Pause, resume or stop an execution; its description or env")
def update(principal: Writer, store: StoreDep, execution_id: str, body: JsonBody) -> Body:
    state = body.get("state") or None
    description = body.get("description")
    params = json_dict(body.get("params"), "params")
    env = params.get("env")
    if env is not None and not isinstance(env, dict):
        raise bad_request("params.env must be a mapping (stored environments are not supported)")
    if not (state or description or env):
        raise bad_request("The property state, description, or env is not provided for update.")
    if description and state:
        raise bad_request("The property description must be updated separately from state.")
    if env and state and state != "RUNNING":
        raise bad_request(
            "The property env can only be updated when workflow execution is not running "
            "or on resume from pause."
        )
    if state and state not in _ALLOWED:
        raise bad_request(
            f"Cannot change state to {state}. Allowed states are: '{', '.join(_ALLOWED)}"
        )
    state_info = body.get("state_info")
    try:
        done = update_execution(
            store, principal.project, execution_id, state=state,
            state_info=None if state_info is None else str(state_info),
            description=None if description is None else str(description), env=env,
        )  # fmt: skip
    except Conflict as exc:  # Mistral's WorkflowException / InvalidStateTransition
        raise MistralError(400, str(exc)) from None
    return shown(done)


@router.delete("/{execution_id}", status_code=204, summary="Delete an execution")
def delete(principal: Writer, store: StoreDep, execution_id: str, force: str = "") -> Response:
    try:
        delete_execution(store, principal.project, execution_id, force=bool_param(force, "force"))
    except Conflict as exc:  # Mistral's NotAllowedException
        raise MistralError(403, str(exc)) from None
    return Response(status_code=204)


@router.get("/{execution_id}/tasks", summary="List an execution's tasks")
def tasks(request: Request, principal: Reader, store: StoreDep, execution_id: str) -> Body:
    page = page_of(request, filters=TASK_FILTERS, booleans=("processed",), operators=True)
    items = list_tasks(
        store, principal.project, execution_id=execution_id, filters=page.filters or None,
        sort_keys=page.sort_keys, sort_dir=page.sort_dir, limit=page.limit, marker=page.marker,
        sort_dirs=page.sort_dirs,
    )  # fmt: skip
    return listing(request, "tasks", [shown_task(i) for i in items], page)

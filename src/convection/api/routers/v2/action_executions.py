"""``/v2/action_executions``: the runs of actions, a task's or ad-hoc;
``POST`` runs an action outside any workflow (``run_sync``,
``save_result``, ``timeout``), ``PUT`` completes an asynchronous one
(Mistral's callback for ``std.mistral_http`` and the like), ``DELETE``
removes an ended ad-hoc one where the server allows it."""

from __future__ import annotations

import json
from typing import Any

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
from convection.common import Conflict
from convection.service import Stacks
from convection.workflows import (
    ServicePorts,
    checked_timeout,
    complete_action_execution,
    default_registry,
    delete_action_execution,
    get_action_execution,
    list_action_executions,
    start_action_execution,
)

router = APIRouter(tags=["mistral: action executions"], route_class=MistralRoute)

JSON_FIELDS = ("input", "output", "params")
FILTERS = {
    "id": "id",
    "name": "name",
    "state": "state",
    "state_info": "state_info",
    "accepted": "accepted",
    "task_execution_id": "task_execution_id",
    "created_at": "created_at",
    "updated_at": "updated_at",
}
_STATES = ["SUCCESS", "ERROR", "CANCELLED", "PAUSED", "RUNNING"]
#: Mistral's columns: ``name`` and ``workflow_namespace`` are String(255).
MAX_NAME = 255


def shown(body: Body, *, output: bool = True) -> Body:
    out = dict(body)
    if not output:
        out.pop("output", None)
    return encoded(out, JSON_FIELDS)


def _listed(request: Request, principal: Reader, store: StoreDep, task_id: str | None) -> Body:
    page = page_of(request, filters=FILTERS, booleans=("accepted",), operators=True)
    include_output = bool_param(request.query_params.get("include_output"), "include_output")
    items = list_action_executions(
        store, principal.project, task_execution_id=task_id, filters=page.filters or None,
        sort_keys=page.sort_keys, sort_dir=page.sort_dir, limit=page.limit, marker=page.marker,
        sort_dirs=page.sort_dirs,
    )  # fmt: skip
    return listing(
        request, "action_executions", [shown(i, output=include_output) for i in items], page
    )


@router.get(PREFIX + "/action_executions", summary="List action executions")
def list_(request: Request, principal: Reader, store: StoreDep) -> Body:
    return _listed(request, principal, store, None)


@router.get(PREFIX + "/tasks/{task_id}/action_executions", summary="A task's action executions")
def of_task(request: Request, principal: Reader, store: StoreDep, task_id: str) -> Body:
    return _listed(request, principal, store, task_id)


@router.get(PREFIX + "/action_executions/{action_execution_id}", summary="Show an action execution")
def show(principal: Reader, store: StoreDep, action_execution_id: str, fields: str = "") -> Body:
    return with_fields(
        shown(get_action_execution(store, principal.project, action_execution_id)), fields
    )


def _output(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


@router.put(
    PREFIX + "/action_executions/{action_execution_id}",
    summary="Complete an asynchronous action execution (state and output)",
)
def update(principal: Writer, store: StoreDep, action_execution_id: str, body: JsonBody) -> Body:
    state = body.get("state")
    if state not in _STATES:
        raise bad_request(f"Error. Expected one of {_STATES}, actual: {state}")
    if state in ("PAUSED", "RUNNING"):
        raise bad_request(f"Setting an action execution to {state} is not supported yet.")
    output = _output(body.get("output"))
    if state == "ERROR" and output in (None, ""):
        output = "Unknown error"
    try:
        done = complete_action_execution(
            store, principal.project, action_execution_id, state=state, output=output
        )
    except Conflict as exc:
        raise MistralError(400, str(exc)) from None
    return shown(done)


def _flag(params: Body, name: str) -> bool:
    value = params.get(name)
    if value is None or isinstance(value, bool):
        return bool(value)
    return bool_param(str(value), f"params.{name}")


@router.post(
    PREFIX + "/action_executions", status_code=201, summary="Run an action outside a workflow"
)
async def create(request: Request, principal: Writer, store: StoreDep, body: JsonBody) -> Body:
    name = body.get("name")
    if not name:
        raise bad_request("Please provide at least action name to run action.")
    namespace = body.get("workflow_namespace") or ""
    if not isinstance(name, str) or not isinstance(namespace, str):
        raise bad_request("name and workflow_namespace must be text")
    if len(name) > MAX_NAME or len(namespace) > MAX_NAME:
        raise bad_request(f"name and workflow_namespace are at most {MAX_NAME} characters")
    params = json_dict(body.get("params"), "params")
    stacks: Stacks = request.app.state.stacks
    done = await start_action_execution(
        store, default_registry(), principal.project, name,
        input=json_dict(body.get("input"), "input"), namespace=namespace,
        run_sync=_flag(params, "run_sync"), save_result=_flag(params, "save_result"),
        timeout=checked_timeout(params.get("timeout")), ports=ServicePorts(stacks),
        limits=stacks.config.limits,
    )  # fmt: skip
    return shown(done)


@router.delete(
    PREFIX + "/action_executions/{action_execution_id}",
    status_code=204,
    summary="Delete an ended ad-hoc action execution (when the server allows it)",
)
def delete(
    request: Request, principal: Writer, store: StoreDep, action_execution_id: str
) -> Response:
    allowed = bool(request.app.state.api_settings.allow_action_execution_deletion)
    delete_action_execution(store, principal.project, action_execution_id, allowed=allowed)
    return Response(status_code=204)

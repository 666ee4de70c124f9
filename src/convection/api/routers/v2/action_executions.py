"""``/v2/action_executions``: the runs of tasks' actions; ``PUT`` completes
an asynchronous one (Mistral's callback for ``std.mistral_http`` and the
like)."""

from __future__ import annotations

import json
from typing import Any

from fastapi import APIRouter, Request

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
    listing,
    page_of,
    select_one,
)
from convection.common import Conflict
from convection.workflows import (
    complete_action_execution,
    get_action_execution,
    list_action_executions,
)

router = APIRouter(tags=["mistral: action executions"], route_class=MistralRoute)

JSON_FIELDS = ("input", "output", "params")
FILTERS = {
    "id": "id",
    "name": "name",
    "state": "state",
    "accepted": "accepted",
    "task_execution_id": "task_execution_id",
}
_STATES = ["SUCCESS", "ERROR", "CANCELLED", "PAUSED", "RUNNING"]


def shown(body: Body, *, output: bool = True) -> Body:
    out = dict(body)
    if not output:
        out.pop("output", None)
    return encoded(out, JSON_FIELDS)


def _listed(request: Request, principal: Reader, store: StoreDep, task_id: str | None) -> Body:
    page = page_of(request, filters=FILTERS, booleans=("accepted",))
    include_output = bool_param(request.query_params.get("include_output"), "include_output")
    items = list_action_executions(
        store, principal.project, task_execution_id=task_id, filters=page.filters or None,
        sort_keys=page.sort_keys, sort_dir=page.sort_dir, limit=page.limit, marker=page.marker,
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
    body = shown(get_action_execution(store, principal.project, action_execution_id))
    wanted = [f for f in fields.split(",") if f]
    return select_one(body, wanted) if wanted else body


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

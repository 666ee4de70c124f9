"""``/v2/tasks``: task executions; rerun (``state: RUNNING`` with
``reset``) and skip (``state: SKIPPED``) through ``PUT``."""

from __future__ import annotations

import json

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
    encoded,
    json_dict,
    listing,
    page_of,
    with_fields,
)
from convection.common import Conflict
from convection.workflows import get_task, list_tasks, rerun_task, skip_task

router = APIRouter(prefix=PREFIX + "/tasks", tags=["mistral: tasks"], route_class=MistralRoute)

JSON_FIELDS = ("published", "runtime_context", "env", "published_global")
TASK_FILTERS = {
    "id": "id",
    "name": "name",
    "state": "state",
    "type": "type",
    "processed": "processed",
    "state_info": "state_info",
    "workflow_execution_id": "execution_id",
    "created_at": "created_at",
    "updated_at": "updated_at",
    "started_at": "started_at",
    "finished_at": "finished_at",
}


def shown_task(body: Body) -> Body:
    out = dict(body)
    out.setdefault("reset", False)
    out.setdefault("env", {})
    out.setdefault("published_global", {})
    # Mistral's ``result`` is text holding the result's JSON.
    out["result"] = json.dumps(out.get("result"))
    return encoded(out, JSON_FIELDS)


@router.get("", summary="List tasks")
def list_(request: Request, principal: Reader, store: StoreDep) -> Body:
    page = page_of(request, filters=TASK_FILTERS, booleans=("processed",), operators=True)
    items = list_tasks(
        store, principal.project, filters=page.filters or None, sort_keys=page.sort_keys,
        sort_dir=page.sort_dir, limit=page.limit, marker=page.marker, sort_dirs=page.sort_dirs,
    )  # fmt: skip
    return listing(request, "tasks", [shown_task(i) for i in items], page)


@router.get("/{task_id}", summary="Show a task")
def show(principal: Reader, store: StoreDep, task_id: str, fields: str = "") -> Body:
    return with_fields(shown_task(get_task(store, principal.project, task_id)), fields)


@router.put("/{task_id}", summary="Rerun (state RUNNING) or skip (state SKIPPED) a task")
def update(principal: Writer, store: StoreDep, task_id: str, body: JsonBody) -> Body:
    state = body.get("state")
    if state not in ("RUNNING", "SKIPPED"):
        raise bad_request(
            "Invalid task state. Only updating task to RUNNING or SKIPPED is supported."
        )
    current = get_task(store, principal.project, task_id)
    if body.get("name") and body["name"] != current["name"]:
        raise bad_request("Task name does not match.")
    if body.get("workflow_name") and body["workflow_name"] != current["workflow_name"]:
        raise bad_request("Workflow name does not match.")
    try:
        if state == "SKIPPED":
            done = skip_task(store, principal.project, task_id)
        else:
            if body.get("reset") is None:
                raise bad_request("Reset field is mandatory to rerun task.")
            env = json_dict(body.get("env"), "env") or None
            done = rerun_task(store, principal.project, task_id, reset=bool(body["reset"]), env=env)
    except Conflict as exc:  # Mistral's WorkflowException
        raise MistralError(400, str(exc)) from None
    return shown_task(done)

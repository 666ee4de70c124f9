"""``/v2/cron_triggers``: Mistral's ``CronTriggersController``: list, show
(by name or id), create and delete; no update. ``workflow_input`` and
``workflow_params`` travel as JSON strings (python-mistralclient sends
and reads them so); either a string or an object is taken in."""

from __future__ import annotations

from typing import Any, Final

from fastapi import APIRouter, Request, Response

from convection.api.routers.v2._common import (
    PREFIX,
    Body,
    JsonBody,
    MistralRoute,
    Reader,
    StoreDep,
    Writer,
    bad_request,
    encoded,
    json_dict,
    listing,
    page_of,
    scope_param,
    with_fields,
)
from convection.workflows import (
    create_cron_trigger,
    delete_cron_trigger,
    get_cron_trigger,
    list_cron_triggers,
)

router = APIRouter(
    prefix=PREFIX + "/cron_triggers", tags=["mistral: cron triggers"], route_class=MistralRoute
)

JSON_FIELDS: Final = ("workflow_input", "workflow_params")
FILTERS: Final = {
    "id": "id",
    "name": "name",
    "workflow_name": "workflow_name",
    "workflow_id": "workflow_id",
    "pattern": "pattern",
    "remaining_executions": "remaining_executions",
}
#: The attributes of Mistral's ``CronTrigger`` resource.
_KNOWN: Final = frozenset(
    {"id", "name", "workflow_name", "workflow_id", "workflow_input", "workflow_params",
     "scope", "pattern", "remaining_executions", "first_execution_time",
     "next_execution_time", "project_id", "created_at", "updated_at"}
)  # fmt: skip


def shown(body: Body) -> Body:
    return encoded(body, JSON_FIELDS)


def _filters(given: dict[str, Any], scope: str | None) -> dict[str, Any]:
    out = dict(given)
    if "remaining_executions" in out:
        value = out["remaining_executions"]
        values = value if isinstance(value, list) else [value]
        try:
            ints = [int(v) for v in values]
        except ValueError:
            raise bad_request(f"Invalid remaining_executions filter: {value!r}") from None
        out["remaining_executions"] = ints if isinstance(value, list) else ints[0]
    if scope:
        out["scope"] = scope_param(scope)
    return out


@router.get("", summary="List cron triggers")
def list_(request: Request, principal: Reader, store: StoreDep, scope: str | None = None) -> Body:
    page = page_of(request, filters=FILTERS)
    filters = _filters(page.filters, scope)
    items = list_cron_triggers(
        store, principal.project, filters=filters or None, sort_keys=page.sort_keys,
        sort_dir=page.sort_dir, limit=page.limit, marker=page.marker,
    )  # fmt: skip
    return listing(request, "cron_triggers", [shown(i) for i in items], page)


@router.get("/{identifier}", summary="Show a cron trigger (by name or id)")
def show(principal: Reader, store: StoreDep, identifier: str, fields: str = "") -> Body:
    return with_fields(shown(get_cron_trigger(store, principal.project, identifier)), fields)


@router.post("", status_code=201, summary="Create a cron trigger")
def create(principal: Writer, store: StoreDep, body: JsonBody) -> Body:
    unknown = sorted(set(body) - _KNOWN)
    if unknown:
        raise bad_request(f"Unknown attribute for argument cron_trigger: {', '.join(unknown)}")
    made = create_cron_trigger(
        store, principal.project, body.get("name"),  # type: ignore[arg-type]
        workflow_name=body.get("workflow_name"), workflow_id=body.get("workflow_id"),
        workflow_input=json_dict(body.get("workflow_input"), "workflow_input"),
        workflow_params=json_dict(body.get("workflow_params"), "workflow_params"),
        pattern=body.get("pattern"), first_time=body.get("first_execution_time"),
        count=body.get("remaining_executions"),
    )  # fmt: skip
    return shown(made)


@router.delete("/{identifier}", status_code=204, summary="Delete a cron trigger")
def delete(principal: Writer, store: StoreDep, identifier: str) -> Response:
    delete_cron_trigger(store, principal.project, identifier)
    return Response(status_code=204)

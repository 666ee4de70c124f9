"""Heat's events: per stack (with ``nested_depth``), per resource, and one
event.

Heat lists events by its summary keys (``id``, ``links``, ``event_time``,
``resource_name``, ``logical_resource_id``, ``resource_status``,
``resource_status_reason``, ``physical_resource_id``); only an event's show
adds ``resource_type`` and ``resource_properties``. A nested stack's event
links to its own stack, and, listed with ``nested_depth``, to the root
(``root_stack``), which is how heatclient names the stack of each line.
"""

from __future__ import annotations

from typing import Any, Literal, cast

from fastapi import APIRouter, Request

from convection.api import openapi
from convection.api.auth import Principal, Reader
from convection.api.errors import ApiError
from convection.api.links import stack_url, with_event_links
from convection.api.routers._common import (
    PREFIX,
    STACK,
    Filters,
    Service,
    identified,
    int_param,
    view_matches,
)
from convection.service import Stacks

router = APIRouter(prefix=PREFIX + STACK, tags=["events"], responses=openapi.heat_errors(400, 404))

#: Heat's event filters -> (field of the event view, part of its status).
FILTERS: Filters = {
    "resource_action": ("resource_status", 0),
    "resource_status": ("resource_status", 1),
    "resource_name": ("resource_name", None),
    "resource_type": ("resource_type", None),
}
#: What an event list shows of each event (Heat's ``summary_keys``).
SUMMARY_KEYS = (
    "id",
    "links",
    "event_time",
    "resource_name",
    "logical_resource_id",
    "resource_status",
    "resource_status_reason",
    "physical_resource_id",
)


@router.get(
    "/events",
    summary="List a stack's events",
    openapi_extra=openapi.query(
        limit=openapi.INTEGER,
        marker=openapi.STRING,
        sort_dir=openapi.SORT_DIR,
        sort_keys=openapi.STRING,
        nested_depth=openapi.INTEGER,
        resource_action=openapi.STRING,
        resource_status=openapi.STRING,
    ),
)
def stack_events(
    request: Request, principal: Reader, stacks: Service, stack_name: str, stack_id: str
) -> dict[str, Any]:
    return {"events": _events(request, principal, stacks, stack_name, stack_id, None)}


@router.get("/resources/{resource_name}/events", summary="List a resource's events")
def resource_events(
    request: Request,
    principal: Reader,
    stacks: Service,
    stack_name: str,
    stack_id: str,
    resource_name: str,
) -> dict[str, Any]:
    found = _events(request, principal, stacks, stack_name, stack_id, resource_name)
    if not found:
        raise ApiError(404, f"No events found for resource {resource_name}", "HTTPNotFound")
    return {"events": found}


@router.get("/resources/{resource_name}/events/{event_id}", summary="Show an event")
def show_event(
    request: Request,
    principal: Reader,
    stacks: Service,
    stack_name: str,
    stack_id: str,
    resource_name: str,
    event_id: str,
) -> dict[str, Any]:
    stack = identified(stacks, principal, stack_name, stack_id)
    for e in stacks.events(principal.project, stack["id"], resource_name=resource_name):
        if e["id"] == event_id:
            event = with_event_links(
                request, principal.project, stack["stack_name"], stack["id"], e
            )
            event.setdefault("resource_properties", {})
            return {"event": event}
    raise ApiError(404, f"No event {event_id} found", "HTTPNotFound")


def _events(
    request: Request,
    principal: Principal,
    stacks: Stacks,
    stack_name: str,
    stack_id: str,
    resource_name: str | None,
) -> list[dict[str, Any]]:
    q = request.query_params
    limit = int_param(q.get("limit"), "limit")
    depth = int_param(q.get("nested_depth"), "nested_depth") or 0
    sort_dir = q.get("sort_dir", "asc")
    if sort_dir not in ("asc", "desc"):
        raise ApiError(
            400, f"Invalid sort direction {sort_dir!r}: use asc or desc", "HTTPBadRequest"
        )
    stack = identified(stacks, principal, stack_name, stack_id)
    wanted = {k: set(q.getlist(k)) for k in FILTERS if k in q}
    found = stacks.events(
        principal.project,
        stack["id"],
        resource_name=resource_name,
        limit=None if wanted else limit,
        marker=q.get("marker"),
        sort_dir=cast(Literal["asc", "desc"], sort_dir),
        nested_depth=depth,
    )
    if wanted:
        found = [e for e in found if view_matches(e, wanted, FILTERS)][:limit]
    root = stack_url(request, principal.project, str(stack["stack_name"]), str(stack["id"]))
    return [_summary(request, principal.project, stack, e, root if depth else None) for e in found]


def _summary(
    request: Request, project: str, stack: dict[str, Any], event: dict[str, Any], root: str | None
) -> dict[str, Any]:
    """One event as Heat lists it, linked to its own stack (a nested
    stack's, with ``nested_depth``) and then to the root."""
    name = str(event.get("stack_name") or stack["stack_name"])
    sid = str(event.get("stack_identity") or stack["id"])
    linked = with_event_links(request, project, name, sid, event)
    if root is not None:
        linked["links"].append({"href": root, "rel": "root_stack"})
    return {k: linked[k] for k in SUMMARY_KEYS if k in linked}

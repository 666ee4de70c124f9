"""Heat's events: per stack, per resource, and one event."""

from __future__ import annotations

from typing import Any, Literal, cast

from fastapi import APIRouter, Request

from convection.api.auth import Principal, Reader
from convection.api.errors import ApiError
from convection.api.links import with_event_links
from convection.api.routers._common import PREFIX, STACK, Filters, Service, identified, view_matches
from convection.stacks import Stacks

router = APIRouter(prefix=PREFIX + STACK, tags=["events"])

#: Heat's event filters -> (field of the event view, part of its status).
FILTERS: Filters = {
    "resource_action": ("resource_status", 0),
    "resource_status": ("resource_status", 1),
    "resource_name": ("resource_name", None),
    "resource_type": ("resource_type", None),
}


@router.get("/events", summary="List a stack's events")
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
    if not found and "marker" not in request.query_params:
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
    raise ApiError(404, f"No event {event_id} found for resource {resource_name}", "HTTPNotFound")


def _events(
    request: Request,
    principal: Principal,
    stacks: Stacks,
    stack_name: str,
    stack_id: str,
    resource_name: str | None,
) -> list[dict[str, Any]]:
    q = request.query_params
    stack = identified(stacks, principal, stack_name, stack_id)
    wanted = {k: set(q.getlist(k)) for k in FILTERS if k in q}
    limit = _limit(q.get("limit"))
    sort_dir = q.get("sort_dir", "asc")
    if sort_dir not in ("asc", "desc"):
        raise ApiError(
            400, f"Invalid sort direction {sort_dir!r}: use asc or desc", "HTTPBadRequest"
        )
    found = stacks.events(
        principal.project,
        stack["id"],
        resource_name=resource_name,
        limit=None if wanted else limit,
        marker=q.get("marker"),
        sort_dir=cast(Literal["asc", "desc"], sort_dir),
    )
    if wanted:
        found = [e for e in found if view_matches(e, wanted, FILTERS)][:limit]
    name, sid = str(stack["stack_name"]), str(stack["id"])
    return [with_event_links(request, principal.project, name, sid, e) for e in found]


def _limit(value: str | None) -> int | None:
    if value is None:
        return None
    if not value.isdigit():
        raise ApiError(400, "Only integer is acceptable by 'limit'.", "HTTPBadRequest")
    return int(value)

"""Heat's resources: list (with filters), show, metadata, signal and
mark-unhealthy."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from convection.api.auth import Reader, Writer
from convection.api.body import JsonAny, JsonObject
from convection.api.errors import ApiError
from convection.api.links import with_resource_links
from convection.api.routers._common import (
    PREFIX,
    STACK,
    Filters,
    Service,
    bool_param,
    identified,
    view_matches,
)
from convection.errors import NotFound

router = APIRouter(prefix=PREFIX + STACK + "/resources", tags=["resources"])

#: Heat's resource list filters -> (field of the view, part of its status).
FILTERS: Filters = {
    "type": ("resource_type", None),
    "name": ("resource_name", None),
    "id": ("physical_resource_id", None),
    "action": ("resource_status", 0),
    "status": ("resource_status", 1),
}
MARK_KEYS = frozenset({"mark_unhealthy", "resource_status_reason"})


@router.get("", summary="List a stack's resources")
def list_resources(
    request: Request, principal: Reader, stacks: Service, stack_name: str, stack_id: str
) -> dict[str, Any]:
    q = request.query_params
    stack = identified(stacks, principal, stack_name, stack_id)
    wanted = {k: set(q.getlist(k)) for k in FILTERS if k in q}
    found = [
        r
        for r in stacks.resources(principal.project, stack["id"])
        if view_matches(r, wanted, FILTERS)
    ]
    if bool_param(q.get("with_detail", False), "with_detail"):
        found = [stacks.resource(principal.project, stack["id"], r["resource_name"]) for r in found]
    return {"resources": [with_resource_links(request, principal.project, r) for r in found]}


@router.get("/{resource_name}", summary="Show a resource")
def show_resource(
    request: Request,
    principal: Reader,
    stacks: Service,
    stack_name: str,
    stack_id: str,
    resource_name: str,
) -> dict[str, Any]:
    stack = identified(stacks, principal, stack_name, stack_id)
    found = stacks.resource(principal.project, stack["id"], resource_name)
    return {"resource": with_resource_links(request, principal.project, found)}


@router.get("/{resource_name}/metadata", summary="A resource's metadata")
def resource_metadata(
    principal: Reader, stacks: Service, stack_name: str, stack_id: str, resource_name: str
) -> dict[str, Any]:
    """The ``metadata`` of the resource's definition in the stack's template."""
    stack = identified(stacks, principal, stack_name, stack_id)
    stacks.resource(principal.project, stack["id"], resource_name)  # 404 if absent
    template = stacks.template(principal.project, stack["id"])
    definition = (template.get("resources") or {}).get(resource_name) or {}
    metadata = definition.get("metadata") or definition.get("Metadata") or {}
    return {"metadata": metadata if isinstance(metadata, dict) else {}}


@router.post("/{resource_name}/signal", summary="Signal a resource")
def signal_resource(
    principal: Writer,
    stacks: Service,
    stack_name: str,
    stack_id: str,
    resource_name: str,
    body: JsonAny,
) -> None:
    stack = identified(stacks, principal, stack_name, stack_id)
    if body is not None and not isinstance(body, dict):
        raise ApiError(400, "The signal data must be a JSON object.", "HTTPBadRequest")
    data = body or {}
    try:
        stacks.signal(principal.project, stack["id"], resource_name, data)
    except NotFound as exc:
        if exc.kind == "Resource":
            raise ApiError(
                404, f"The Resource ({resource_name}) could not be found.", "EntityNotFound"
            ) from None
        raise


@router.patch("/{resource_name}", summary="Mark a resource unhealthy (or healthy)")
def mark_unhealthy(
    principal: Writer,
    stacks: Service,
    stack_name: str,
    stack_id: str,
    resource_name: str,
    body: JsonObject,
) -> None:
    unknown = sorted(set(body) - MARK_KEYS)
    if unknown:
        raise ApiError(400, f"{unknown[0]} is not a valid key", "HTTPBadRequest")
    if "mark_unhealthy" not in body:
        raise ApiError(
            400,
            "Missing mandatory (mark_unhealthy) key from mark unhealthy request",
            "HTTPBadRequest",
        )
    stack = identified(stacks, principal, stack_name, stack_id)
    stacks.mark_unhealthy(
        principal.project,
        stack["id"],
        resource_name,
        str(body.get("resource_status_reason") or ""),
        unhealthy=bool_param(body["mark_unhealthy"], "mark_unhealthy"),
    )

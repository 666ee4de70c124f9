"""Heat's resources: list (with filters), show, metadata, signal and
mark-unhealthy."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from convection.api import openapi
from convection.api.auth import Reader, Signaller, Writer
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
    int_param,
    view_matches,
)
from convection.service import Stacks

router = APIRouter(
    prefix=PREFIX + STACK + "/resources",
    tags=["resources"],
    responses=openapi.heat_errors(400, 404),
)

#: Heat's resource list filters -> (field of the view, part of its status).
FILTERS: Filters = {
    "type": ("resource_type", None),
    "name": ("resource_name", None),
    "id": ("physical_resource_id", None),
    "action": ("resource_status", 0),
    "status": ("resource_status", 1),
    "physical_resource_id": ("physical_resource_id", None),
}
#: The list's query keys that are not filters.
LIST_OPTIONS = frozenset({"nested_depth", "with_detail"})
MARK_KEYS = frozenset({"mark_unhealthy", "resource_status_reason"})


@router.get(
    "",
    summary="List a stack's resources",
    openapi_extra=openapi.query(
        nested_depth=openapi.INTEGER, with_detail=openapi.BOOLEAN, type=openapi.STRING
    ),
)
def list_resources(
    request: Request, principal: Reader, stacks: Service, stack_name: str, stack_id: str
) -> dict[str, Any]:
    q = request.query_params
    unknown = sorted(set(q) - set(FILTERS) - LIST_OPTIONS)
    if unknown:
        raise ApiError(400, f"Invalid filter parameters {unknown}", "HTTPBadRequest")
    depth = int_param(q.get("nested_depth"), "nested_depth") or 0
    detail = bool_param(q.get("with_detail", False), "with_detail")
    stack = identified(stacks, principal, stack_name, stack_id)
    wanted = {k: set(q.getlist(k)) for k in FILTERS if k in q}
    found = [
        r
        for r in stacks.resources(principal.project, stack["id"], nested_depth=depth, detail=detail)
        if view_matches(r, wanted, FILTERS)
    ]
    owned = {
        sid: stacks.nested_stacks(principal.project, sid)
        for sid in {str(r["stack_identity"]) for r in found}
    }
    return {
        "resources": [
            with_resource_links(
                request,
                principal.project,
                r,
                owned[str(r["stack_identity"])].get(str(r["resource_name"])),
            )
            for r in found
        ]
    }


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
    found["description"] = _definition(stacks, principal.project, stack["id"], resource_name).get(
        "description", ""
    )
    nested = stacks.nested_stacks(principal.project, stack["id"]).get(resource_name)
    return {"resource": with_resource_links(request, principal.project, found, nested)}


def _definition(stacks: Stacks, project: str, stack_id: str, name: str) -> dict[str, Any]:
    """The resource's snippet in the stack's stored template ({} if none)."""
    definition = (stacks.template(project, stack_id).get("resources") or {}).get(name)
    return definition if isinstance(definition, dict) else {}


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


@router.post(
    "/{resource_name}/signal",
    summary="Signal a resource",
    responses=openapi.heat_errors(409),
    openapi_extra=openapi.json_any_body("The signal's data: a JSON object"),
)
def signal_resource(
    principal: Signaller,
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
    stacks.signal(principal.project, stack["id"], resource_name, data)  # 404 ResourceNotFound


@router.patch(
    "/{resource_name}",
    summary="Mark a resource unhealthy (or healthy)",
    responses=openapi.heat_errors(409),
    openapi_extra=openapi.json_body(
        {"mark_unhealthy": {"type": "boolean"}, "resource_status_reason": {"type": "string"}},
        required=("mark_unhealthy",),
    ),
)
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

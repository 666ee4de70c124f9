"""``GET /v2``, and a Mistral 404 for any other ``/v2`` path (``GET /``,
both APIs' versions, is ``service_info``'s)."""

from __future__ import annotations

from fastapi import APIRouter, Request

from convection.api.routers.v2._common import PREFIX, Body, MistralError, MistralRoute

router = APIRouter(tags=["service"])
#: Registered last: what no other ``/v2`` route takes.
fallback = APIRouter(route_class=MistralRoute, include_in_schema=False)


@router.get(PREFIX, summary="Mistral's API v2 root")
def v2_root(request: Request) -> Body:
    return {"uri": str(request.base_url).rstrip("/") + PREFIX}


@fallback.api_route(PREFIX + "/{path:path}", methods=["GET", "POST", "PUT", "PATCH", "DELETE"])
def not_found(path: str) -> Body:
    raise MistralError(404, f"The resource could not be found: /v2/{path}")

"""``/v2/environments``: stored environments (Mistral's
``EnvironmentController``): list, show by name, create, update (``PUT`` on
the collection, the name in the body) and delete. ``variables`` travels
as a JSON string, as Mistral's ``JsonType`` does; either a string or an
object is taken in."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, Response

from convection.api.routers.v2._common import (
    PREFIX,
    Body,
    JsonBody,
    MistralRoute,
    Reader,
    StoreDep,
    Writer,
    encoded,
    json_dict,
    listing,
    page_of,
    scope_param,
    with_fields,
)
from convection.workflows import (
    create_environment,
    delete_environment,
    get_environment,
    list_environments,
    update_environment,
)

router = APIRouter(
    prefix=PREFIX + "/environments", tags=["mistral: environments"], route_class=MistralRoute
)

FILTERS = {"id": "id", "name": "name", "description": "description"}


def shown(body: Body) -> Body:
    return encoded(body, ("variables",))


def _values(body: Body) -> dict[str, Any]:
    """The body with ``variables`` decoded (a JSON string or an object)."""
    values = dict(body)
    if "variables" in values:
        values["variables"] = json_dict(values["variables"], "variables")
    return values


@router.get("", summary="List environments")
def list_(request: Request, principal: Reader, store: StoreDep, scope: str | None = None) -> Body:
    page = page_of(request, filters=FILTERS)
    filters = dict(page.filters)
    if scope:
        filters["scope"] = scope_param(scope)
    items = list_environments(
        store, principal.project, filters=filters or None, sort_keys=page.sort_keys,
        sort_dir=page.sort_dir, limit=page.limit, marker=page.marker,
    )  # fmt: skip
    return listing(request, "environments", [shown(i) for i in items], page)


@router.get("/{name}", summary="Show an environment")
def show(principal: Reader, store: StoreDep, name: str, fields: str = "") -> Body:
    return with_fields(shown(get_environment(store, principal.project, name)), fields)


@router.post("", status_code=201, summary="Create an environment")
def create(principal: Writer, store: StoreDep, body: JsonBody) -> Body:
    return shown(create_environment(store, principal.project, _values(body)))


@router.put("", summary="Update an environment (its name in the body)")
def update(principal: Writer, store: StoreDep, body: JsonBody) -> Body:
    return shown(update_environment(store, principal.project, _values(body)))


@router.delete("/{name}", status_code=204, summary="Delete an environment")
def delete(principal: Writer, store: StoreDep, name: str) -> Response:
    delete_environment(store, principal.project, name)
    return Response(status_code=204)

"""``/v2/actions``: system actions (the registry's) and ad-hoc ones,
uploaded as ``text/plain`` YAML."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, Response

from convection.api.routers.v2._common import (
    PREFIX,
    Body,
    MistralRoute,
    Reader,
    StoreDep,
    Text,
    Writer,
    bad_request,
    listing,
    page_of,
    scope_param,
    with_fields,
)
from convection.api.routers.v2.workflows import validation
from convection.common import InvalidInput
from convection.workflows import (
    create_actions,
    delete_action,
    get_action,
    list_actions,
    parse_actions,
    update_actions,
)

router = APIRouter(prefix=PREFIX + "/actions", tags=["mistral: actions"], route_class=MistralRoute)

FILTERS = {"id": "id", "name": "name", "scope": "scope", "is_system": "is_system"}


def _sort_value(item: Body, key: str) -> tuple[bool, Any]:
    value = item.get(key)
    return (value is None, "" if value is None else value)


@router.get("", summary="List actions (system and ad-hoc)")
def list_(
    request: Request, principal: Reader, store: StoreDep, namespace: str | None = None
) -> Body:
    page = page_of(request, default_sort=("name",), filters=FILTERS, booleans=("is_system",))
    is_system = page.filters.pop("is_system", None)
    if isinstance(is_system, list):
        is_system = None
    items = list_actions(store, principal.project, namespace=namespace, is_system=is_system)
    for key, wanted in page.filters.items():
        accepted = wanted if isinstance(wanted, list) else [wanted]
        items = [i for i in items if i.get(key) in accepted]
    for key in page.sort_keys:
        if items and key not in items[0]:
            raise bad_request(f"cannot sort actions by {key!r}")
    keys = [*page.sort_keys, "name", "namespace"]
    items.sort(key=lambda i: [_sort_value(i, k) for k in keys], reverse=page.sort_dir == "desc")
    if page.marker is not None:
        at = [n for n, i in enumerate(items) if page.marker in (i.get("id"), i.get("name"))]
        if not at:
            raise bad_request(f"Unknown marker {page.marker!r}")
        items = items[at[0] + 1 :]
    return listing(request, "actions", items[: page.limit], page)


@router.post("", status_code=201, summary="Create ad-hoc actions (text/plain YAML)")
def create(
    principal: Writer, store: StoreDep, text: Text, namespace: str = "", scope: str | None = None
) -> Body:
    made = create_actions(
        store, principal.project, text, namespace=namespace, scope=scope_param(scope)
    )
    return {"actions": made.items}


def _update(
    principal: Writer, store: StoreDep, text: str, namespace: str, scope: str | None
) -> Body:
    done = update_actions(
        store, principal.project, text, namespace=namespace, scope=scope_param(scope)
    )
    return {"actions": done.items}


@router.put("", summary="Update ad-hoc actions by name (text/plain YAML)")
def update(
    principal: Writer, store: StoreDep, text: Text, namespace: str = "", scope: str | None = None
) -> Body:
    return _update(principal, store, text, namespace, scope)


@router.post("/validate", summary="Validate an action definition")
def validate(principal: Reader, text: Text) -> Body:
    specs, diags = parse_actions(text, "<actions>")
    if diags.has_errors or not specs:
        return validation(InvalidInput(list(diags.errors)))
    return validation(None)


@router.put("/{identifier}", summary="Update ad-hoc actions (text/plain YAML)")
def update_one(
    principal: Writer,
    store: StoreDep,
    identifier: str,
    text: Text,
    namespace: str = "",
    scope: str | None = None,
) -> Body:
    get_action(store, principal.project, identifier, namespace)  # 404 if there is none
    return _update(principal, store, text, namespace, scope)


@router.get("/{identifier}", summary="Show an action")
@router.get("/{identifier}/{namespace}", summary="Show an action of a namespace")
@router.get("/{identifier}/", include_in_schema=False)  # mistralclient's empty namespace
def show(
    principal: Reader, store: StoreDep, identifier: str, namespace: str = "", fields: str = ""
) -> Body:
    return with_fields(get_action(store, principal.project, identifier, namespace), fields)


@router.delete("/{identifier}", status_code=204, summary="Delete an ad-hoc action")
@router.delete("/{identifier}/{namespace}", status_code=204, include_in_schema=False)
@router.delete("/{identifier}/", status_code=204, include_in_schema=False)
def delete(principal: Writer, store: StoreDep, identifier: str, namespace: str = "") -> Response:
    delete_action(store, principal.project, identifier, namespace)
    return Response(status_code=204)

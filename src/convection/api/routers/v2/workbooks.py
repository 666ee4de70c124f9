"""``/v2/workbooks``: workbooks, uploaded as ``text/plain`` YAML; their
workflows and actions are stored as ``<workbook>.<name>``."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from convection.api.routers.v2._common import (
    PREFIX,
    Body,
    MistralRoute,
    Reader,
    StoreDep,
    Text,
    Writer,
    listing,
    page_of,
    scope_param,
    with_fields,
)
from convection.api.routers.v2.workflows import validation
from convection.common import InvalidInput
from convection.workflows import (
    create_workbook,
    delete_workbook,
    get_workbook,
    list_workbooks,
    parse_workbook,
    update_workbook,
)

router = APIRouter(
    prefix=PREFIX + "/workbooks", tags=["mistral: workbooks"], route_class=MistralRoute
)

FILTERS = {"id": "id", "name": "name", "scope": "scope"}


@router.get("", summary="List workbooks")
def list_(
    request: Request, principal: Reader, store: StoreDep, namespace: str | None = None
) -> Body:
    page = page_of(request, filters=FILTERS)
    items = list_workbooks(
        store, principal.project, namespace=namespace or None, filters=page.filters or None,
        sort_keys=page.sort_keys, sort_dir=page.sort_dir, limit=page.limit, marker=page.marker,
    )  # fmt: skip
    return listing(request, "workbooks", items, page)


@router.post("", status_code=201, summary="Create a workbook (text/plain YAML)")
def create(
    principal: Writer, store: StoreDep, text: Text, namespace: str = "", scope: str | None = None
) -> Body:
    made = create_workbook(
        store, principal.project, text, namespace=namespace, scope=scope_param(scope)
    )
    return made.items[0]


@router.put("", summary="Update a workbook (text/plain YAML)")
def update(
    principal: Writer, store: StoreDep, text: Text, namespace: str = "", scope: str | None = None
) -> Body:
    done = update_workbook(
        store, principal.project, text, namespace=namespace, scope=scope_param(scope)
    )
    return done.items[0]


@router.post("/validate", summary="Validate a workbook definition")
def validate(principal: Reader, text: Text) -> Body:
    spec, diags = parse_workbook(text, "<workbook>")
    if diags.has_errors or spec is None:
        return validation(InvalidInput(list(diags.errors)))
    return validation(None)


@router.get("/{name}", summary="Show a workbook")
def show(
    principal: Reader, store: StoreDep, name: str, namespace: str = "", fields: str = ""
) -> Body:
    return with_fields(get_workbook(store, principal.project, name, namespace), fields)


@router.delete("/{name}", status_code=204, summary="Delete a workbook")
def delete(principal: Writer, store: StoreDep, name: str, namespace: str = "") -> Response:
    delete_workbook(store, principal.project, name, namespace)
    return Response(status_code=204)

"""``/v2/workflows``: workflow definitions, uploaded as ``text/plain`` YAML."""

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
    encoded,
    listing,
    page_of,
    scope_param,
    with_fields,
)
from convection.common import InvalidInput
from convection.workflows import (
    create_workflows,
    delete_workflow,
    get_workflow,
    list_workflows,
    parse_workflows,
    update_workflows,
)

router = APIRouter(
    prefix=PREFIX + "/workflows", tags=["mistral: workflows"], route_class=MistralRoute
)

#: Mistral carries these as JSON strings.
JSON_FIELDS = ("interface",)
FILTERS = {"id": "id", "name": "name", "scope": "scope"}


def shown(body: Body) -> Body:
    return encoded(body, JSON_FIELDS)


def validation(errors: InvalidInput | None) -> Body:
    if errors is None:
        return {"valid": True}
    return {"valid": False, "error": "\n".join(str(d) for d in errors.diagnostics)}


@router.get("", summary="List workflows")
def list_(
    request: Request, principal: Reader, store: StoreDep, namespace: str | None = None
) -> Body:
    page = page_of(request, filters=FILTERS)
    items = list_workflows(
        store, principal.project, namespace=namespace or None, filters=page.filters or None,
        sort_keys=page.sort_keys, sort_dir=page.sort_dir, limit=page.limit, marker=page.marker,
    )  # fmt: skip
    return listing(request, "workflows", [shown(i) for i in items], page)


@router.post("", status_code=201, summary="Create workflows (text/plain YAML)")
def create(
    principal: Writer,
    store: StoreDep,
    text: Text,
    namespace: str = "",
    scope: str | None = None,
    skip_validation: bool = False,
) -> Body:
    made = create_workflows(
        store, principal.project, text, namespace=namespace, scope=scope_param(scope)
    )
    return {"workflows": [shown(i) for i in made.items]}


@router.put("", summary="Update workflows by name (text/plain YAML)")
def update(
    principal: Writer, store: StoreDep, text: Text, namespace: str = "", scope: str | None = None
) -> Body:
    done = update_workflows(
        store, principal.project, text, namespace=namespace, scope=scope_param(scope)
    )
    return {"workflows": [shown(i) for i in done.items]}


@router.post("/validate", summary="Validate a workflow definition")
def validate(principal: Reader, text: Text) -> Body:
    specs, diags = parse_workflows(text, "<workflow>")
    if diags.has_errors or not specs:
        return validation(InvalidInput(list(diags.errors)))
    return validation(None)


@router.get("/{identifier}", summary="Show a workflow (by id or name)")
def show(
    principal: Reader, store: StoreDep, identifier: str, namespace: str = "", fields: str = ""
) -> Body:
    return with_fields(shown(get_workflow(store, principal.project, identifier, namespace)), fields)


@router.put("/{identifier}", summary="Update one workflow (by id or name)")
def update_one(
    principal: Writer,
    store: StoreDep,
    identifier: str,
    text: Text,
    namespace: str = "",
    scope: str | None = None,
) -> Body:
    done = update_workflows(
        store, principal.project, text, namespace=namespace, scope=scope_param(scope),
        identifier=identifier,
    )  # fmt: skip
    return shown(done.items[0])


@router.delete("/{identifier}", status_code=204, summary="Delete a workflow")
def delete(principal: Writer, store: StoreDep, identifier: str, namespace: str = "") -> Response:
    delete_workflow(store, principal.project, identifier, namespace)
    return Response(status_code=204)

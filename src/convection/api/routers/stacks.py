"""Heat's stack collection and stack routes: list, create, preview,
lookup (name-only URLs redirect), show, update (PUT and PATCH), update
preview, delete."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Literal, cast
from urllib.parse import quote, urlencode

from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse, RedirectResponse

from convection.api import inputs, openapi
from convection.api.auth import Reader, Writer
from convection.api.body import JsonObject
from convection.api.errors import ApiError
from convection.api.links import stack_url, with_stack_links
from convection.api.routers._common import (
    PREFIX,
    STACK,
    STACK_BODY,
    Service,
    bool_param,
    identified,
    int_param,
    limits,
)
from convection.service import FILTER_KEYS, Stacks, iso

router = APIRouter(prefix=PREFIX, tags=["stacks"], responses=openapi.heat_errors(400))

#: Sub-paths a name-only URL may have; Heat redirects them too.
LOOKUP_SUBPATHS = frozenset(
    {"resources", "events", "template", "environment", "files", "actions", "outputs"}
)
#: Heat's ``stack.timeout`` column is a 32-bit integer; a larger
#: ``timeout_mins`` would overflow the deadline's arithmetic (a 500).
MAX_TIMEOUT_MINS = 2**31 - 1
#: Those Heat also redirects for a POST.
POST_SUBPATHS = frozenset({"resources", "events", "template", "actions"})
#: An update: accepted with no body, or refused.
UPDATE: dict[str, Any] = {
    "response_class": Response,
    "responses": {**openapi.no_content(202, "Accepted"), **openapi.heat_errors(404, 409)},
    "openapi_extra": STACK_BODY,
}
PREVIEW: dict[str, Any] = {"responses": openapi.heat_errors(404), "openapi_extra": STACK_BODY}


@router.get(
    "/stacks",
    summary="List stacks",
    responses=openapi.heat_errors(404),  # a marker that names no stack
    openapi_extra=openapi.query(
        limit=openapi.INTEGER,
        marker=openapi.STRING,
        sort_keys=openapi.STRING,
        sort_dir=openapi.SORT_DIR,
        show_deleted=openapi.BOOLEAN,
        show_nested=openapi.BOOLEAN,
        with_count=openapi.BOOLEAN,
        tags=openapi.STRING,
        not_tags=openapi.STRING,
        stack_status=openapi.STRING,
        stack_name=openapi.STRING,
    ),
)
@router.get("/stacks/detail", summary="List stacks (detail)", include_in_schema=False)
def list_stacks(request: Request, principal: Reader, stacks: Service) -> dict[str, Any]:
    q = request.query_params
    filters = {k: q.getlist(k) for k in FILTER_KEYS if k in q}
    limit = int_param(q.get("limit"), "limit")
    sort_dir = q.get("sort_dir", "desc")
    if sort_dir not in ("asc", "desc"):
        raise ApiError(
            400, f"Invalid sort direction {sort_dir!r}: use asc or desc", "HTTPBadRequest"
        )
    query: dict[str, Any] = {
        "include_deleted": bool_param(q.get("show_deleted", False), "show_deleted"),
        "show_nested": bool_param(q.get("show_nested", False), "show_nested"),
        "filters": filters,
        "tags": _tags(q.get("tags")),
        "tags_any": _tags(q.get("tags_any")),
        "not_tags": _tags(q.get("not_tags")),
        "not_tags_any": _tags(q.get("not_tags_any")),
    }
    found = stacks.list(
        principal.project,
        **query,
        sort_keys=[k for keys in q.getlist("sort_keys") for k in keys.split(",") if k],
        sort_dir=cast(Literal["asc", "desc"], sort_dir),
        limit=limit,
        marker=q.get("marker"),
    )
    body: dict[str, Any] = {
        "stacks": [with_stack_links(request, principal.project, s) for s in found]
    }
    if limit and len(found) == limit:
        body["links"] = [{"rel": "next", "href": _next_page(request, str(found[-1]["id"]))}]
    if bool_param(q.get("with_count", False), "with_count"):
        # Heat's count_stacks: every stack the filters match, not the page.
        body["count"] = len(stacks.list(principal.project, **query))
    return body


def _next_page(request: Request, marker: str) -> str:
    """Heat's ``next`` link: this URL with ``marker`` set to the page's last."""
    params = [(k, v) for k, v in request.query_params.multi_items() if k != "marker"]
    return f"{request.url.replace(query='')}?{urlencode([*params, ('marker', marker)])}"


@router.post(
    "/stacks",
    status_code=201,
    summary="Create a stack",
    responses=openapi.heat_errors(409),
    openapi_extra=STACK_BODY,
)
def create_stack(
    request: Request, principal: Writer, stacks: Service, body: JsonObject
) -> JSONResponse:
    name = _stack_name(body)
    created = stacks.create(
        principal.project,
        name,
        inputs.stack_inputs(body, limits(stacks)),
        timeout_mins=_timeout(body),
        enable_rollback=not bool_param(body.get("disable_rollback", True), "disable_rollback"),
        tags=_tags(body.get("tags")),
    )
    url = stack_url(request, principal.project, name, str(created["id"]))
    stack = {"id": created["id"], "links": [{"href": url, "rel": "self"}]}
    return JSONResponse({"stack": stack}, status_code=201, headers={"Location": url})


@router.post("/stacks/preview", summary="Preview a stack create", openapi_extra=STACK_BODY)
def preview_stack(
    request: Request, principal: Reader, stacks: Service, body: JsonObject
) -> dict[str, Any]:
    name = _stack_name(body)
    given = inputs.stack_inputs(body, limits(stacks))
    result = stacks.preview_stack(principal.project, name, given)
    description = result["description"]
    stack = {
        "id": "None",
        "stack_name": name,
        "description": description,
        "template_description": description,
        "creation_time": iso(datetime.now(UTC)),
        "updated_time": None,
        "deletion_time": None,
        "disable_rollback": bool_param(body.get("disable_rollback", True), "disable_rollback"),
        "timeout_mins": _timeout(body),
        "parameters": result["parameters"],
        "capabilities": [],
        "notification_topics": [],
        "stack_owner": None,
        "parent": None,
        "stack_user_project_id": None,
        "tags": _tags(body.get("tags")) or None,
        "resources": result["changes"].get("added", []),
        "links": [{"href": stack_url(request, principal.project, name, "None"), "rel": "self"}],
    }
    return {"stack": stack}


@router.get(
    "/stacks/{stack_name}",
    summary="Find a stack by name or id (redirects to its URL)",
    response_class=Response,
    responses={**openapi.redirect("The stack's own URL"), **openapi.heat_errors(404)},
)
@router.api_route(
    "/stacks/{stack_name}", methods=["PUT", "PATCH", "DELETE", "POST"], include_in_schema=False
)
def lookup(request: Request, principal: Reader, stacks: Service, stack_name: str) -> Response:
    return _redirect(request, principal.project, stacks, stack_name, "")


@router.post("/stacks/{stack_name}/{path}", include_in_schema=False)
def lookup_subpath_post(
    request: Request, principal: Reader, stacks: Service, stack_name: str, path: str
) -> Response:
    if path not in POST_SUBPATHS:
        raise ApiError(404, "The resource could not be found.", "HTTPNotFound")
    return _redirect(request, principal.project, stacks, stack_name, path)


@router.get(
    STACK,
    summary="Show a stack",
    responses={**openapi.redirect("A sub-path named by name only"), **openapi.heat_errors(404)},
)
def show_stack(
    request: Request, principal: Reader, stacks: Service, stack_name: str, stack_id: str
) -> Any:
    if stack_id in LOOKUP_SUBPATHS:  # /stacks/{name}/resources and the like
        return _redirect(request, principal.project, stacks, stack_name, stack_id)
    stack = identified(stacks, principal, stack_name, stack_id)
    shown = stacks.show(principal.project, stack["id"])
    resolve = request.query_params.get("resolve_outputs")
    if resolve is not None and not bool_param(resolve, "resolve_outputs"):
        shown.pop("outputs", None)  # Heat's resolve_outputs=False
    return {"stack": with_stack_links(request, principal.project, shown)}


@router.put(STACK, status_code=202, summary="Update a stack", **UPDATE)
@router.patch(STACK, status_code=202, summary="Update a stack, reusing what is not given", **UPDATE)
def update_stack(
    request: Request,
    principal: Writer,
    stacks: Service,
    stack_name: str,
    stack_id: str,
    body: JsonObject,
) -> Response:
    stack = identified(stacks, principal, stack_name, stack_id)
    given = _update_inputs(request, stacks, body)
    stacks.update(principal.project, stack["id"], **given, **_update_options(body))
    return Response(status_code=202)


@router.put(STACK + "/preview", summary="Preview an update", **PREVIEW)
@router.patch(STACK + "/preview", summary="Preview a PATCH update", **PREVIEW)
def preview_update(
    request: Request,
    principal: Reader,
    stacks: Service,
    stack_name: str,
    stack_id: str,
    body: JsonObject,
) -> dict[str, Any]:
    stack = identified(stacks, principal, stack_name, stack_id)
    # Heat reads ``show_nested`` from the query (heatclient puts it there).
    show_nested = bool_param(request.query_params.get("show_nested", False), "show_nested")
    changes = stacks.preview_update(
        principal.project,
        stack["id"],
        **_update_inputs(request, stacks, body),
        show_nested=show_nested,
    )
    return {"resource_changes": changes}


@router.delete(
    STACK, status_code=204, summary="Delete a stack", responses=openapi.heat_errors(404, 409)
)
def delete_stack(principal: Writer, stacks: Service, stack_name: str, stack_id: str) -> Response:
    stack = identified(stacks, principal, stack_name, stack_id)
    stacks.delete(principal.project, stack["id"])
    return Response(status_code=204)


def _redirect(
    request: Request, project: str, stacks: Service, name_or_id: str, path: str
) -> RedirectResponse:
    """Heat's lookup: 302 to the stack's own URL, keeping sub-path and query."""
    stack = stacks.identify(project, name_or_id)
    if stack.get("deletion_time") is not None and name_or_id == stack["stack_name"]:
        raise ApiError(404, f"The Stack ({name_or_id}) could not be found.", "EntityNotFound")
    url = stack_url(request, project, str(stack["stack_name"]), str(stack["id"]))
    if path:
        url += "/" + quote(path)
    if request.url.query:
        url += "?" + request.url.query
    return RedirectResponse(url, status_code=302)


def _stack_name(body: dict[str, Any]) -> str:
    name = body.get("stack_name")
    if not isinstance(name, str) or not name:
        raise ApiError(400, "No stack name specified", "HTTPBadRequest")
    return name


def _timeout(body: dict[str, Any]) -> int | None:
    """Heat's ``timeout_mins``: a non-negative integer; 0 (or none) means the
    default."""
    value = body.get("timeout_mins")
    if value is None or value == "":
        return None
    minutes = int_param(str(value), "timeout_mins")
    if minutes is not None and minutes > MAX_TIMEOUT_MINS:
        raise ApiError(
            400,
            f"Value '{value}' is invalid for 'timeout_mins' which only accepts "
            f"an integer up to {MAX_TIMEOUT_MINS}.",
            "HTTPBadRequest",
        )
    return minutes or None


def _tags(value: Any) -> list[str]:
    if value is None or value == "":
        return []
    if isinstance(value, list):
        return [str(v) for v in value]
    return [t.strip() for t in str(value).split(",") if t.strip()]


def _update_inputs(request: Request, stacks: Stacks, body: dict[str, Any]) -> dict[str, Any]:
    """An update's inputs as keywords of ``Stacks.update``/``preview_update``:
    a PATCH (Heat's ``existing``) reuses what the body leaves out, a PUT
    replaces it all."""
    if request.method != "PATCH":
        return {"inputs": inputs.stack_inputs(body, limits(stacks))}
    return {
        "inputs": inputs.stack_patch(body, limits(stacks)),
        "existing": True,
        "clear_parameters": inputs.clear_parameters(body),
    }


def _update_options(body: dict[str, Any]) -> dict[str, Any]:
    rollback = body.get("disable_rollback")
    return {
        "rollback": None if rollback is None else not bool_param(rollback, "disable_rollback"),
        "timeout_mins": _timeout(body),
        "tags": _tags(body["tags"]) if "tags" in body else None,
    }

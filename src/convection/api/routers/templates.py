"""Templates: validate, resource types (list, show, generated template),
template versions and their functions."""

from __future__ import annotations

import re
from typing import Any

from fastapi import APIRouter, Request

from convection.api import inputs, openapi
from convection.api.auth import Reader
from convection.api.body import JsonObject
from convection.api.errors import ApiError
from convection.api.routers._common import PREFIX, STACK_BODY, Service, bool_param, limits
from convection.api.type_schema import description, generated_template, type_schema
from convection.common import NotFound
from convection.hot import all_versions, function_descriptions, version_by_key
from convection.service import validate_template

router = APIRouter(prefix=PREFIX, tags=["templates"], responses=openapi.heat_errors(400))


@router.post("/validate", summary="Validate a template", openapi_extra=STACK_BODY)
def validate(
    request: Request, principal: Reader, stacks: Service, body: JsonObject
) -> dict[str, Any]:
    """Heat's ValidateTemplate; ``show_nested`` is Heat's query parameter
    (heatclient sends it there), and a body key of that name is read too."""
    given = inputs.stack_inputs(body, limits(stacks))
    raw = request.query_params.get("show_nested", body.get("show_nested", False))
    result, _ = validate_template(
        given,
        registry=stacks.registry,
        limits=limits(stacks),
        show_nested=bool_param(raw, "show_nested"),
    )
    return result


@router.get("/resource_types", summary="List resource types")
def list_resource_types(request: Request, principal: Reader, stacks: Service) -> dict[str, Any]:
    q = request.query_params
    names = stacks.registry.names()
    pattern = q.get("name")
    if pattern:
        try:
            names = [n for n in names if re.search(pattern, n)]
        except re.error as exc:
            raise ApiError(
                400, f"Invalid name filter {pattern!r}: {exc}", "HTTPBadRequest"
            ) from None
    support = q.get("support_status")
    if support and support.upper() != "SUPPORTED":
        names = []
    if not bool_param(q.get("with_description", False), "with_description"):
        return {"resource_types": sorted(names)}
    listed = []
    for n in sorted(names):
        plugin = stacks.registry.get(n)
        listed.append({"resource_type": n, "description": description(plugin) if plugin else ""})
    return {"resource_types": listed}


@router.get(
    "/resource_types/{type_name}",
    summary="Show a resource type's schema",
    responses=openapi.heat_errors(404),
)
def show_resource_type(
    request: Request, principal: Reader, stacks: Service, type_name: str
) -> dict[str, Any]:
    plugin = stacks.registry.get(type_name)
    if plugin is None:
        raise NotFound("Resource Type", type_name)
    detail = bool_param(request.query_params.get("with_description", False), "with_description")
    return type_schema(type_name, plugin, with_description=detail)


@router.get(
    "/resource_types/{type_name}/template",
    summary="A template for a resource type",
    responses=openapi.heat_errors(404),
)
def resource_type_template(
    request: Request, principal: Reader, stacks: Service, type_name: str
) -> dict[str, Any]:
    plugin = stacks.registry.get(type_name)
    if plugin is None:
        raise NotFound("Resource Type", type_name)
    kind = request.query_params.get("template_type", "cfn")
    if kind not in ("hot", "cfn"):
        raise ApiError(400, f"Template type is not supported: {kind}", "HTTPBadRequest")
    return generated_template(type_name, plugin, kind)


@router.get("/template_versions", summary="List template versions")
def list_template_versions(principal: Reader) -> dict[str, Any]:
    """Heat's list: the CloudFormation formats (``type: cfn``), then each
    dated HOT version once, its release-name aliases in the same
    ``heat_template_version.<name>`` form it registers them under."""
    versions = [
        {
            "version": v.key,
            "type": v.format,
            "aliases": [f"{v.version_key}.{a}" for a in v.aliases],
        }
        for v in all_versions(cfn=True)
    ]
    return {"template_versions": versions}


@router.get(
    "/template_versions/{version}/functions",
    summary="A version's functions",
    responses=openapi.heat_errors(404),
)
def list_template_functions(request: Request, principal: Reader, version: str) -> dict[str, Any]:
    found = version_by_key(version)
    if found is None:
        raise ApiError(404, f"Template with version {version} not found", "NotFound")
    conditions = bool_param(
        request.query_params.get("with_condition_func", False), "with_condition_func"
    )
    return {"template_functions": function_descriptions(found, with_condition_functions=conditions)}

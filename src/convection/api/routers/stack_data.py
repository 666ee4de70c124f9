"""What a stack was given and what it gives: template, environment,
files, and outputs."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from convection.api import openapi
from convection.api.auth import Reader
from convection.api.errors import ApiError
from convection.api.routers._common import PREFIX, STACK, Service, identified
from convection.common import NotFound

router = APIRouter(prefix=PREFIX + STACK, tags=["stacks"], responses=openapi.heat_errors(404))


@router.get("/template", summary="The stack's template")
def template(principal: Reader, stacks: Service, stack_name: str, stack_id: str) -> dict[str, Any]:
    stack = identified(stacks, principal, stack_name, stack_id)
    return stacks.template(principal.project, stack["id"])


@router.get("/environment", summary="The stack's environment (hidden values masked)")
def environment(
    principal: Reader, stacks: Service, stack_name: str, stack_id: str
) -> dict[str, Any]:
    stack = identified(stacks, principal, stack_name, stack_id)
    return stacks.environment(principal.project, stack["id"])


@router.get("/files", summary="The stack's files map")
def files(principal: Reader, stacks: Service, stack_name: str, stack_id: str) -> dict[str, str]:
    stack = identified(stacks, principal, stack_name, stack_id)
    return stacks.files(principal.project, stack["id"])


@router.get("/outputs", summary="List the stack's outputs")
def list_outputs(
    principal: Reader, stacks: Service, stack_name: str, stack_id: str
) -> dict[str, Any]:
    stack = identified(stacks, principal, stack_name, stack_id)
    found = stacks.outputs(principal.project, stack["id"])
    return {
        "outputs": [
            {"output_key": o["output_key"], "description": o.get("description")} for o in found
        ]
    }


@router.get("/outputs/{output_key}", summary="Show one output")
def show_output(
    principal: Reader, stacks: Service, stack_name: str, stack_id: str, output_key: str
) -> dict[str, Any]:
    stack = identified(stacks, principal, stack_name, stack_id)
    try:
        return {"output": stacks.output(principal.project, stack["id"], output_key)}
    except NotFound:
        raise ApiError(404, f"Specified output key {output_key} not found.", "NotFound") from None

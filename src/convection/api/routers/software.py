"""Heat's software_configs and software_deployments routes.

Bodies and codes as Heat's controllers: create answers 200 with the new
object, delete 204, a missing id 404 ``NotFound`` in Heat's words. The
deployment routes are also the pull agent's: an agent token (narrowed to
one server) may read that server's metadata, list its deployments, and
show and update (report) them; anything else, or another server's
deployment, is the same 403 a missing one gets, so it learns nothing.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, FastAPI, Request, Response
from fastapi.responses import JSONResponse

from convection.api import openapi
from convection.api.auth import (
    Agent,
    DeploymentCaller,
    Principal,
    Reader,
    Writer,
    forbidden,
    require_server,
    require_writer,
)
from convection.api.body import JsonObject
from convection.api.errors import ApiError, fault
from convection.api.routers._common import PREFIX
from convection.common import NotFound
from convection.convergence import deployment_view
from convection.service import ConfigNotFound, DeploymentNotFound, SoftwareService
from convection.store import SoftwareDeploymentRecord

router = APIRouter(prefix=PREFIX, tags=["software"], responses=openapi.heat_errors(400, 404))


def install(app: FastAPI) -> None:
    """Heat answers a missing config or deployment 404 with its ``NotFound``
    class (not ``EntityNotFound``, as for stacks)."""

    async def not_found(request: Request, exc: Exception) -> JSONResponse:
        return fault(404, str(exc), "NotFound")

    app.add_exception_handler(ConfigNotFound, not_found)
    app.add_exception_handler(DeploymentNotFound, not_found)
    app.include_router(router)


def _service(request: Request) -> SoftwareService:
    return SoftwareService(request.app.state.stacks.store)


Software = Annotated[SoftwareService, Depends(_service)]


def _limit(value: str | None) -> int | None:
    if value is None:
        return None
    try:
        limit = int(value)
    except ValueError:
        raise ApiError(400, "Only integer is acceptable by 'limit'.", "HTTPBadRequest") from None
    if limit < 0:
        raise ApiError(400, "Value must be >= 0 for field 'limit'.", "HTTPBadRequest")
    return limit


# -- configs -------------------------------------------------------------------------
@router.get("/software_configs", summary="List software configs")
def list_configs(request: Request, principal: Reader, software: Software) -> dict[str, Any]:
    q = request.query_params
    found = software.list_configs(
        principal.project, limit=_limit(q.get("limit")), marker=q.get("marker")
    )
    return {"software_configs": found}


@router.post("/software_configs", summary="Create a software config")
def create_config(principal: Writer, software: Software, body: JsonObject) -> dict[str, Any]:
    return {"software_config": software.create_config(principal.project, body)}


@router.get("/software_configs/{config_id}", summary="Show a software config")
def show_config(principal: Reader, software: Software, config_id: str) -> dict[str, Any]:
    return {"software_config": software.show_config(principal.project, config_id)}


@router.delete("/software_configs/{config_id}", status_code=204, summary="Delete a config")
def delete_config(principal: Writer, software: Software, config_id: str) -> Response:
    software.delete_config(principal.project, config_id)
    return Response(status_code=204)


# -- deployments ---------------------------------------------------------------------
@router.get("/software_deployments", summary="List software deployments")
def list_deployments(
    request: Request, principal: DeploymentCaller, software: Software
) -> dict[str, Any]:
    server_id = request.query_params.get("server_id")
    if principal.server_id is not None and server_id is None:
        raise forbidden()
    require_server(principal, server_id)
    return {"software_deployments": software.list_deployments(principal.project, server_id)}


@router.post("/software_deployments", summary="Create a software deployment")
def create_deployment(principal: Writer, software: Software, body: JsonObject) -> dict[str, Any]:
    return {"software_deployment": software.create_deployment(principal.project, body)}


@router.get("/software_deployments/metadata/{server_id}", summary="A server's deployment metadata")
def deployment_metadata(principal: Agent, software: Software, server_id: str) -> dict[str, Any]:
    """The configs the server's agent runs (Heat's ``metadata``)."""
    return {"metadata": software.metadata(principal.project, server_id)}


def _visible(
    principal: Principal, software: SoftwareService, deployment_id: str
) -> SoftwareDeploymentRecord:
    """The deployment, if this caller may see it (an agent: its server's)."""
    try:
        row = software.deployment(principal.project, deployment_id)
    except NotFound:
        if principal.server_id is not None:
            raise forbidden() from None
        raise
    require_server(principal, row.server_id)
    return row


@router.get("/software_deployments/{deployment_id}", summary="Show a software deployment")
def show_deployment(
    principal: DeploymentCaller, software: Software, deployment_id: str
) -> dict[str, Any]:
    return {"software_deployment": deployment_view(_visible(principal, software, deployment_id))}


@router.put("/software_deployments/{deployment_id}", summary="Update a software deployment")
def update_deployment(
    principal: DeploymentCaller, software: Software, deployment_id: str, body: JsonObject
) -> dict[str, Any]:
    """Heat's update; the pull agent reports a run's result with it."""
    require_writer(principal)
    _visible(principal, software, deployment_id)
    updated = software.update_deployment(principal.project, deployment_id, body)
    return {"software_deployment": updated}


@router.delete(
    "/software_deployments/{deployment_id}", status_code=204, summary="Delete a deployment"
)
def delete_deployment(principal: Writer, software: Software, deployment_id: str) -> Response:
    software.delete_deployment(principal.project, deployment_id)
    return Response(status_code=204)

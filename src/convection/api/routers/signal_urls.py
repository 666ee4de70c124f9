"""Pre-signed signal URLs: Heat's CFN ``/waitcondition`` and ``/signal``.

Their callers cannot send headers: ``cfn-signal`` PUTs
``{Status, Reason, Data, UniqueId}`` to an AWS WaitConditionHandle's
reference id, an alarm POSTs to a ScalingPolicy's ``alarm_url``, a
deployment's agent to its CFN ``deploy_signal_id``. Heat pre-signs those
URLs with an EC2 keypair; here the URL's ``token`` query parameter is a
token narrowed to the one resource (:mod:`convection.resources.signal_urls`
builds them). The routes accept that token (or an ``X-Auth-Token``) only for
the resource in the path, or a project writer's token, exactly as the
native signal route does, and hand the body to ``Stacks.signal`` as it is:
the resource's plugin checks its format.

The access log never records a query string, so the token in it is not
logged.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Header, Path, Query, Request

from convection.api import openapi
from convection.api.auth import TOKEN_HEADER, Authenticator, Principal, require_signaller
from convection.api.body import JsonAny
from convection.api.errors import ApiError
from convection.api.routers._common import Service, identified
from convection.common import NotFound
from convection.resources import SIGNAL, TOKEN_PARAM, WAITCONDITION

router = APIRouter(
    tags=["signal URLs"],
    responses=openapi.heat_errors(400, 401, 403, 404, 409),
)
#: Any JSON: the resource's plugin reads it (an object, or nothing).
SIGNAL_BODY = openapi.json_any_body("The signal's data: a JSON object")

#: After ``/v1/{kind}``: the resource, named as Heat's URL path names it.
RESOURCE = "/{tenant_id}/stacks/{stack_name}/{stack_id}/resources/{resource_name}"


def _signaller(
    request: Request,
    tenant_id: Annotated[str, Path(description="The project (Heat's tenant id).")],
    stack_id: Annotated[str, Path()],
    resource_name: Annotated[str, Path()],
    query_token: Annotated[str | None, Query(alias=TOKEN_PARAM, include_in_schema=False)] = None,
    header_token: Annotated[str | None, Header(alias=TOKEN_HEADER, include_in_schema=False)] = None,
) -> Principal:
    """The URL's own token for exactly this resource, or a project writer."""
    authenticator: Authenticator = request.app.state.authenticator
    principal = authenticator.authenticate(query_token or header_token, tenant_id)
    request.state.principal = principal
    return require_signaller(principal, stack_id, resource_name)


def _deliver(
    stacks: Service,
    principal: Principal,
    names: tuple[str, str, str],
    body: object,
) -> None:
    stack_name, stack_id, resource_name = names
    stack = identified(stacks, principal, stack_name, stack_id)
    if body is not None and not isinstance(body, dict):
        raise ApiError(400, "The signal data must be a JSON object.", "HTTPBadRequest")
    try:
        stacks.signal(principal.project, stack["id"], resource_name, body or {})
    except NotFound as exc:
        if exc.kind == "Resource":
            raise ApiError(
                404, f"The Resource ({resource_name}) could not be found.", "EntityNotFound"
            ) from None
        raise


#: The caller the URL allows (the path's resource, or a project writer).
UrlSignaller = Annotated[Principal, Depends(_signaller)]


@router.put(
    f"/v1/{WAITCONDITION}{RESOURCE}",
    summary="Signal a wait condition handle (CFN)",
    openapi_extra=SIGNAL_BODY,
)
def put_waitcondition(
    principal: UrlSignaller,
    stacks: Service,
    stack_name: str,
    stack_id: str,
    resource_name: str,
    body: JsonAny,
) -> dict[str, str]:
    """``cfn-signal``'s PUT; Heat answers with the handle's name."""
    _deliver(stacks, principal, (stack_name, stack_id, resource_name), body)
    return {"resource": resource_name}


@router.post(
    f"/v1/{SIGNAL}{RESOURCE}",
    summary="Signal a resource (pre-signed URL)",
    openapi_extra=SIGNAL_BODY,
)
def post_signal(
    principal: UrlSignaller,
    stacks: Service,
    stack_name: str,
    stack_id: str,
    resource_name: str,
    body: JsonAny,
) -> None:
    """An alarm's (or an agent's) POST."""
    _deliver(stacks, principal, (stack_name, stack_id, resource_name), body)

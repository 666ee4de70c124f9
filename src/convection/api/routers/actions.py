"""Heat's stack actions: one key in the body names the action."""

from __future__ import annotations

from fastapi import APIRouter

from convection.api import openapi
from convection.api.auth import Writer
from convection.api.body import JsonObject
from convection.api.errors import ApiError
from convection.api.routers._common import PREFIX, STACK, Service, identified

router = APIRouter(prefix=PREFIX + STACK, tags=["actions"])

ACTIONS = ("suspend", "resume", "check", "cancel_update", "cancel_without_rollback")
#: One key, the action (its value is ignored).
ACTION_BODY = openapi.json_body({name: {} for name in ACTIONS})


@router.post(
    "/actions",
    summary="Suspend, resume, check or cancel an update",
    responses=openapi.heat_errors(400, 404, 409),
    openapi_extra=ACTION_BODY,
)
def stack_action(
    principal: Writer, stacks: Service, stack_name: str, stack_id: str, body: JsonObject
) -> None:
    if not body:
        raise ApiError(400, "No action specified", "HTTPBadRequest")
    if len(body) > 1:
        raise ApiError(400, "Multiple actions specified", "HTTPBadRequest")
    action = next(iter(body))
    if action not in ACTIONS:
        raise ApiError(400, f"Invalid action {action} specified", "HTTPBadRequest")
    stack = identified(stacks, principal, stack_name, stack_id)
    project, sid = principal.project, str(stack["id"])
    if action == "suspend":
        stacks.suspend(project, sid)
    elif action == "resume":
        stacks.resume(project, sid)
    elif action == "check":
        stacks.check(project, sid)
    else:
        stacks.cancel_update(project, sid, rollback=action == "cancel_update")

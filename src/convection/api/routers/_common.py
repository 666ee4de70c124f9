"""What every router needs: the service, and a stack named by its URL."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, Request

from convection.api import openapi
from convection.api.auth import Principal
from convection.api.errors import ApiError
from convection.common import Limits, NotFound
from convection.service import Stacks

#: Heat's prefix of every v1 route.
PREFIX = "/v1/{tenant_id}"
#: Where a stack's own routes hang.
STACK = "/stacks/{stack_name}/{stack_id}"

#: What a create, preview or update body may hold (Heat's ``PARAMS``).
STACK_BODY = openapi.json_body(
    {
        "stack_name": {"type": "string"},
        "template": openapi.OBJECT_OR_TEXT,
        "template_url": {"type": "string"},
        "parameters": {"type": "object"},
        "environment": openapi.OBJECT_OR_TEXT,
        "environment_files": {"type": "array", "items": {"type": "string"}},
        "files": {"type": "object", "additionalProperties": {"type": "string"}},
        "timeout_mins": {"type": "integer", "minimum": 0},
        "disable_rollback": {"type": "boolean"},
        "tags": {"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]},
        "clear_parameters": {"type": "array", "items": {"type": "string"}},
    }
)


def _stacks(request: Request) -> Stacks:
    stacks: Stacks = request.app.state.stacks
    return stacks


Service = Annotated[Stacks, Depends(_stacks)]


def limits(stacks: Stacks) -> Limits:
    return stacks.config.limits


def identified(
    stacks: Stacks, principal: Principal, stack_name: str, stack_id: str
) -> dict[str, Any]:
    """The stack at ``/stacks/{name}/{id}`` (as a list shows it; O(1), it
    reads no template): Heat finds it by id and refuses a name that is not
    the stack's (404, as for no stack)."""
    try:
        stack = stacks.identify(principal.project, stack_id)
    except NotFound:
        raise NotFound("Stack", stack_name) from None
    if stack_name not in (stack["stack_name"], stack["id"]):
        raise NotFound("Stack", stack_name)
    return stack


#: A list filter: query key -> (field of the view, part of its ``ACTION_STATUS``
#: state: 0 the action, 1 the status, None the whole value).
Filters = dict[str, tuple[str, int | None]]


def view_matches(view: dict[str, Any], wanted: dict[str, set[str]], filters: Filters) -> bool:
    """Whether a resource or event view passes Heat's list filters (each
    query key may be repeated: any of its values matches)."""
    for key, values in wanted.items():
        field, part = filters[key]
        value = str(view.get(field) or "")
        if part is not None:
            action, _, status = value.partition("_")
            value = (action, status)[part]
        if value not in values:
            return False
    return True


def bool_param(value: Any, name: str) -> bool:
    """Heat's boolean query and body values (``param_utils.extract_bool``):
    a JSON boolean, or ``true``/``false`` in any case, nothing else."""
    if isinstance(value, bool):
        return value
    text = str(value).lower()
    if text not in ("true", "false"):
        raise ApiError(
            400,
            f'Unrecognized value "{value}" for "{name}", acceptable values are: true, false.',
            "HTTPBadRequest",
        )
    return text == "true"


def int_param(value: str | None, name: str) -> int | None:
    """Heat's non-negative integer query values (``limit``, ``nested_depth``)."""
    if value is None:
        return None
    text = value.strip()
    if not text.lstrip("-").isdigit():
        raise ApiError(400, f"Only integer is acceptable by '{name}'.", "HTTPBadRequest")
    number = int(text)
    if number < 0:
        raise ApiError(
            400,
            f"Value '{value}' is invalid for '{name}' which only accepts non-negative integer.",
            "HTTPBadRequest",
        )
    return number

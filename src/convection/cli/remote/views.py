"""The API's bodies back as the service's dicts.

Heat's API shapes differ from the service's in ways the REST layer owns
(:mod:`convection.api.links`, the routers): it adds ``links``, drops a
stack's ``project``, names a resource's or an event's stack only in its
``stack`` link, adds a resource's template ``description`` on show, lists
events by Heat's summary keys (no ``resource_type``) and sends a missing
physical id as null. Each is undone here, keys in the service's order, so
``-f json`` and ``-f yaml`` print the same document in both modes;
``tests/cli/test_remote_cli.py`` fails if either side drifts.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote, urlsplit

#: :func:`convection.service.views.event_view`'s keys, in its order.
EVENT_KEYS = (
    "id",
    "event_time",
    "resource_name",
    "logical_resource_id",
    "physical_resource_id",
    "resource_type",
    "resource_status",
    "resource_status_reason",
)
#: What the API adds to a resource that the service does not return.
_RESOURCE_EXTRAS = frozenset({"links", "description"})


def stack(body: dict[str, Any], project: str) -> dict[str, Any]:
    """A stack, ``project`` back after ``stack_name``."""
    out: dict[str, Any] = {}
    for key, value in body.items():
        if key in ("links", "project"):
            continue
        out[key] = value
        if key == "stack_name":
            out["project"] = project
    return out


def stack_of(body: dict[str, Any]) -> tuple[str, str]:
    """(name, id) of the stack a resource or event links to."""
    for link in body.get("links") or ():
        if isinstance(link, dict) and link.get("rel") == "stack":
            path = urlsplit(str(link.get("href", ""))).path.rstrip("/")
            name, stack_id = path.split("/")[-2:]
            return unquote(name), unquote(stack_id)
    return "", ""


def resource(body: dict[str, Any]) -> dict[str, Any]:
    """A resource, its ``stack_name`` and ``stack_identity`` back after
    ``updated_time`` (before ``attributes`` and ``parent_resource``)."""
    name, stack_id = stack_of(body)
    out: dict[str, Any] = {}
    for key, value in body.items():
        if key in _RESOURCE_EXTRAS or key in ("stack_name", "stack_identity"):
            continue
        out[key] = value
        if key == "updated_time":
            out.update(stack_name=name, stack_identity=stack_id)
    return out


def event(body: dict[str, Any], resource_type: str) -> dict[str, Any]:
    """An event as :func:`~convection.service.views.event_view` gives it."""
    found = {**body, "resource_type": resource_type}
    found["physical_resource_id"] = found.get("physical_resource_id") or ""
    return {key: found.get(key) for key in EVENT_KEYS}

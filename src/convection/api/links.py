"""Heat's ``links``: every stack, resource and event names its own URL.

Heat builds them from the request's host URL and the stack identity
(``/v1/{tenant}/stacks/{name}/{id}``); clients follow the ``stack`` link
of a nested resource, and the ``Location`` of a redirect must start with
the client's endpoint, so the URLs are absolute.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from fastapi import Request


def stack_url(request: Request, tenant: str, name: str, stack_id: str) -> str:
    base = str(request.base_url).rstrip("/")
    return f"{base}/v1/{quote(tenant, safe='')}/stacks/{quote(name, safe='')}/{stack_id}"


def self_link(href: str) -> dict[str, str]:
    return {"href": href, "rel": "self"}


def with_stack_links(request: Request, tenant: str, stack: dict[str, Any]) -> dict[str, Any]:
    """A stack view with Heat's ``links`` (and its parent's, if nested)."""
    out = dict(stack)
    out.pop("project", None)
    url = stack_url(request, tenant, str(stack["stack_name"]), str(stack["id"]))
    out["links"] = [self_link(url)]
    return out


def with_resource_links(
    request: Request,
    tenant: str,
    resource: dict[str, Any],
    nested: dict[str, str] | None = None,
) -> dict[str, Any]:
    """A resource view as Heat's API shows it: its stack only in ``links``
    (heatclient reads the stack name from the ``stack`` link), and a
    ``nested`` link to ``nested`` (``id``, ``stack_name``), the stack the
    resource owns, if any."""
    out = dict(resource)
    stack_id = str(out.pop("stack_identity", ""))
    url = stack_url(request, tenant, str(out.pop("stack_name", "")), stack_id)
    name = quote(str(out["resource_name"]), safe="")
    links = [self_link(f"{url}/resources/{name}"), {"href": url, "rel": "stack"}]
    if nested is not None:
        child = stack_url(request, tenant, str(nested["stack_name"]), str(nested["id"]))
        links.append({"href": child, "rel": "nested"})
    out["links"] = links
    return out


def with_event_links(
    request: Request, tenant: str, stack_name: str, stack_id: str, event: dict[str, Any]
) -> dict[str, Any]:
    out = dict(event)
    out.pop("stack_identity", None)
    out.pop("stack_name", None)
    # Heat's event has no physical id (null) until the resource has one.
    out["physical_resource_id"] = out.get("physical_resource_id") or None
    url = stack_url(request, tenant, stack_name, stack_id)
    name = quote(str(out.get("resource_name") or stack_name), safe="")
    out["links"] = [
        self_link(f"{url}/resources/{name}/events/{out['id']}"),
        {"href": f"{url}/resources/{name}", "rel": "resource"},
        {"href": url, "rel": "stack"},
    ]
    return out

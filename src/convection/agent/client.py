"""The agent's side of the REST API: three calls, one token.

The token travels only in the ``X-Auth-Token`` header and is never part of
a message, a log line or an exception: errors name the route and status.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import httpx

from convection.common import JSON, ConvectionError

TOKEN_HEADER = "X-Auth-Token"


class AgentHttpError(ConvectionError):
    """The API could not be reached or refused a call."""


def endpoint(url: str, project: str | None) -> str:
    """The project's API root: ``--url`` as os_collect_config gives it
    (``http://host:8004/v1/PROJECT``), or a base URL plus ``--project``."""
    url = url.rstrip("/")
    if "/v1/" in url + "/" and not url.endswith("/v1"):
        return url
    if not project:
        raise AgentHttpError(
            f"--url {url} names no project: give the endpoint from the server's "
            "os_collect_config (http://HOST:PORT/v1/PROJECT) or add --project"
        )
    return f"{url.removesuffix('/v1')}/v1/{project}"


class AgentClient:
    """Calls for one server's deployments, with its narrowed token."""

    def __init__(self, base: str, server_id: str, token: str, *, timeout: float = 30) -> None:
        self.server_id = server_id
        self._http = httpx.Client(base_url=base, headers={TOKEN_HEADER: token}, timeout=timeout)

    def close(self) -> None:
        self._http.close()

    def _call(self, method: str, path: str, body: Mapping[str, Any] | None = None) -> Any:
        try:
            response = self._http.request(method, path, json=body)
        except httpx.HTTPError as exc:
            raise AgentHttpError(f"{method} {path}: {type(exc).__name__}: {exc}") from None
        if response.status_code >= 400:
            raise AgentHttpError(
                f"{method} {path}: HTTP {response.status_code}: {_reason(response)}"
            )
        return response.json()

    def metadata(self) -> list[Mapping[str, JSON]]:
        """The server's configs, each with its inputs' values."""
        found = self._call("GET", f"/software_deployments/metadata/{self.server_id}")
        items = found.get("metadata") if isinstance(found, Mapping) else None
        return [i for i in items or [] if isinstance(i, Mapping)]

    def deployments(self) -> list[Mapping[str, JSON]]:
        """The server's deployments (to find each config's deployment id)."""
        found = self._call("GET", f"/software_deployments?server_id={self.server_id}")
        items = found.get("software_deployments") if isinstance(found, Mapping) else None
        return [i for i in items or [] if isinstance(i, Mapping)]

    def report(self, deployment_id: str, body: Mapping[str, JSON]) -> None:
        """Heat's deployment update: status, reason and output values."""
        self._call("PUT", f"/software_deployments/{deployment_id}", body)


def _reason(response: httpx.Response) -> str:
    try:
        error = response.json().get("error") or {}
        return str(error.get("message") or response.reason_phrase)
    except (ValueError, AttributeError):
        return response.reason_phrase

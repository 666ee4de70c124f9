"""Requests to a server's Heat API, and its errors as the service's own.

Heat answers every error with ``{"code", "title", "explanation", "error":
{"message", "type"}}`` (:mod:`convection.api.errors` builds it from the
service's exceptions). :func:`service_error` turns it back into the
exception the embedded service would have raised, with the same message,
so the CLI prints the same line and exits with the same code in both
modes. The token goes in ``X-Auth-Token`` and nowhere else: no message
built here contains it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any
from urllib.parse import quote, unquote, urlsplit

import httpx

from convection.common import (
    Conflict,
    ConvectionError,
    Diagnostic,
    InvalidInput,
    LimitExceeded,
    NotFound,
)

TOKEN_HEADER = "X-Auth-Token"
#: Seconds for one request; a create's body is read and compiled within it.
TIMEOUT = 120.0

Params = Sequence[tuple[str, str]]

_NOT_FOUND = re.compile(r"^The (?P<kind>.+?) \((?P<name>.*)\) could not be found\.$", re.S)
#: Heat's classes of a ``Conflict`` (409, or 400 for the not-supported ones).
_CONFLICTS = frozenset(
    {"StackExists", "ActionInProgress", "NotSupported", "ResourceActionNotSupported", "Conflict"}
)


class ServerNotFound(NotFound):
    """A 404 whose message is not the service's "The X (y) could not be found."."""

    def __init__(self, message: str) -> None:
        ConvectionError.__init__(self, message)
        self.kind = "resource"
        self.name = ""


def service_error(status: int, body: Any) -> ConvectionError:
    """The service's exception for a Heat error answer."""
    error = body.get("error") if isinstance(body, dict) else None
    error = error if isinstance(error, dict) else {}
    message = str(error.get("message") or (body.get("title") if isinstance(body, dict) else ""))
    kind = str(error.get("type") or "")
    if status == 404:
        found = _NOT_FOUND.match(message)
        return NotFound(found["kind"], found["name"]) if found else ServerNotFound(message)
    if kind == "RequestLimitExceeded":
        return LimitExceeded(_diagnostics(message))
    if kind in ("StackValidationFailed", "HTTPBadRequest"):
        return InvalidInput(_diagnostics(message))
    if kind in _CONFLICTS or status == 409:
        return Conflict(message)
    if status in (401, 403):
        return refused(status, message)
    return unexpected(status, message)


def refused(status: int, message: str) -> ConvectionError:
    """A refused token or project (401, 403), worded the same for every API."""
    return ConvectionError(
        f"The server refused the request ({status}): {message} "
        "Check --token (CONVECTION_TOKEN) and --project."
    )


def unexpected(status: int, message: str) -> ConvectionError:
    return ConvectionError(f"The server answered {status}: {message or 'no explanation'}")


def _diagnostics(message: str) -> list[Diagnostic]:
    """The server sends each diagnostic as ``str(d)`` on its own line; a
    line printed as a diagnostic's message reads exactly as ``d`` did."""
    return [Diagnostic(line) for line in message.splitlines() if line.strip()] or [
        Diagnostic(message or "invalid input")
    ]


#: Turns an error answer (status, JSON body) into the service's exception.
ErrorMap = Callable[[int, Any], ConvectionError]


class ServerClient:
    """One HTTP connection pool to a server, for one CLI invocation; error
    answers are read by ``errors`` (Heat's by default; Mistral's ``/v2``
    has a body of its own, :mod:`.mistral`)."""

    def __init__(
        self,
        url: str,
        token: str | None,
        *,
        timeout: float = TIMEOUT,
        errors: ErrorMap = service_error,
    ) -> None:
        headers = {"Accept": "application/json", "User-Agent": "convection-cli"}
        if token:
            headers[TOKEN_HEADER] = token
        self.url = url
        self._errors = errors
        self._http = httpx.Client(base_url=url, headers=headers, timeout=timeout)

    def close(self) -> None:
        self._http.close()

    def call(
        self,
        method: str,
        path: str,
        *,
        body: Mapping[str, Any] | None = None,
        params: Params = (),
        text: str | None = None,
        headers: Mapping[str, str] | None = None,
        errors: ErrorMap | None = None,
    ) -> Any:
        """Send a request (a JSON ``body``, or ``text`` as ``text/plain``);
        the answer's JSON (None when it has no body), or the service's
        exception for an error answer (``errors`` for this call only)."""
        response = self._send(method, path, body, params, text=text, headers=headers)
        if response.status_code >= 400:
            read = errors or self._errors
            raise read(response.status_code, self._json(response, quiet=True))
        if not response.content:
            return None
        return self._json(response, quiet=False)

    def locate(self, project: str, name_or_id: str) -> str:
        """Heat's stack lookup: the path ``/stacks/NAME/ID`` of a stack given
        by name or id (the server answers 302 to it)."""
        path = f"{prefix(project)}/stacks/{quote(name_or_id, safe='')}"
        response = self._send("GET", path, None, ())
        if response.status_code >= 400:
            raise self._errors(response.status_code, self._json(response, quiet=True))
        location = response.headers.get("location")
        if response.status_code != 302 or not location:
            raise ConvectionError(f"The server at {self.url} did not redirect a stack lookup.")
        name, stack_id = urlsplit(location).path.rstrip("/").split("/")[-2:]
        return stack_path(project, unquote(name), unquote(stack_id))

    def _send(
        self,
        method: str,
        path: str,
        body: Mapping[str, Any] | None,
        params: Params,
        *,
        text: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> httpx.Response:
        sent = dict(headers or {})
        if text is not None:
            sent["Content-Type"] = "text/plain"
        content = None if text is None else text.encode("utf-8")
        try:
            return self._http.request(
                method, path, json=body, content=content, params=list(params), headers=sent
            )
        except httpx.TimeoutException:
            raise ConvectionError(f"The server at {self.url} did not answer in time.") from None
        except httpx.HTTPError as exc:
            raise ConvectionError(f"Cannot reach the server at {self.url}: {exc}") from None

    def _json(self, response: httpx.Response, *, quiet: bool) -> Any:
        try:
            return response.json()
        except ValueError:
            if quiet:
                return {"error": {"message": response.reason_phrase}}
            raise ConvectionError(
                f"The server at {self.url} answered {response.status_code} with a body "
                "that is not JSON; is --url a Convection (Heat API) server?"
            ) from None


def prefix(project: str) -> str:
    """Heat's ``/v1/{tenant_id}``."""
    return f"/v1/{quote(project, safe='')}"


def stack_path(project: str, name: str, stack_id: str) -> str:
    return f"{prefix(project)}/stacks/{quote(name, safe='')}/{quote(stack_id, safe='')}"

"""Heat's error bodies and status codes.

Heat's fault middleware answers every error with::

    {"code": 404, "title": "Not Found", "explanation": "...",
     "error": {"message": "...", "type": "EntityNotFound", "traceback": null}}

where ``title`` and ``explanation`` are webob's for the status, ``type``
names Heat's exception class and ``message`` is the exception's text.
:class:`ApiError` carries those fields; :func:`install` maps the service's
exceptions onto Heat's classes so clients that look at ``type`` (as
heatclient's ``exc.from_response`` does at ``code``) see what Heat sends.
No traceback is ever returned; an unexpected failure is logged and
answered with a plain 500.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match

from convection.api import openapi
from convection.common import (
    ActionInProgress,
    Conflict,
    ConvectionError,
    InvalidInput,
    LimitExceeded,
    NotFound,
    NotSupported,
    ResourceActionNotSupported,
    ResourceNotAvailable,
    ResourceNotFound,
    StackExists,
)

log = logging.getLogger("convection.api")

#: webob's title and explanation for each status Heat answers with.
STATUS_TEXT: dict[int, tuple[str, str]] = {
    400: (
        "Bad Request",
        "The server could not comply with the request since it is either malformed "
        "or otherwise incorrect.",
    ),
    401: (
        "Unauthorized",
        "This server could not verify that you are authorized to access the document "
        "you requested. Either you supplied the wrong credentials (e.g., bad password), "
        "or your browser does not understand how to supply the credentials required.",
    ),
    403: ("Forbidden", "Access was denied to this resource."),
    404: ("Not Found", "The resource could not be found."),
    405: ("Method Not Allowed", "The method is not allowed for this resource."),
    409: ("Conflict", "There was a conflict when trying to complete your request."),
    413: ("Request Entity Too Large", "The body of your request was too large for this server."),
    429: (
        "Too Many Requests",
        "The client has sent too many requests in a given amount of time.",
    ),
    415: ("Unsupported Media Type", "The request media type is not supported by this server."),
    500: (
        "Internal Server Error",
        "The server has either erred or is incapable of performing the requested operation.",
    ),
}

#: Heat's status and exception class for each of the service's typed
#: errors, most specific first (``classify`` takes the first match).
_TYPED: tuple[tuple[type[ConvectionError], int, str], ...] = (
    (ResourceNotFound, 404, "ResourceNotFound"),
    (StackExists, 409, "StackExists"),
    (ActionInProgress, 409, "ActionInProgress"),
    (ResourceNotAvailable, 404, "ResourceNotAvailable"),
    (ResourceActionNotSupported, 400, "ResourceActionNotSupported"),
    (NotSupported, 400, "NotSupported"),
    (Conflict, 409, "Conflict"),
)


class ApiError(Exception):
    """An error answered as Heat answers it: status ``code``, Heat's
    exception class name ``type`` and the ``message`` a user reads."""

    def __init__(self, code: int, message: str, type_: str | None = None) -> None:
        self.code = code
        self.message = message
        self.type = type_ or f"HTTP{STATUS_TEXT.get(code, ('Error', ''))[0].replace(' ', '')}"
        super().__init__(message)

    def __repr__(self) -> str:
        return f"ApiError({self.code}, {self.message!r}, type={self.type!r})"


def fault_body(code: int, message: str, type_: str) -> dict[str, Any]:
    title, explanation = STATUS_TEXT.get(code, (str(code), ""))
    return {
        "code": code,
        "title": title,
        "explanation": explanation,
        "error": {"message": message, "type": type_, "traceback": None},
    }


def fault(
    code: int, message: str, type_: str, headers: Mapping[str, str] | None = None
) -> JSONResponse:
    return JSONResponse(fault_body(code, message, type_), status_code=code, headers=headers)


def classify(exc: ConvectionError) -> ApiError:
    """The status and Heat class for one of the service's errors."""
    for cls, code, kind in _TYPED:
        if isinstance(exc, cls):
            return ApiError(code, str(exc), kind)
    if isinstance(exc, NotFound):
        kind = "ResourceTypeNotFound" if exc.kind == "Resource Type" else "EntityNotFound"
        return ApiError(404, str(exc), kind)
    if isinstance(exc, LimitExceeded):
        return ApiError(400, _diagnostics_text(exc), "RequestLimitExceeded")
    if isinstance(exc, InvalidInput):
        return ApiError(400, _diagnostics_text(exc), "StackValidationFailed")
    return ApiError(400, str(exc), "StackValidationFailed")


def _diagnostics_text(exc: InvalidInput) -> str:
    """Every error, one per line, each with its ``file:line:column`` and path."""
    lines = [str(d) for d in exc.diagnostics]
    return "\n".join(lines) if lines else str(exc)


def install(app: FastAPI) -> None:
    """Answer every error with Heat's body (and have ``/openapi.json`` say
    so: :func:`convection.api.openapi.install`)."""

    async def api_error(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, ApiError)
        return fault(exc.code, exc.message, exc.type)

    async def service_error(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, ConvectionError)
        err = classify(exc)
        return fault(err.code, err.message, err.type)

    async def http_error(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, StarletteHTTPException)
        message = exc.detail if isinstance(exc.detail, str) else str(exc.detail)
        kind = "HTTP" + STATUS_TEXT.get(exc.status_code, ("Error", ""))[0].replace(" ", "")
        headers = dict(exc.headers or {})
        if exc.status_code == 405:
            headers["Allow"] = ",".join(allowed_methods(request))
        return fault(exc.status_code, message, kind, headers=headers or None)

    async def invalid_request(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RequestValidationError)
        problems = "; ".join(_validation_problem(e) for e in exc.errors())
        return fault(400, problems or "Invalid request", "HTTPBadRequest")

    async def unexpected(request: Request, exc: Exception) -> JSONResponse:
        log.exception("unexpected error in %s %s", request.method, request.url.path)
        return fault(500, f"{type(exc).__name__}: an internal error occurred", "InternalError")

    app.add_exception_handler(ApiError, api_error)
    app.add_exception_handler(ConvectionError, service_error)
    app.add_exception_handler(StarletteHTTPException, http_error)
    app.add_exception_handler(RequestValidationError, invalid_request)
    app.add_exception_handler(Exception, unexpected)
    openapi.install(app)


def allowed_methods(request: Request) -> list[str]:
    """Every method some route serves at the request's path: Heat's
    ``Allow`` on a 405 (Starlette names only the first route's)."""
    routes = request.app.router.routes
    return [
        method
        for method in ("GET", "POST", "PUT", "PATCH", "DELETE")
        if any(r.matches({**request.scope, "method": method})[0] == Match.FULL for r in routes)
    ]


def _validation_problem(error: Any) -> str:
    where = ".".join(str(p) for p in error.get("loc", ()) if p not in ("query", "path"))
    return f"{where}: {error.get('msg', 'invalid')}" if where else str(error.get("msg"))

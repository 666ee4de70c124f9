"""What ``/openapi.json`` says of each route beyond what FastAPI infers:
its error statuses with Heat's or Mistral's fault body, and the request
bodies the routes read themselves (``body.read_object``, ``/v2``'s text
and JSON readers are dependencies, so FastAPI sees no body).

Routers declare their statuses with :func:`heat_errors` and
:func:`mistral_errors` (FastAPI's ``responses=``) and their bodies with
:func:`json_body` and :func:`text_body` (``openapi_extra=``). :func:`install`
corrects the one thing FastAPI adds on its own: a 422 for every route with
parameters, which this app never sends (a request that fails validation
is Heat's or Mistral's 400, ``errors.install``); and every operation under
``/v1/{tenant_id}`` is given the 401 and 403 of the token check its
``tenant_id`` comes from. ``tests/api/test_schemathesis.py`` holds the
document to what the server answers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from fastapi import FastAPI

#: webob's reason phrase for each error status the APIs answer with.
_REASONS: Final = {
    400: "Bad Request: the body, a parameter or the template is invalid",
    401: "Unauthorized: no valid X-Auth-Token",
    403: "Forbidden: the token is not for this project, or its role may not do this",
    404: "Not Found",
    405: "Method Not Allowed",
    409: "Conflict: the name is taken, or the stack or execution is busy",
    413: "Request Entity Too Large",
}

#: Heat's fault body (``heat/api/middleware/fault.py``).
HEAT_FAULT: Final[dict[str, Any]] = {
    "type": "object",
    "title": "HeatFault",
    "required": ["code", "title", "explanation", "error"],
    "properties": {
        "code": {"type": "integer"},
        "title": {"type": "string"},
        "explanation": {"type": "string"},
        "error": {
            "type": "object",
            "required": ["message", "type", "traceback"],
            "properties": {
                "message": {"type": "string"},
                "type": {"type": "string"},
                "traceback": {"type": "null"},
            },
        },
    },
}
#: Mistral's fault body (``mistral/utils/rest_utils.py``).
MISTRAL_FAULT: Final[dict[str, Any]] = {
    "type": "object",
    "title": "MistralFault",
    "required": ["faultcode", "faultstring", "debuginfo"],
    "properties": {
        "faultcode": {"type": "string", "enum": ["Client", "Server"]},
        "faultstring": {"type": "string"},
        "debuginfo": {"type": "null"},
    },
}

Responses = dict[int | str, dict[str, Any]]


def _errors(schema: dict[str, Any], codes: tuple[int, ...]) -> Responses:
    return {
        code: {
            "description": _REASONS.get(code, "Error"),
            "content": {"application/json": {"schema": schema}},
        }
        for code in codes
    }


def heat_errors(*codes: int) -> Responses:
    """``responses=`` for these statuses, each with Heat's fault body."""
    return _errors(HEAT_FAULT, codes)


def mistral_errors(*codes: int) -> Responses:
    """``responses=`` for these statuses, each with Mistral's fault body."""
    return _errors(MISTRAL_FAULT, codes)


def no_content(code: int, description: str) -> Responses:
    """A status answered with an empty body (FastAPI would say JSON)."""
    return {code: {"description": description, "content": {}}}


def redirect(description: str, code: int = 302) -> Responses:
    """A redirect (Heat's lookups: a 302 to the stack's own URL)."""
    return {
        code: {
            "description": description,
            "headers": {"Location": {"schema": {"type": "string"}}},
            "content": {},
        }
    }


def json_body(
    properties: dict[str, Any] | None = None, *, required: tuple[str, ...] = ()
) -> dict[str, Any]:
    """``openapi_extra=`` for a route reading a JSON object body itself
    (other keys are ignored by the route, so they are allowed)."""
    schema: dict[str, Any] = {"type": "object", "properties": properties or {}}
    if required:
        schema["required"] = list(required)
    return {
        "requestBody": {
            "required": bool(required),
            "content": {"application/json": {"schema": schema}},
        }
    }


def json_any_body(description: str) -> dict[str, Any]:
    """``openapi_extra=`` for a route taking any JSON (a signal's data)."""
    return {
        "requestBody": {
            "required": False,
            "description": description,
            "content": {"application/json": {"schema": {}}},
        }
    }


def text_body(description: str) -> dict[str, Any]:
    """``openapi_extra=`` for Mistral's ``text/plain`` YAML definitions."""
    return {
        "requestBody": {
            "required": True,
            "description": description,
            "content": {"text/plain": {"schema": {"type": "string"}}},
        }
    }


def query(**params: dict[str, Any]) -> dict[str, Any]:
    """``openapi_extra=`` for query arguments a route reads itself (from
    ``request.query_params``): each name with its JSON schema."""
    return {
        "parameters": [
            {"name": name, "in": "query", "required": False, "schema": schema}
            for name, schema in params.items()
        ]
    }


INTEGER: Final[dict[str, Any]] = {"type": "integer", "minimum": 0}
BOOLEAN: Final[dict[str, Any]] = {"type": "boolean"}
STRING: Final[dict[str, Any]] = {"type": "string"}
SORT_DIR: Final[dict[str, Any]] = {"type": "string", "enum": ["asc", "desc"]}

#: JSON fields Heat takes as an object or as a JSON or YAML string.
OBJECT_OR_TEXT: Final[dict[str, Any]] = {"anyOf": [{"type": "object"}, {"type": "string"}]}


def install(app: FastAPI) -> None:
    """Serve the document with :func:`correct` applied (once, then cached
    as FastAPI caches its own)."""
    generate: Callable[[], dict[str, Any]] = app.openapi

    def document() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = correct(generate())
        return app.openapi_schema

    app.openapi = document  # type: ignore[method-assign]


def correct(document: dict[str, Any]) -> dict[str, Any]:
    """FastAPI's 422s go (the routes declare the 400s they send instead);
    every ``/v1/{tenant_id}`` operation declares the token check's 401
    and 403."""
    for path, operations in document.get("paths", {}).items():
        fault = MISTRAL_FAULT if path.startswith("/v2") else HEAT_FAULT
        for operation in operations.values():
            responses: dict[str, Any] = operation.setdefault("responses", {})
            responses.pop("422", None)
            if path.startswith("/v1/{tenant_id}/"):
                for code, response in _errors(fault, (401, 403)).items():
                    responses.setdefault(str(code), response)
    # Only the 422s used FastAPI's validation bodies, and none is left.
    schemas = document.get("components", {}).get("schemas", {})
    for name in ("HTTPValidationError", "ValidationError"):
        schemas.pop(name, None)
    return document

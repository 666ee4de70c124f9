"""Reading JSON request bodies, within Heat's ``max_json_body_size``.

A body is read as it arrives and refused as soon as it passes the limit
(a declared ``Content-Length`` over it is refused before reading), so a
client cannot make the server hold more than the limit in memory. Heat
answers both a too-large and a malformed body with 400 and its message.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

from fastapi import Depends, Request

from convection.api.errors import ApiError
from convection.api.settings import ApiSettings


def _too_large(size: int | str, limit: int) -> str:
    return f"JSON body size ({size} bytes) exceeds maximum allowed size ({limit} bytes)."


class BodyTooLarge(Exception):
    """A body over ``max_json_body_size``; the message is Heat's."""


async def read_body(request: Request) -> bytes:
    """The request's body, read only while it is within the limit: raises
    :class:`BodyTooLarge` (each API answers it in its own format)."""
    settings: ApiSettings = request.app.state.api_settings
    limit = settings.max_json_body_size
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise BodyTooLarge(_too_large(declared, limit))
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge(_too_large(f"more than {limit}", limit))
        chunks.append(chunk)
    return b"".join(chunks)


async def read_json(request: Request) -> Any:
    """The request's JSON body (None when empty)."""
    try:
        raw = await read_body(request)
    except BodyTooLarge as exc:
        raise ApiError(400, str(exc), "RequestLimitExceeded") from None
    if not raw.strip():
        return None
    try:
        return json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ApiError(400, f"Malformed JSON body: {exc}", "HTTPBadRequest") from None


async def read_object(request: Request) -> dict[str, Any]:
    """A JSON object body; an empty body is ``{}``."""
    data = await read_json(request)
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ApiError(400, "The request body must be a JSON object.", "HTTPBadRequest")
    return data


#: A route's JSON object body.
JsonObject = Annotated[dict[str, Any], Depends(read_object)]
#: A route's JSON body of any shape (a signal's data).
JsonAny = Annotated[Any, Depends(read_json)]

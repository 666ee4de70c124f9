"""One structured JSON line per request, and Heat's request id header.

A pure ASGI middleware (no buffering of bodies). The line holds the
method, the path (never the query string or a body, which may carry
parameter values), the status, the duration and the request id that is
also returned as ``x-openstack-request-id``, as Heat's request_id
middleware returns it, so a client's report can be matched to a line.
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from datetime import UTC, datetime
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

access = logging.getLogger("convection.api.access")

REQUEST_ID_HEADER = b"x-openstack-request-id"


class AccessLog:
    def __init__(self, app: ASGIApp, *, enabled: bool = True) -> None:
        self.app = app
        self.enabled = enabled

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id = f"req-{uuid.uuid4()}"
        scope.setdefault("state", {})["request_id"] = request_id
        started = time.perf_counter()
        status = 500

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
                headers = list(message.get("headers", []))
                headers.append((REQUEST_ID_HEADER, request_id.encode()))
                message = {**message, "headers": headers}
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        finally:
            if self.enabled:
                access.info(json.dumps(_line(scope, status, started, request_id)))


def _line(scope: Scope, status: int, started: float, request_id: str) -> dict[str, Any]:
    client = scope.get("client")
    return {
        "time": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
        "kind": "access",
        "request_id": request_id,
        "method": scope.get("method"),
        "path": scope.get("path"),
        "status": status,
        "duration_ms": round((time.perf_counter() - started) * 1000, 2),
        "client": client[0] if client else None,
    }

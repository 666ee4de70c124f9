"""Requests per token: a token bucket for each credential.

One leaked or runaway token must not be able to starve the API (and the
store behind it) for everyone else. A pure ASGI middleware, so it costs
no body buffering and answers before any route, or any store read, runs.

The bucket is keyed by the SHA-256 of the credential presented
(``X-Auth-Token``, or a signal URL's ``token`` parameter): one key per
token, as its id would be, without a store read to learn the id.
Requests without a credential (``/healthz``, the dashboard, whose token
is inside its session cookie) are not counted here. Over the limit, the
answer is 429 with ``Retry-After``, in Heat's fault body on ``/v1`` and
Mistral's on ``/v2``. The buckets live in this process: each server
limits what reaches it.
"""

from __future__ import annotations

import hashlib
import json
import math
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Final
from urllib.parse import parse_qs

from starlette.types import ASGIApp, Receive, Scope, Send

from convection.api.auth import TOKEN_HEADER
from convection.api.errors import fault_body
from convection.resources import TOKEN_PARAM

#: The most buckets kept; the least recently used is dropped beyond it
#: (a dropped bucket starts full again, which only errs on the side of
#: the caller).
MAX_BUCKETS: Final = 100_000
_HEADER: Final = TOKEN_HEADER.lower().encode("latin-1")
MESSAGE: Final = "Too many requests for this token: slow down and retry later."


@dataclass(slots=True)
class _Bucket:
    tokens: float
    at: float


class Buckets:
    """Token buckets: ``rate`` requests a second, ``burst`` at once."""

    def __init__(self, rate: float, burst: int) -> None:
        self.rate = rate
        self.burst = max(burst, 1)
        self._buckets: OrderedDict[str, _Bucket] = OrderedDict()

    def take(self, key: str, now: float) -> float:
        """0 if a request may go now (and count it); else the seconds
        until one may."""
        bucket = self._buckets.pop(key, None) or _Bucket(float(self.burst), now)
        bucket.tokens = min(self.burst, bucket.tokens + (now - bucket.at) * self.rate)
        bucket.at = now
        self._buckets[key] = bucket
        if len(self._buckets) > MAX_BUCKETS:
            self._buckets.popitem(last=False)
        if bucket.tokens >= 1:
            bucket.tokens -= 1
            return 0.0
        return (1 - bucket.tokens) / self.rate


def credential(scope: Scope) -> str | None:
    """The token a request presents, if any (header first, as the routes read it)."""
    for name, value in scope.get("headers", ()):
        if name == _HEADER and value:
            return bytes(value).decode("latin-1")
    query = parse_qs(bytes(scope.get("query_string", b"")).decode("latin-1"))
    found = query.get(TOKEN_PARAM)
    return found[0] if found and found[0] else None


def _refusal(path: str, wait: float) -> tuple[bytes, list[tuple[bytes, bytes]]]:
    """The 429's body, in the API's own dialect, and its headers."""
    if path == "/v2" or path.startswith("/v2/"):
        body: dict[str, object] = {"faultcode": "Client", "faultstring": MESSAGE, "debuginfo": None}
    else:
        body = fault_body(429, MESSAGE, "HTTPTooManyRequests")
    raw = json.dumps(body).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(raw)).encode()),
        (b"retry-after", str(max(1, math.ceil(wait))).encode()),
    ]
    return raw, headers


class RateLimit:
    """The middleware; ``rate`` 0 (the default setting) lets all through."""

    def __init__(self, app: ASGIApp, *, rate: float = 0.0, burst: int = 1) -> None:
        self.app = app
        self.buckets = Buckets(rate, burst) if rate > 0 else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        secret = credential(scope) if self.buckets and scope["type"] == "http" else None
        if self.buckets is None or secret is None:
            await self.app(scope, receive, send)
            return
        key = hashlib.sha256(secret.encode("utf-8", "replace")).hexdigest()
        wait = self.buckets.take(key, time.monotonic())
        if wait == 0:
            await self.app(scope, receive, send)
            return
        raw, headers = _refusal(str(scope.get("path", "")), wait)
        await send({"type": "http.response.start", "status": 429, "headers": headers})
        await send({"type": "http.response.body", "body": raw})

"""Server-sent events: a page follows a stack or an execution live.

The browser opens one ``EventSource`` and never polls. This side reads
what changed since the last message at most four times a second and
sends it as one coalesced message (the latest state of each resource or
task, not every step), so a 10,000-resource create costs the page a few
redraws a second, not thousands.

A stack's messages carry the id of the newest event they include, so a
dropped connection resumes exactly where it stopped: the browser sends
``Last-Event-ID`` and the stream continues from that event. An
execution's stream keeps no log to resume from: a new connection sends
every task's state first, then what changes.

Each stream checks its session again every few seconds, so revoking the
token ends it; the count of open streams is bounded per server.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import anyio
from fastapi import Request
from sse_starlette import EventSourceResponse, ServerSentEvent

from convection.common import NotFound

#: Seconds between reads of what changed (a change reaches the page in
#: at most this plus the time to draw it).
TICK = 0.25
#: Seconds between checks that the session is still valid.
RECHECK = 5.0
#: Open streams per server: each holds a connection and a thread per tick.
MAX_STREAMS = 256
#: Seconds between keep-alive comments (proxies drop idle connections).
PING = 15

Step = Callable[[], tuple[dict[str, Any] | None, str | None]]


class Streams:
    """The open streams of one server."""

    def __init__(self, limit: int = MAX_STREAMS) -> None:
        self.limit = limit
        self.open = 0

    def full(self) -> bool:
        return self.open >= self.limit


def respond(
    request: Request, streams: Streams, step: Step, still_allowed: Callable[[], bool]
) -> EventSourceResponse:
    """A stream of ``changes`` messages, one per tick that has any."""
    return EventSourceResponse(_messages(request, streams, step, still_allowed), ping=PING)


async def _messages(
    request: Request, streams: Streams, step: Step, still_allowed: Callable[[], bool]
) -> AsyncIterator[ServerSentEvent]:
    streams.open += 1
    checked = time.monotonic()
    try:
        while not await request.is_disconnected():
            if time.monotonic() - checked > RECHECK:
                checked = time.monotonic()
                if not await anyio.to_thread.run_sync(still_allowed):
                    yield ServerSentEvent(event="signed-out", data="{}")
                    return
            try:
                message, cursor = await anyio.to_thread.run_sync(step)
            except NotFound:
                yield ServerSentEvent(event="gone", data="{}")
                return
            behind = message is not None and bool(message.get("backlog"))
            if message is not None:
                yield ServerSentEvent(
                    event=str(message.pop("event", "changes")),
                    id=cursor,
                    data=json.dumps(message, separators=(",", ":")),
                )
            await anyio.sleep(0 if behind else TICK)
    finally:
        streams.open -= 1

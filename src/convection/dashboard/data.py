"""``/ui/api``: the JSON the page's script draws, and the streams it follows.

Same-origin, cookie-authenticated reads: they change nothing, so they
need no CSRF value (SameSite=Strict keeps other sites from reading them
with the session anyway, and they answer JSON that a ``<script>`` cannot
include).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from typing import Any

from fastapi import APIRouter, Header, Request, Response
from fastapi.responses import JSONResponse

from convection.common import NotFound
from convection.dashboard.context import DATA_PREFIX, DashboardRoute, SignedIn
from convection.dashboard.live import respond
from convection.dashboard.stack_data import (
    list_changes,
    resource_detail,
    stack_changes,
    stack_graph,
)
from convection.dashboard.workflow_data import execution_changes, execution_graph, workflow_view

router = APIRouter(prefix=DATA_PREFIX, route_class=DashboardRoute, include_in_schema=False)

Body = dict[str, Any]
#: Longest ``Last-Event-ID``/``after`` value taken (an event id is a uuid).
MAX_CURSOR = 64


@router.get("/stacks/stream")
def stacks_stream(request: Request, caller: SignedIn) -> Response:
    """The list page's changes (the first message has every stack)."""
    sent: dict[str, tuple[str, str]] = {}
    return _state_stream(request, caller, lambda: list_changes(caller.stacks, caller.project, sent))


@router.get("/stacks/{stack_id}/graph")
def stack_graph_data(caller: SignedIn, stack_id: str) -> Response:
    found = stack_graph(caller.stacks, caller.project, stack_id)
    return _json({**found, "can_write": _writes(caller)})


@router.get("/stacks/{stack_id}/resources/{name}")
def resource_data(caller: SignedIn, stack_id: str, name: str) -> Body:
    return resource_detail(caller.stacks, caller.project, stack_id, name)


@router.get("/stacks/{stack_id}/stream")
def stack_stream(
    request: Request,
    caller: SignedIn,
    stack_id: str,
    after: str | None = None,
    last_event_id: str | None = Header(default=None),
) -> Response:
    if caller.dashboard.streams.full():
        return _busy()
    stack = caller.stacks.identify(caller.project, stack_id)
    state: dict[str, Any] = {"cursor": _cursor(last_event_id or after), "status": None}

    def step() -> tuple[Body | None, str | None]:
        try:
            message, cursor = stack_changes(
                caller.stacks, caller.project, stack["id"], state["cursor"], state["status"]
            )
        except NotFound as exc:
            if exc.kind != "Event":
                raise
            # The event resumed from is gone (the stack was purged or
            # re-created): start again from now, and let the page reload.
            recent = caller.stacks.recent_events(caller.project, stack["id"], 1)
            state["cursor"] = recent[-1]["id"] if recent else None
            return {"event": "reload"}, state["cursor"]
        state["cursor"] = cursor
        if message is not None and message["stack"] is not None:
            state["status"] = message["stack"]["status"]
        return message, cursor

    return respond(request, caller.dashboard.streams, step, caller.still_allowed)


@router.get("/workflows/{workflow_id}/graph")
def workflow_graph_data(caller: SignedIn, workflow_id: str) -> Body:
    return workflow_view(caller.store, caller.project, workflow_id)


@router.get("/executions/{execution_id}/graph")
def execution_graph_data(caller: SignedIn, execution_id: str) -> Body:
    return {
        **execution_graph(caller.store, caller.project, execution_id),
        "can_write": _writes(caller),
    }


@router.get("/executions/{execution_id}/stream")
def execution_stream(request: Request, caller: SignedIn, execution_id: str) -> Response:
    """Each task's state first, then what changes (no log to resume from:
    a new connection starts with the whole state again)."""
    execution_graph(caller.store, caller.project, execution_id)  # 404 before streaming
    sent: dict[str, Body] = {}
    return _state_stream(
        request, caller, lambda: execution_changes(caller.store, caller.project, execution_id, sent)
    )


def _state_stream(
    request: Request, caller: SignedIn, changes: Callable[[], Body | None]
) -> Response:
    """A stream of what ``changes`` finds at each tick, numbered."""
    if caller.dashboard.streams.full():
        return _busy()
    counter = itertools.count(1)

    def step() -> tuple[Body | None, str | None]:
        message = changes()
        return (None, None) if message is None else (message, str(next(counter)))

    return respond(request, caller.dashboard.streams, step, caller.still_allowed)


def _busy() -> Response:
    return JSONResponse({"error": "Too many live pages open; try later."}, status_code=503)


def _json(body: Body) -> Response:
    """Plain JSON: a 10,000-node graph is 4x quicker to write this way than
    through FastAPI's ``jsonable_encoder`` (the body holds only JSON types)."""
    return Response(json.dumps(body, separators=(",", ":")), media_type="application/json")


def _writes(caller: SignedIn) -> bool:
    return caller.identity.can_write


def _cursor(value: str | None) -> str | None:
    if value is None or not value.strip() or len(value) > MAX_CURSOR:
        return None
    return value.strip()

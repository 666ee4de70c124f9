"""The app factory: routers, Heat's error bodies, the access log, and the
engine's lifetime tied to the app's."""

from __future__ import annotations

import asyncio
import os
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI

from convection import dashboard
from convection.api import errors, metrics
from convection.api.access_log import AccessLog
from convection.api.auth import Authenticator, OpenAccess
from convection.api.engine_thread import EngineThread
from convection.api.ratelimit import RateLimit
from convection.api.routers import (
    actions,
    events,
    resources,
    service_info,
    signal_urls,
    software,
    stack_data,
    stacks,
    templates,
    v2,
)
from convection.api.settings import ApiSettings
from convection.kernel import beat
from convection.service import Stacks
from convection.store import listens

#: Order matters only where paths overlap: stack routes first, so
#: ``/stacks/preview`` and ``/stacks/detail`` are not taken for names.
ROUTERS = (
    signal_urls.router,  # /v1/signal/..., /v1/waitcondition/...: before /v1/{tenant_id}
    stacks.router,
    stack_data.router,
    actions.router,
    resources.router,
    events.router,
    templates.router,
    *v2.ROUTERS,  # Mistral's /v2 (GET / lists both versions: service_info)
    service_info.router,
)


def create_app(
    stacks_service: Stacks,
    settings: ApiSettings | None = None,
    *,
    authenticator: Authenticator | None = None,
) -> FastAPI:
    """The API over one stack service. ``authenticator`` defaults to
    :class:`OpenAccess` (``--no-auth``); with ``settings.run_engine`` the
    service's engine runs while the app does."""
    settings = settings or ApiSettings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        runner = EngineThread(stacks_service, settings.store_url) if settings.run_engine else None
        app.state.engine_thread = runner
        if runner is not None:
            runner.start()
        presence = _presence(stacks_service, settings)
        try:
            yield
        finally:
            if presence is not None:
                presence.cancel()
                await asyncio.gather(presence, return_exceptions=True)
            if runner is not None:
                runner.stop(settings.shutdown_grace)

    app = FastAPI(
        title="Convection orchestration API",
        version="1",
        description="Heat's orchestration API v1, served by Convection.",
        lifespan=lifespan,
    )
    app.state.stacks = stacks_service
    app.state.api_settings = settings
    app.state.authenticator = authenticator or OpenAccess()
    app.state.engine_thread = None
    errors.install(app)
    for router in ROUTERS:
        app.include_router(router)
    software.install(app)
    metrics.install(app)
    dashboard.install(app, stacks_service, _identify(app.state.authenticator))
    app.add_middleware(RateLimit, rate=settings.rate_limit, burst=settings.rate_limit_burst)
    app.add_middleware(AccessLog, enabled=settings.access_log)
    return app


def _identify(authenticator: Authenticator) -> dashboard.Identify:
    """The dashboard's sign-in rule: the API's own authenticator's."""

    def identify(token: str, project: str | None) -> dashboard.Identity | None:
        found = authenticator.sign_in(token, project)
        if found is None:
            return None
        return dashboard.Identity(found.project, str(found.role), found.token_id)

    return identify


def _presence(stacks: Stacks, settings: ApiSettings) -> asyncio.Task[None] | None:
    """On PostgreSQL, this server's row in ``processes`` (``convection
    status``), beaten on the app's loop; its engine, if any, beats none of
    its own (the server's row stands for both)."""
    url = settings.store_url
    if url is None or not listens(url):
        return None
    owner = f"server-{socket.gethostname()}-{os.getpid()}"
    return asyncio.ensure_future(
        beat(
            stacks.store,
            owner=owner,
            kind="server",
            queues=(),
            concurrency=0,
            running=lambda: 0,
            stats=lambda: {},
        )
    )

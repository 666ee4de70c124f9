"""The dashboard on an existing app: its routes, its static files, and the
headers that keep its pages from being framed or fed foreign scripts."""

from __future__ import annotations

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from convection.dashboard import actions, data, pages, signin
from convection.dashboard.context import DATA_PREFIX, STATIC, TEMPLATES, Dashboard
from convection.dashboard.live import Streams
from convection.dashboard.session import Identify
from convection.service import Stacks

#: Pages run only this site's own script; nothing may frame them.
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
        "img-src 'self' data: blob:; connect-src 'self'; frame-ancestors 'none'; "
        "form-action 'self'; base-uri 'none'; object-src 'none'"
    ),
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
}
#: Paths that are the dashboard's (the APIs keep their own headers).
_PREFIXES = ("/login", "/logout", "/stacks", "/workflows", "/executions", "/ui/")


def install(app: FastAPI, stacks: Stacks, identify: Identify) -> None:
    """Serve the dashboard from ``app``: pages at ``/``, data under
    ``/ui/api``, the built script and styles under ``/ui/static``.
    ``identify`` is the app's own judge of a token."""
    templates = Jinja2Templates(directory=str(TEMPLATES))
    templates.env.autoescape = True
    app.state.dashboard = Dashboard(stacks, identify, templates, Streams())
    for router in (signin.router, data.router, actions.router, pages.router):
        app.include_router(router)
    app.mount("/ui/static", StaticFiles(directory=str(STATIC), check_dir=False), name="ui-static")

    app.add_middleware(SecureHeaders)


class SecureHeaders:
    """The security headers on the dashboard's responses (pure ASGI, so a
    stream is passed through as it is written)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "") if scope["type"] == "http" else ""
        if not (path == "/" or path.startswith(_PREFIXES)):
            await self.app(scope, receive, send)
            return
        extra = dict(SECURITY_HEADERS)
        if not path.startswith("/ui/static"):
            extra["Cache-Control"] = "no-store"

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for key, value in extra.items():
                    headers.setdefault(key, value)
            await send(message)

        await self.app(scope, receive, with_headers)


__all__ = ["DATA_PREFIX", "install"]

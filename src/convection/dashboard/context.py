"""What every dashboard route needs: the caller, the services, the page
templates, and one way to answer errors.

Routes use :class:`DashboardRoute`, which answers an error as the
dashboard should: a page gets an HTML page naming the problem (with the
file, line and path of a template error), a ``/ui/api`` request a JSON
body; a request without a valid session goes to the sign-in form (or
gets 401). Never a traceback, never Heat's JSON on a page.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from fastapi import Depends, Request, Response
from fastapi.responses import JSONResponse, RedirectResponse
from fastapi.routing import APIRoute
from fastapi.templating import Jinja2Templates

from convection.common import Conflict, ConvectionError, InvalidInput, LimitExceeded, NotFound
from convection.dashboard.live import Streams
from convection.dashboard.session import (
    Identify,
    Identity,
    Session,
    SignInRequired,
    identity_of,
    login_url,
)
from convection.service import Stacks
from convection.store import Store

HERE = Path(__file__).parent
TEMPLATES = HERE / "templates"
STATIC = HERE / "static"
BUNDLE = STATIC / "dist" / "dashboard.js"
#: Where the data the page's script reads lives (not Heat's or Mistral's APIs).
DATA_PREFIX = "/ui/api"


@dataclass(slots=True)
class Dashboard:
    """The dashboard of one app (``app.state.dashboard``)."""

    stacks: Stacks
    identify: Identify
    templates: Jinja2Templates
    streams: Streams


@dataclass(frozen=True, slots=True)
class Caller:
    """A signed-in request: who, and the services it may use."""

    identity: Identity
    session: Session
    dashboard: Dashboard

    @property
    def project(self) -> str:
        return self.identity.project

    @property
    def stacks(self) -> Stacks:
        return self.dashboard.stacks

    @property
    def store(self) -> Store:
        return self.dashboard.stacks.store

    def still_allowed(self) -> bool:
        """Whether the session's token is still good (a stream asks)."""
        return self.dashboard.identify(self.session.token, self.session.project) is not None


def _caller(request: Request) -> Caller:
    identity, session = identity_of(request)
    caller = request.state.caller = Caller(identity, session, request.app.state.dashboard)
    return caller


SignedIn = Annotated[Caller, Depends(_caller)]


class Forbidden(ConvectionError):
    """A reader's token asked for a change."""


def page(request: Request, name: str, code: int = 200, **values: Any) -> Response:
    dashboard: Dashboard = request.app.state.dashboard
    return dashboard.templates.TemplateResponse(
        request, name, {"bundle_built": BUNDLE.exists(), **values}, status_code=code
    )


def status_of(exc: ConvectionError) -> int:
    if isinstance(exc, Forbidden):
        return 403
    if isinstance(exc, NotFound):
        return 404
    if isinstance(exc, LimitExceeded):
        return 413
    if isinstance(exc, Conflict):
        return 409
    return 400


def messages(exc: ConvectionError) -> list[str]:
    """Every problem, each with its place (``template:3:5 resources.web...``)."""
    if isinstance(exc, InvalidInput) and exc.diagnostics:
        return [str(d) for d in exc.diagnostics]
    return [str(exc)]


class DashboardRoute(APIRoute):
    """Errors answered as pages (or ``/ui/api`` JSON), never as Heat's."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def route(request: Request) -> Response:
            data = request.url.path.startswith(DATA_PREFIX)
            try:
                return await handler(request)
            except SignInRequired:
                if data:
                    return JSONResponse({"error": "Sign in first."}, status_code=401)
                return RedirectResponse(login_url(request), status_code=303)
            except ConvectionError as exc:
                code = status_of(exc)
                if data:
                    return JSONResponse({"error": "\n".join(messages(exc))}, status_code=code)
                caller = getattr(request.state, "caller", None)
                return page(
                    request, "error.html", code, viewer=caller, errors=messages(exc),
                    back=_back(request.url.path),
                )  # fmt: skip

        return route


def _back(path: str) -> str:
    """The page an action was taken from: ``/stacks/<id>`` for any of its
    actions, the list for a page that is itself missing."""
    parts = path.strip("/").split("/")
    if len(parts) >= 3 and parts[0] in ("stacks", "executions", "workflows"):
        return "/" + "/".join(parts[:2])
    return "/" + (parts[0] if parts and parts[0] else "stacks")

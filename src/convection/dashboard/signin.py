"""Signing in and out.

The sign-in form is protected against login CSRF (another site signing
the browser in as someone else) by a double submit: the form's hidden
value must equal a cookie only this site's page could have set.
"""

from __future__ import annotations

import hmac
import secrets

from fastapi import APIRouter, Request, Response
from fastapi.responses import RedirectResponse

from convection.dashboard.context import Dashboard, DashboardRoute, SignedIn, page
from convection.dashboard.forms import read_form
from convection.dashboard.session import (
    COOKIE,
    MAX_FIELD,
    Session,
    csrf_ok,
    safe_next,
    set_cookie,
)

router = APIRouter(route_class=DashboardRoute, include_in_schema=False)

LOGIN_COOKIE = "convection_login"
#: A sign-in form is small: a token, a project, a next page.
_FORM_LIMIT = 8 * 1024


@router.get("/login")
def login_form(request: Request, next: str = "/stacks") -> Response:
    return _form(request, next, error=None, status=200)


@router.post("/login")
async def login(request: Request) -> Response:
    form = await read_form(request, _FORM_LIMIT)
    target = safe_next(form.get("next"))
    expected = request.cookies.get(LOGIN_COOKIE, "")
    if not expected or not hmac.compare_digest(expected, form.get("login_csrf")):
        return _form(request, target, error="The form expired: sign in again.", status=400)
    token = form.get("token").strip()
    project = form.get("project").strip() or None
    if not token or len(token) > MAX_FIELD or (project and len(project) > MAX_FIELD):
        return _form(request, target, error="Enter an API token.", status=400)
    dashboard: Dashboard = request.app.state.dashboard
    if dashboard.identify(token, project) is None:
        return _form(request, target, error="That token is not valid.", status=401)
    response = RedirectResponse(target, status_code=303)
    set_cookie(response, request, COOKIE, Session(token, project).encode())
    response.delete_cookie(LOGIN_COOKIE, path="/")
    return response


@router.post("/logout")
async def logout(request: Request, caller: SignedIn) -> Response:
    form = await read_form(request, _FORM_LIMIT)
    if not csrf_ok(caller.session, form.get("csrf")):
        return page(request, "error.html", 403, viewer=caller, errors=["Invalid form token."])
    response = RedirectResponse("/login", status_code=303)
    response.delete_cookie(COOKIE, path="/")
    return response


def _form(request: Request, target: str, *, error: str | None, status: int) -> Response:
    value = secrets.token_urlsafe(24)
    response = page(
        request, "login.html", status, viewer=None, next=safe_next(target), error=error,
        login_csrf=value,
    )  # fmt: skip
    set_cookie(response, request, LOGIN_COOKIE, value, max_age=3600)
    return response

"""Who is looking at the dashboard: a signed-in API token, kept in a cookie.

The cookie holds the API token itself and nothing else the server must
remember, so any API server behind the same store accepts it, and the
token is checked against the store on every request: a revoked or expired
token ends the session at once, on every server. The cookie is HttpOnly
(no script on the page can read it), SameSite=Strict (no other site's page
can make the browser send it) and Secure when the page came over TLS.

CSRF: every form carries a value derived from the token with a keyed hash.
A page of another origin can neither read the cookie nor the value, so it
cannot forge a form even where SameSite is not honoured.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import quote

from fastapi import Request, Response

COOKIE = "convection_session"
#: Longest token or project name a sign-in form may carry.
MAX_FIELD = 512
#: The session lives as long as the browser, and at most this long (seconds).
MAX_AGE = 12 * 3600
_CSRF_KEY = b"convection-dashboard-csrf-v1"


@dataclass(frozen=True, slots=True)
class Identity:
    """A signed-in caller: a project and a role, as the API's tokens have."""

    project: str
    role: str
    token_id: str | None = None

    @property
    def can_write(self) -> bool:
        return self.role != "reader"


#: The app's judge of a token: ``(token, project asked for)`` -> the caller,
#: or None. The API passes its own authenticator's rule, so the dashboard
#: decides nothing about credentials itself.
Identify = Callable[[str, str | None], Identity | None]


@dataclass(frozen=True, slots=True)
class Session:
    """What the cookie carries: the token, and the project asked for at
    sign-in (used only by ``--no-auth`` servers, where any token passes)."""

    token: str
    project: str | None

    def encode(self) -> str:
        raw = json.dumps({"t": self.token, "p": self.project}, separators=(",", ":"))
        return base64.urlsafe_b64encode(raw.encode()).decode()

    @classmethod
    def decode(cls, value: str | None) -> Session | None:
        if not value or len(value) > 4 * MAX_FIELD:
            return None
        try:
            data = json.loads(base64.urlsafe_b64decode(value.encode()))
        except (ValueError, UnicodeDecodeError):
            return None
        if not isinstance(data, dict) or not isinstance(data.get("t"), str):
            return None
        project = data.get("p")
        return cls(data["t"], project if isinstance(project, str) else None)

    @property
    def csrf(self) -> str:
        return hmac.new(_CSRF_KEY, self.token.encode(), hashlib.sha256).hexdigest()


class SignInRequired(Exception):
    """No valid session: a page redirects to the sign-in form, data 401s."""


def session_of(request: Request) -> Session | None:
    return Session.decode(request.cookies.get(COOKIE))


def identity_of(request: Request) -> tuple[Identity, Session]:
    """The caller of this request, checked against the store now."""
    session = session_of(request)
    if session is None:
        raise SignInRequired
    identify: Identify = request.app.state.dashboard.identify
    found = identify(session.token, session.project)
    if found is None:
        raise SignInRequired
    return found, session


def csrf_ok(session: Session, sent: str | None) -> bool:
    return sent is not None and hmac.compare_digest(session.csrf, sent)


def set_cookie(
    response: Response, request: Request, name: str, value: str, max_age: int = MAX_AGE
) -> None:
    """HttpOnly, SameSite=Strict, and Secure when the page came over TLS
    (behind a proxy that ends TLS, run uvicorn with ``--proxy-headers``)."""
    response.set_cookie(
        name,
        value,
        max_age=max_age,
        path="/",
        secure=request.url.scheme == "https",
        httponly=True,
        samesite="strict",
    )


def login_url(request: Request) -> str:
    """Where an anonymous page request goes: the sign-in form, back here after."""
    target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    return "/login?next=" + quote(target, safe="")


def safe_next(value: str | None) -> str:
    """Only a path on this server: never an open redirect to another site."""
    if not value or not value.startswith("/") or value.startswith("//") or "\\" in value:
        return "/stacks"
    return value

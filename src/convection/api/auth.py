"""Who is calling, and which project they may act in.

Every route under ``/v1/{tenant_id}`` depends on :func:`reader` or
:func:`writer`, which ask the app's :class:`Authenticator` for a
:class:`Principal` from the ``X-Auth-Token`` header and the tenant id in
the URL. The project a route works in is always ``principal.project``,
never the raw URL segment, so an authenticator that maps tokens to
projects (the token slice) cannot be bypassed by a route.

Today there is one authenticator, :class:`OpenAccess` (``--no-auth``):
any token, or none, is accepted and the URL's tenant id is the project.
The token authenticator (project-scoped, hashed tokens with roles admin,
member and reader) plugs in by implementing the same one-method protocol.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Annotated, Protocol

from fastapi import Depends, Header, Path, Request

from convection.api.errors import ApiError

TOKEN_HEADER = "X-Auth-Token"


class Role(enum.StrEnum):
    ADMIN = "admin"
    MEMBER = "member"
    READER = "reader"


@dataclass(frozen=True, slots=True)
class Principal:
    """An authenticated caller, scoped to one project."""

    project: str
    role: Role
    #: The token's id (never the token itself), for logs; None without auth.
    token_id: str | None = None

    @property
    def can_write(self) -> bool:
        return self.role is not Role.READER


class Authenticator(Protocol):
    def authenticate(self, token: str | None, tenant_id: str) -> Principal:
        """The caller, or :class:`ApiError` 401 (no or bad token) / 403
        or 404 (a project the token is not for; never revealing whether
        anything exists there)."""
        ...


class OpenAccess:
    """``--no-auth``: everyone is an admin of the project in the URL."""

    def authenticate(self, token: str | None, tenant_id: str) -> Principal:
        return Principal(project=tenant_id, role=Role.ADMIN)


def _principal(
    request: Request,
    tenant_id: Annotated[str, Path(description="The project (Heat's tenant id).")],
    token: Annotated[str | None, Header(alias=TOKEN_HEADER, include_in_schema=False)] = None,
) -> Principal:
    authenticator: Authenticator = request.app.state.authenticator
    principal = authenticator.authenticate(token, tenant_id)
    request.state.principal = principal
    return principal


def _writer(principal: Annotated[Principal, Depends(_principal)]) -> Principal:
    if not principal.can_write:
        raise ApiError(403, "You are not authorized to perform this action.", "Forbidden")
    return principal


#: A caller allowed to read in the URL's project.
reader = Depends(_principal)
#: A caller allowed to change things in the URL's project.
writer = Depends(_writer)
Reader = Annotated[Principal, reader]
Writer = Annotated[Principal, writer]

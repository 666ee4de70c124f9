"""Who is calling, and which project they may act in.

Every route under ``/v1/{tenant_id}`` depends on :data:`reader`,
:data:`writer`, :data:`Signaller` or :data:`agent`, which ask the app's
:class:`Authenticator` for a :class:`Principal` from the ``X-Auth-Token``
header and the tenant id in the URL. The project a route works in is always
``principal.project``, never the raw URL segment, so no route can bypass the
token's scope.

Two authenticators: :class:`OpenAccess` (``--no-auth``: any token, or none;
the URL's tenant id is the project) and :class:`TokenAuthenticator`
(:mod:`convection.tokens._tokens`: hashed, project-scoped tokens with roles admin,
member and reader). A token for another project gets the same 403 whether
or not anything exists there, so a token reveals nothing outside its
project.

Narrowed tokens (a signal URL's, the pull agent's) pass only the
dependencies made for them: a signal token passes :data:`Signaller` for its
one resource, an agent token passes :data:`agent` for its one server; both
get 403 everywhere else, reads included.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Protocol

from fastapi import Depends, Header, Path, Request

from convection.api.errors import ApiError
from convection.tokens import Role, Tokens

TOKEN_HEADER = "X-Auth-Token"

_FORBIDDEN = "You are not authorized to perform this action."
#: The project of a ``--no-auth`` dashboard session that names none (the
#: CLI's default project too).
OPEN_PROJECT = "default"


def forbidden() -> ApiError:
    """Heat's 403, worded the same whatever the reason, so it leaks nothing."""
    return ApiError(403, _FORBIDDEN, "Forbidden")


@dataclass(frozen=True, slots=True)
class Principal:
    """An authenticated caller, scoped to one project (and maybe narrower)."""

    project: str
    role: Role
    #: The token's id (never the token itself), for logs; None without auth.
    token_id: str | None = None
    #: A signal token's one resource: (stack id, resource name).
    stack_id: str | None = None
    resource_name: str | None = None
    #: The pull agent's one server.
    server_id: str | None = None

    @property
    def can_write(self) -> bool:
        return self.role is not Role.READER

    @property
    def narrowed(self) -> bool:
        """A signal or agent credential, good only on its own routes."""
        return self.resource_name is not None or self.server_id is not None


class Authenticator(Protocol):
    def authenticate(self, token: str | None, tenant_id: str) -> Principal:
        """The caller, or :class:`ApiError` 401 (no or bad token) / 403
        or 404 (a project the token is not for; never revealing whether
        anything exists there)."""
        ...

    def sign_in(self, token: str, project: str | None) -> Principal | None:
        """The caller a dashboard session stands for, or None: the token's
        own project (``project`` is only asked for by ``--no-auth``); a
        signal or agent token never signs in."""
        ...


class OpenAccess:
    """``--no-auth``: everyone is an admin of the project in the URL."""

    def authenticate(self, token: str | None, tenant_id: str) -> Principal:
        return Principal(project=tenant_id, role=Role.ADMIN)

    def sign_in(self, token: str, project: str | None) -> Principal | None:
        return Principal(project=project or OPEN_PROJECT, role=Role.ADMIN)


class TokenAuthenticator:
    """Tokens from :mod:`convection.tokens._tokens`, checked on every request."""

    def __init__(self, tokens: Tokens) -> None:
        self.tokens = tokens

    def authenticate(self, token: str | None, tenant_id: str) -> Principal:
        found = self.tokens.verify(token)
        if found is None:
            raise ApiError(
                401, "Authentication required: a valid X-Auth-Token.", "HTTPUnauthorized"
            )
        if found.project != tenant_id:
            raise forbidden()
        return Principal(
            project=found.project,
            role=Role(found.role),
            token_id=found.id,
            stack_id=found.stack_id,
            resource_name=found.resource_name,
            server_id=found.server_id,
        )

    def sign_in(self, token: str, project: str | None) -> Principal | None:
        found = self.tokens.verify(token)
        if found is None or found.resource_name is not None or found.server_id is not None:
            return None
        return Principal(project=found.project, role=Role(found.role), token_id=found.id)


def _authenticated(
    request: Request,
    tenant_id: Annotated[str, Path(description="The project (Heat's tenant id).")],
    token: Annotated[str | None, Header(alias=TOKEN_HEADER, include_in_schema=False)] = None,
) -> Principal:
    authenticator: Authenticator = request.app.state.authenticator
    principal = authenticator.authenticate(token, tenant_id)
    request.state.principal = principal
    return principal


def _reader(principal: Annotated[Principal, Depends(_authenticated)]) -> Principal:
    if principal.narrowed:
        raise forbidden()
    return principal


def _writer(principal: Annotated[Principal, Depends(_reader)]) -> Principal:
    if not principal.can_write:
        raise forbidden()
    return principal


def _agent(
    principal: Annotated[Principal, Depends(_authenticated)],
    server_id: Annotated[str, Path(description="The server whose deployments these are.")],
) -> Principal:
    """A project member, or the agent token of exactly this server."""
    if principal.resource_name is not None:
        raise forbidden()
    if principal.server_id is not None and principal.server_id != server_id:
        raise forbidden()
    return principal


def _deployments_caller(principal: Annotated[Principal, Depends(_authenticated)]) -> Principal:
    """A project caller, or an agent token; the route then checks the
    deployment's server with :func:`require_server` (the server is known
    only once the deployment is read)."""
    if principal.resource_name is not None:
        raise forbidden()
    return principal


def require_server(principal: Principal, server_id: str | None) -> None:
    """An agent token may act only on its own server's deployments."""
    if principal.server_id is not None and principal.server_id != server_id:
        raise forbidden()


def require_writer(principal: Principal) -> None:
    """A write through a route open to agents: readers may not."""
    if not principal.can_write:
        raise forbidden()


def _signaller(
    principal: Annotated[Principal, Depends(_authenticated)],
    resource_name: Annotated[str, Path()],
    stack_id: Annotated[str, Path()],
) -> Principal:
    """A writer of the project, or a signal token for exactly this resource."""
    return require_signaller(principal, stack_id, resource_name)


def require_signaller(principal: Principal, stack_id: str, resource_name: str) -> Principal:
    """A writer of the project, or a signal token for exactly this resource
    (one rule for the project routes and the pre-signed ones).

    The stack is compared by id, the route's ``stack_id`` segment: a signal
    token's URL always carries it. An agent's token never signals.
    """
    if principal.server_id is not None:
        raise forbidden()
    if principal.resource_name is not None:
        if (principal.stack_id, principal.resource_name) != (stack_id, resource_name):
            raise forbidden()
    elif not principal.can_write:
        raise forbidden()
    return principal


#: A caller allowed to read in the URL's project.
reader = Depends(_reader)
#: A caller allowed to change things in the URL's project.
writer = Depends(_writer)
#: A project caller, or the agent token of the URL's ``{server_id}``.
agent = Depends(_agent)
Reader = Annotated[Principal, reader]
Writer = Annotated[Principal, writer]
Agent = Annotated[Principal, agent]
Signaller = Annotated[Principal, Depends(_signaller)]
#: A project caller or an agent token, on software deployment routes.
DeploymentCaller = Annotated[Principal, Depends(_deployments_caller)]

"""API tokens: issuing, listing, revoking and verifying credentials.

Convection has no Keystone. A token is a random secret shown once, when it
is made; the store keeps only its SHA-256, so a leaked database grants
nothing. Every token belongs to one project and has one role:

* ``admin`` and ``member`` may read and change the project's stacks
  (``admin`` is reserved for what a project operator alone may do);
* ``reader`` may only read.

A token may also be narrowed, as Heat's signal credentials are:

* to one resource of one stack (:meth:`Tokens.issue_signal`): it may signal
  that resource and nothing else, not even read the stack. A
  WaitConditionHandle's ``token``/``endpoint``/``curl_cli`` carry one;
* to one server (:meth:`Tokens.issue_server`): the pull agent's credential,
  which may read that server's deployment metadata and signal its
  deployments.

Narrowed tokens die with their stack (:meth:`Tokens.revoke_stack`).
"""

from __future__ import annotations

import enum
import hashlib
import hmac
import secrets
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime

from convection.common import NotFound
from convection.store import Store, TokenRecord

#: Printed before every secret, so a leaked one is easy to grep for.
SECRET_PREFIX = "cvt_"


class Role(enum.StrEnum):
    ADMIN = "admin"
    MEMBER = "member"
    READER = "reader"


@dataclass(frozen=True, slots=True)
class IssuedToken:
    """A new token and its secret: the only time the secret is known."""

    record: TokenRecord
    secret: str


def hash_secret(secret: str) -> str:
    """The stored form of a secret (hex SHA-256).

    A plain hash suffices: secrets carry 256 random bits, so there is
    nothing to brute-force, and verification runs on every request.
    """
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def _now() -> datetime:
    return datetime.now(UTC)


class Tokens:
    """The only caller of the store's token methods."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def issue(
        self,
        project: str,
        role: Role = Role.MEMBER,
        *,
        description: str | None = None,
        expires_at: datetime | None = None,
    ) -> IssuedToken:
        """A project token."""
        return self._issue(project, role, description=description, expires_at=expires_at)

    def issue_signal(self, project: str, stack_id: str, resource_name: str) -> IssuedToken:
        """A token that may signal one resource and do nothing else."""
        return self._issue(
            project,
            Role.MEMBER,
            description=f"signal {resource_name}",
            stack_id=stack_id,
            resource_name=resource_name,
        )

    def issue_server(self, project: str, server_id: str, *, stack_id: str | None) -> IssuedToken:
        """The pull agent's token for one server's deployments."""
        return self._issue(
            project,
            Role.MEMBER,
            description=f"agent for server {server_id}",
            stack_id=stack_id,
            server_id=server_id,
        )

    def list(self, project: str | None = None) -> list[TokenRecord]:
        return self.store.list_tokens(project)

    def revoke(self, token_id: str) -> None:
        """Revoke by id; :class:`NotFound` for an unknown or revoked id."""
        if not self.store.revoke_tokens(_now(), token_id=token_id):
            raise NotFound("token", token_id)

    def revoke_stack(self, stack_id: str) -> int:
        """Revoke every token narrowed to a stack (it is being deleted)."""
        return self.store.revoke_tokens(_now(), stack_id=stack_id)

    def verify(self, secret: str | None) -> TokenRecord | None:
        """The live token with this secret, or None (unknown, revoked, expired).

        The one place a presented secret is checked. The store finds the
        row by the hash (an index lookup); the hashes are then compared in
        constant time, so no store's lookup, however it scans, can let a
        caller learn a stored hash byte by byte from timings. Each call
        reads the store, so a revocation counts at once on every server.
        """
        if not secret:
            return None
        hashed = hash_secret(secret)
        found = self.store.find_token(hashed)
        if found is None or not hmac.compare_digest(found.secret_hash, hashed):
            return None
        if found.revoked_at is not None:
            return None
        if found.expires_at is not None and found.expires_at <= _now():
            return None
        return found

    def _issue(
        self,
        project: str,
        role: Role,
        *,
        description: str | None = None,
        expires_at: datetime | None = None,
        stack_id: str | None = None,
        resource_name: str | None = None,
        server_id: str | None = None,
    ) -> IssuedToken:
        secret = SECRET_PREFIX + secrets.token_urlsafe(32)
        record = TokenRecord(
            id=uuid.uuid4().hex[:12],
            secret_hash=hash_secret(secret),
            project=project,
            role=str(role),
            description=description,
            stack_id=stack_id,
            resource_name=resource_name,
            server_id=server_id,
            created_at=_now(),
            expires_at=expires_at,
        )
        self.store.add_token(record)
        return IssuedToken(record, secret)

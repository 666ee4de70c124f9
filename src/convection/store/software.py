"""Software configs and deployments: records, the store's port for them, and
the in-memory implementation.

Why a port of its own and not more methods on :class:`Store`: these rows
are a projection for Heat's software API, read and written outside any
traversal (the API, a deployment resource through its context) and never
part of a journal batch. Keeping them behind a small protocol, reached as
``store.software``, leaves the journal's protocol alone and lets each
backend implement it in a module of its own.

Every method is one transaction. Writes are idempotent (``put_*`` replaces
a row with the same id), because a resource re-runs its action after a
crash and writes the same row again.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, Final, Protocol

from convection.common import JSON
from convection.store._time import aware, utcnow

#: The fields ``update_deployment`` may change (Heat's PUT body).
DEPLOYMENT_UPDATABLE: Final = frozenset(
    {"config_id", "input_values", "output_values", "action", "status", "status_reason"}
)


@dataclass(frozen=True, slots=True, kw_only=True)
class SoftwareConfigRecord:
    """A software config as Heat keeps it: ``config`` holds
    ``{"config", "inputs", "outputs", "options"}``."""

    id: str
    project: str
    name: str
    group: str
    config: Mapping[str, JSON]
    #: Names of inputs whose values are secret (masked when shown).
    secret_inputs: tuple[str, ...] = ()
    stack_id: str | None = None
    resource_name: str | None = None
    created_at: datetime | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class SoftwareDeploymentRecord:
    """A config applied to a server, and how it went."""

    id: str
    project: str
    server_id: str
    config_id: str
    input_values: Mapping[str, JSON] = field(default_factory=dict)
    output_values: Mapping[str, JSON] = field(default_factory=dict)
    action: str = "INIT"
    status: str = "COMPLETE"
    status_reason: str = ""
    stack_id: str | None = None
    resource_name: str | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None


class SoftwareStore(Protocol):
    def put_config(self, config: SoftwareConfigRecord) -> None:
        """Insert, or replace the row with the same id."""
        ...

    def get_config(self, config_id: str) -> SoftwareConfigRecord | None:
        """By id in any project; callers compare the project."""
        ...

    def list_configs(
        self, project: str, *, limit: int | None = None, marker: str | None = None
    ) -> list[SoftwareConfigRecord]:
        """Oldest first; ``marker`` is the id of the row to start after."""
        ...

    def delete_config(self, config_id: str) -> bool: ...

    def put_deployment(self, deployment: SoftwareDeploymentRecord) -> None:
        """Insert, or replace the row with the same id (keeping its
        ``created_at``)."""
        ...

    def get_deployment(self, deployment_id: str) -> SoftwareDeploymentRecord | None: ...

    def list_deployments(
        self, project: str, *, server_id: str | None = None
    ) -> list[SoftwareDeploymentRecord]:
        """Oldest first, optionally of one server."""
        ...

    def update_deployment(
        self, deployment_id: str, fields: Mapping[str, Any], now: datetime
    ) -> SoftwareDeploymentRecord | None:
        """Change :data:`DEPLOYMENT_UPDATABLE` fields; the row, or None."""
        ...

    def delete_deployment(self, deployment_id: str) -> bool: ...


def check_update(fields: Mapping[str, Any]) -> None:
    unknown = set(fields) - DEPLOYMENT_UPDATABLE
    if unknown:
        raise ValueError(f"software deployment fields not updatable: {sorted(unknown)}")


def _ordered(found: list[Any]) -> list[Any]:
    return sorted(found, key=lambda r: (r.created_at or utcnow(), r.id))


def page_after(found: list[Any], limit: int | None, marker: str | None) -> list[Any]:
    """Heat's marker/limit paging over rows already in order."""
    if marker is not None:
        ids = [r.id for r in found]
        found = found[ids.index(marker) + 1 :] if marker in ids else []
    return found if limit is None else found[:limit]


class MemorySoftware:
    """:class:`SoftwareStore` in process memory, for the memory store."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._configs: dict[str, SoftwareConfigRecord] = {}
        self._deployments: dict[str, SoftwareDeploymentRecord] = {}

    def put_config(self, config: SoftwareConfigRecord) -> None:
        with self._lock:
            old = self._configs.get(config.id)
            created = (old.created_at if old else None) or config.created_at or utcnow()
            self._configs[config.id] = replace(config, created_at=aware(created, "created_at"))

    def get_config(self, config_id: str) -> SoftwareConfigRecord | None:
        with self._lock:
            return self._configs.get(config_id)

    def list_configs(
        self, project: str, *, limit: int | None = None, marker: str | None = None
    ) -> list[SoftwareConfigRecord]:
        with self._lock:
            found = [c for c in self._configs.values() if c.project == project]
        return page_after(_ordered(found), limit, marker)

    def delete_config(self, config_id: str) -> bool:
        with self._lock:
            return self._configs.pop(config_id, None) is not None

    def put_deployment(self, deployment: SoftwareDeploymentRecord) -> None:
        with self._lock:
            old = self._deployments.get(deployment.id)
            created = (old.created_at if old else None) or deployment.created_at or utcnow()
            self._deployments[deployment.id] = replace(deployment, created_at=created)

    def get_deployment(self, deployment_id: str) -> SoftwareDeploymentRecord | None:
        with self._lock:
            return self._deployments.get(deployment_id)

    def list_deployments(
        self, project: str, *, server_id: str | None = None
    ) -> list[SoftwareDeploymentRecord]:
        with self._lock:
            found = [
                d
                for d in self._deployments.values()
                if d.project == project and server_id in (None, d.server_id)
            ]
        return _ordered(found)

    def update_deployment(
        self, deployment_id: str, fields: Mapping[str, Any], now: datetime
    ) -> SoftwareDeploymentRecord | None:
        check_update(fields)
        with self._lock:
            old = self._deployments.get(deployment_id)
            if old is None:
                return None
            new = replace(old, **dict(fields), updated_at=aware(now, "updated_at"))
            self._deployments[deployment_id] = new
            return new

    def delete_deployment(self, deployment_id: str) -> bool:
        with self._lock:
            return self._deployments.pop(deployment_id, None) is not None

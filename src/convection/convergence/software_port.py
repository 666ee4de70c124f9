"""The engine's side of ``ResourceContext.software``: a stack's software
configs and deployments in the store, for the resource that makes them.

Rows are tagged with the stack and the resource, and the project is the
stack's: a plugin names only ids, and can read back or delete only rows its
own stack made. The writes are plain store calls, not journal entries:
these rows are a projection for Heat's software API and the pull agent,
rewritten whole (same id) when an action runs again after a crash.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime

from convection.common import JSON
from convection.store import SoftwareConfigRecord, SoftwareDeploymentRecord, Store


def deployment_view(row: SoftwareDeploymentRecord) -> dict[str, JSON]:
    """Heat's ``format_software_deployment``."""
    view: dict[str, JSON] = {
        "id": row.id,
        "server_id": row.server_id,
        "config_id": row.config_id,
        "input_values": dict(row.input_values),
        "output_values": dict(row.output_values),
        "action": row.action,
        "status": row.status,
        "status_reason": row.status_reason,
        "creation_time": _iso(row.created_at),
    }
    if row.updated_at is not None:
        view["updated_time"] = _iso(row.updated_at)
    return view


def _iso(when: datetime | None) -> str | None:
    if when is None:
        return None
    return when.astimezone(UTC).replace(tzinfo=None).isoformat(timespec="seconds")


class StoreSoftware:
    """:class:`~convection.resources._context.SoftwareRecords` over a store."""

    def __init__(self, store: Store, stack_id: str, resource_name: str) -> None:
        self._store = store
        self._stack_id = stack_id
        self._resource = resource_name
        self._project: str | None = None

    def _project_of_stack(self) -> str:
        if self._project is None:
            stack = self._store.get_stack_by_id(self._stack_id)
            if stack is None:
                raise LookupError(f"stack {self._stack_id} is gone")
            self._project = stack.project
        return self._project

    def _ours(self, row: SoftwareConfigRecord | SoftwareDeploymentRecord | None) -> bool:
        return row is not None and (row.stack_id, row.resource_name) == (
            self._stack_id,
            self._resource,
        )

    async def save_config(
        self,
        config_id: str,
        document: Mapping[str, JSON],
        *,
        secret_inputs: tuple[str, ...] = (),
    ) -> None:
        body = {k: document.get(k) for k in ("config", "inputs", "outputs", "options")}
        self._store.software.put_config(
            SoftwareConfigRecord(
                id=config_id,
                project=self._project_of_stack(),
                name=str(document.get("name") or ""),
                group=str(document.get("group") or "Heat::Ungrouped"),
                config=body,
                secret_inputs=secret_inputs,
                stack_id=self._stack_id,
                resource_name=self._resource,
            )
        )

    async def delete_config(self, config_id: str) -> None:
        if self._ours(self._store.software.get_config(config_id)):
            self._store.software.delete_config(config_id)

    async def save_deployment(
        self,
        deployment_id: str,
        *,
        server_id: str,
        config_id: str,
        input_values: Mapping[str, JSON],
        action: str,
        status: str,
        status_reason: str,
        output_values: Mapping[str, JSON] | None = None,
    ) -> None:
        self._store.software.put_deployment(
            SoftwareDeploymentRecord(
                id=deployment_id,
                project=self._project_of_stack(),
                server_id=server_id,
                config_id=config_id,
                input_values=dict(input_values),
                output_values=dict(output_values or {}),
                action=action,
                status=status,
                status_reason=status_reason,
                stack_id=self._stack_id,
                resource_name=self._resource,
                updated_at=datetime.now(UTC),
            )
        )

    async def deployment(self, deployment_id: str) -> Mapping[str, JSON] | None:
        row = self._store.software.get_deployment(deployment_id)
        return deployment_view(row) if row is not None and self._ours(row) else None

    async def delete_deployment(self, deployment_id: str) -> None:
        if self._ours(self._store.software.get_deployment(deployment_id)):
            self._store.software.delete_deployment(deployment_id)

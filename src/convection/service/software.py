"""Heat's software config and deployment operations (its
``service_software_config``), over ``store.software``.

The REST routes (``api/routers/software.py``) call this and nothing else
for these rows; resources write theirs through ``ctx.software``
(``engine/software_port.py``). Views are Heat's ``format_software_config``
and ``format_software_deployment``.

Two things beyond Heat's bookkeeping:

* an update to a deployment that a stack's resource made wakes that
  stack's sleeping nodes (``stack_signals.wake``), so a deployment waiting
  for its pull agent's report reads it now, not at its next poll;
* a config's secret inputs (the deployment's secret inputs and any input
  carrying a hidden parameter) show as ``******`` in ``show``; only the
  server's metadata, which its agent needs to run them, has their values.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, Final

from convection.common import JSON, InvalidInput, NotFound
from convection.convergence import deployment_view
from convection.service import signals as stack_signals
from convection.software import UNGROUPED, InvalidConfig, SourceConfig
from convection.store import (
    DEPLOYMENT_UPDATABLE,
    SoftwareConfigRecord,
    SoftwareDeploymentRecord,
    Store,
)

MASK: Final = "******"


class ConfigNotFound(NotFound):
    """Heat's words: ``Software config with id X not found``."""

    def __init__(self, config_id: str) -> None:
        super().__init__("Software config", config_id)
        self.args = (f"Software config with id {config_id} not found",)


class DeploymentNotFound(NotFound):
    """Heat's words: ``Deployment with id X not found``."""

    def __init__(self, deployment_id: str) -> None:
        super().__init__("Software deployment", deployment_id)
        self.args = (f"Deployment with id {deployment_id} not found",)


def _iso(when: datetime | None) -> str | None:
    if when is None:
        return None
    return when.astimezone(UTC).replace(tzinfo=None).isoformat(timespec="seconds")


def config_view(row: SoftwareConfigRecord, *, detail: bool = True, mask: bool = True) -> JSON:
    """Heat's ``format_software_config``; ``mask`` hides secret inputs."""
    view: dict[str, JSON] = {
        "id": row.id,
        "name": row.name,
        "group": row.group,
        "creation_time": _iso(row.created_at),
    }
    if not detail:
        return view
    inputs = [dict(i) for i in row.config.get("inputs") or [] if isinstance(i, Mapping)]
    if mask:
        for item in inputs:
            if item.get("name") in row.secret_inputs and item.get("value") is not None:
                item["value"] = MASK
    view.update(
        config=row.config.get("config"),
        inputs=inputs,
        outputs=row.config.get("outputs") or [],
        options=row.config.get("options") or {},
    )
    return view


def _new_config(project: str, body: Mapping[str, Any]) -> SoftwareConfigRecord:
    """A config from a create body, checked as a deployment would read it."""
    doc = {
        "group": body.get("group") or UNGROUPED,
        "config": body.get("config"),
        "inputs": body.get("inputs") or [],
        "outputs": body.get("outputs") or [],
        "options": body.get("options") or {},
    }
    name = body.get("name")
    if name is not None and not isinstance(name, str):
        raise InvalidInput.single("software config: name must be a string")
    if not isinstance(doc["options"], Mapping):
        raise InvalidInput.single("software config: options must be a map")
    try:
        SourceConfig.from_json(doc)
    except InvalidConfig as exc:
        raise InvalidInput.single(f"software config: {exc}") from None
    return SoftwareConfigRecord(
        id=str(uuid.uuid4()),
        project=project,
        name=name or "",
        group=str(doc["group"]),
        config={k: doc[k] for k in ("config", "inputs", "outputs", "options")},
    )


class SoftwareService:
    """Heat's software config and deployment operations in one project."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.rows = store.software

    # -- configs ----------------------------------------------------------------
    def create_config(self, project: str, body: Mapping[str, Any]) -> JSON:
        row = _new_config(project, body)
        self.rows.put_config(row)
        return config_view(self._config(project, row.id))

    def _config(self, project: str, config_id: str) -> SoftwareConfigRecord:
        row = self.rows.get_config(config_id)
        if row is None or row.project != project:
            raise ConfigNotFound(config_id)
        return row

    def show_config(self, project: str, config_id: str) -> JSON:
        return config_view(self._config(project, config_id))

    def list_configs(self, project: str, *, limit: int | None, marker: str | None) -> list[JSON]:
        found = self.rows.list_configs(project, limit=limit, marker=marker)
        return [config_view(r, detail=False) for r in found]

    def delete_config(self, project: str, config_id: str) -> None:
        self._config(project, config_id)
        self.rows.delete_config(config_id)

    # -- deployments --------------------------------------------------------------
    def deployment(self, project: str, deployment_id: str) -> SoftwareDeploymentRecord:
        row = self.rows.get_deployment(deployment_id)
        if row is None or row.project != project:
            raise DeploymentNotFound(deployment_id)
        return row

    def list_deployments(self, project: str, server_id: str | None) -> list[JSON]:
        found = self.rows.list_deployments(project, server_id=server_id)
        return [deployment_view(r) for r in found]

    def create_deployment(self, project: str, body: Mapping[str, Any]) -> JSON:
        config_id, server_id = body.get("config_id"), body.get("server_id")
        if not isinstance(server_id, str) or not server_id:
            raise InvalidInput.single("software deployment: server_id is required")
        if not isinstance(config_id, str) or not config_id:
            raise InvalidInput.single("software deployment: config_id is required")
        self._config(project, config_id)
        row = SoftwareDeploymentRecord(
            id=str(uuid.uuid4()),
            project=project,
            server_id=server_id,
            config_id=config_id,
            input_values=_map(body.get("input_values"), "input_values"),
            action=str(body.get("action") or "INIT"),
            status=str(body.get("status") or "COMPLETE"),
            status_reason=str(body.get("status_reason") or ""),
        )
        self.rows.put_deployment(row)
        return deployment_view(self.deployment(project, row.id))

    def update_deployment(self, project: str, deployment_id: str, body: Mapping[str, Any]) -> JSON:
        """Heat's PUT: only the fields given (and truthy, as Heat) change."""
        row = self.deployment(project, deployment_id)
        fields = {k: body[k] for k in DEPLOYMENT_UPDATABLE if body.get(k)}
        for key in ("input_values", "output_values"):
            if key in fields:
                fields[key] = _map(fields[key], key)
        if "config_id" in fields:
            self._config(project, str(fields["config_id"]))
        updated = self.rows.update_deployment(deployment_id, fields, datetime.now(UTC))
        if updated is None:
            raise DeploymentNotFound(deployment_id)
        self._wake(row)
        return deployment_view(updated)

    def delete_deployment(self, project: str, deployment_id: str) -> None:
        self.deployment(project, deployment_id)
        self.rows.delete_deployment(deployment_id)

    def metadata(self, project: str, server_id: str) -> list[JSON]:
        """The configs of a server's deployments, sorted by config name (Heat
        sorts so the order is deterministic and a user can control it), with
        their inputs' values: what the server's agent runs."""
        found = []
        for sd in self.rows.list_deployments(project, server_id=server_id):
            config = self.rows.get_config(sd.config_id)
            if config is not None and config.project == project:
                found.append(config)
        found.sort(key=lambda c: c.name)
        return [config_view(c, mask=False) for c in found]

    def _wake(self, row: SoftwareDeploymentRecord) -> None:
        if row.stack_id is None:
            return
        stack = self.store.get_stack_by_id(row.stack_id)
        if stack is not None:
            stack_signals.wake(self.store, stack)


def _map(value: Any, name: str) -> dict[str, JSON]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise InvalidInput.single(f"software deployment: {name} must be a map")
    return dict(value)

""":class:`~convection.store.software.SoftwareStore` over SQL (SQLite and
PostgreSQL), one transaction per method, on the store's :class:`Database`.

``put_*`` is a replace (delete and insert in one transaction, keeping the
first ``created_at``) rather than a dialect-specific upsert: these rows are
written a few times per deployment, never in bulk.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, RowMapping

from convection.store._sql_db import Database
from convection.store._sql_rows import record_values
from convection.store._time import aware, utcnow
from convection.store.schema import software_configs, software_deployments
from convection.store.software import (
    SoftwareConfigRecord,
    SoftwareDeploymentRecord,
    check_update,
    page_after,
)


def _config(row: RowMapping) -> SoftwareConfigRecord:
    values = dict(row)
    values["secret_inputs"] = tuple(values.get("secret_inputs") or ())
    return SoftwareConfigRecord(**values)


def _deployment(row: RowMapping) -> SoftwareDeploymentRecord:
    return SoftwareDeploymentRecord(**row)


def _replace(conn: Connection, table: sa.Table, values: dict[str, Any]) -> None:
    """Insert ``values``, replacing a row with the same id but keeping its
    ``created_at``."""
    found = conn.execute(
        sa.select(table.c.created_at).where(table.c.id == values["id"])
    ).scalar_one_or_none()
    if found is not None:
        values["created_at"] = found
        conn.execute(table.delete().where(table.c.id == values["id"]))
    conn.execute(table.insert(), values)


class SQLSoftware:
    """The software rows of one SQL database."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def _rows(self, query: sa.Select[Any]) -> list[RowMapping]:
        return list(self._db.read(lambda conn: conn.execute(query).mappings().all()))

    def put_config(self, config: SoftwareConfigRecord) -> None:
        values = record_values(config, utcnow())
        values["secret_inputs"] = list(config.secret_inputs)
        values["config"] = dict(config.config)
        self._db.write(lambda conn: _replace(conn, software_configs, values))

    def get_config(self, config_id: str) -> SoftwareConfigRecord | None:
        rows = self._rows(sa.select(software_configs).where(software_configs.c.id == config_id))
        return _config(rows[0]) if rows else None

    def list_configs(
        self, project: str, *, limit: int | None = None, marker: str | None = None
    ) -> list[SoftwareConfigRecord]:
        t = software_configs
        query = sa.select(t).where(t.c.project == project).order_by(t.c.created_at, t.c.id)
        return page_after([_config(r) for r in self._rows(query)], limit, marker)

    def delete_config(self, config_id: str) -> bool:
        statement = software_configs.delete().where(software_configs.c.id == config_id)
        return bool(self._db.write(lambda conn: conn.execute(statement).rowcount))

    def put_deployment(self, deployment: SoftwareDeploymentRecord) -> None:
        values = record_values(deployment, utcnow())
        values["input_values"] = dict(deployment.input_values)
        values["output_values"] = dict(deployment.output_values)
        self._db.write(lambda conn: _replace(conn, software_deployments, values))

    def get_deployment(self, deployment_id: str) -> SoftwareDeploymentRecord | None:
        t = software_deployments
        rows = self._rows(sa.select(t).where(t.c.id == deployment_id))
        return _deployment(rows[0]) if rows else None

    def list_deployments(
        self, project: str, *, server_id: str | None = None
    ) -> list[SoftwareDeploymentRecord]:
        t = software_deployments
        query = sa.select(t).where(t.c.project == project).order_by(t.c.created_at, t.c.id)
        if server_id is not None:
            query = query.where(t.c.server_id == server_id)
        return [_deployment(r) for r in self._rows(query)]

    def update_deployment(
        self, deployment_id: str, fields: Mapping[str, Any], now: datetime
    ) -> SoftwareDeploymentRecord | None:
        check_update(fields)
        t = software_deployments
        values = {**fields, "updated_at": aware(now, "updated_at")}

        def run(conn: Connection) -> SoftwareDeploymentRecord | None:
            conn.execute(t.update().where(t.c.id == deployment_id).values(values))
            row = conn.execute(sa.select(t).where(t.c.id == deployment_id)).mappings().first()
            return None if row is None else _deployment(row)

        return self._db.write(run)

    def delete_deployment(self, deployment_id: str) -> bool:
        statement = software_deployments.delete().where(software_deployments.c.id == deployment_id)
        return bool(self._db.write(lambda conn: conn.execute(statement).rowcount))

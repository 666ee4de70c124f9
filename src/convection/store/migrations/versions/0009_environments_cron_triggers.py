"""Stored environments and cron triggers (Mistral's ``environments_v2`` and
``cron_triggers_v2``).

Revision ID: 0009
Revises: 0008
Create Date: 2027-01-12

Both are unique per (name, project). ``cron_triggers.next_execution_time``
is indexed: an engine's periodic check reads only the due rows.

Frozen: states the change as of revision 0009; does not import
``convection.store.schema``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _text(name: str, *, nullable: bool = False) -> sa.Column[Any]:
    return sa.Column(name, sa.String(), nullable=nullable)


def _json(name: str) -> sa.Column[Any]:
    return sa.Column(name, sa.JSON(), nullable=False)


def _when(name: str, *, nullable: bool = True) -> sa.Column[Any]:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def _index(table: str, *columns: str) -> None:
    op.create_index(f"ix_{table}_{'_'.join(columns)}", table, list(columns))


def upgrade() -> None:
    op.create_table(
        "environments",
        *(_text(c) for c in ("id", "project", "name")),
        sa.Column("description", sa.Text(), nullable=True),
        _json("variables"),
        _text("scope"),
        _when("created_at", nullable=False),
        _when("updated_at"),
        sa.PrimaryKeyConstraint("id", name="pk_environments"),
        sa.UniqueConstraint("name", "project", name="uq_environments_name_project"),
    )
    _index("environments", "project", "created_at")
    op.create_table(
        "cron_triggers",
        *(_text(c) for c in ("id", "project", "name")),
        _text("pattern", nullable=True),
        _when("first_execution_time"),
        _when("next_execution_time", nullable=False),
        sa.Column("remaining_executions", sa.Integer(), nullable=True),
        *(_text(c) for c in ("workflow_name", "workflow_id", "workflow_namespace")),
        _json("workflow_input"),
        _json("workflow_params"),
        _text("scope"),
        _when("created_at", nullable=False),
        _when("updated_at"),
        sa.PrimaryKeyConstraint("id", name="pk_cron_triggers"),
        sa.UniqueConstraint("name", "project", name="uq_cron_triggers_name_project"),
    )
    _index("cron_triggers", "next_execution_time")
    _index("cron_triggers", "project", "created_at")
    _index("cron_triggers", "workflow_id")


def downgrade() -> None:
    op.drop_table("cron_triggers")
    op.drop_table("environments")

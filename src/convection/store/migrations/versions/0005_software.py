"""Software configs and deployments: the rows Heat's software API serves.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-30

Frozen: states the change as of revision 0005; does not import
``convection.store.schema``.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _text(name: str, *, nullable: bool = False) -> sa.Column[str]:
    return sa.Column(name, sa.String(), nullable=nullable)


def upgrade() -> None:
    when = sa.DateTime(timezone=True)
    op.create_table(
        "software_configs",
        _text("id"),
        _text("project"),
        _text("name"),
        _text("group"),
        sa.Column("config", sa.JSON(), nullable=False),
        sa.Column("secret_inputs", sa.JSON(), nullable=False),
        _text("stack_id", nullable=True),
        _text("resource_name", nullable=True),
        sa.Column("created_at", when, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_software_configs"),
    )
    op.create_index(
        "ix_software_configs_project_created_at", "software_configs", ["project", "created_at"]
    )
    op.create_table(
        "software_deployments",
        _text("id"),
        _text("project"),
        _text("server_id"),
        _text("config_id"),
        sa.Column("input_values", sa.JSON(), nullable=False),
        sa.Column("output_values", sa.JSON(), nullable=False),
        _text("action"),
        _text("status"),
        sa.Column("status_reason", sa.Text(), nullable=False),
        _text("stack_id", nullable=True),
        _text("resource_name", nullable=True),
        sa.Column("created_at", when, nullable=False),
        sa.Column("updated_at", when, nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_software_deployments"),
    )
    op.create_index(
        "ix_software_deployments_project_server_id",
        "software_deployments",
        ["project", "server_id"],
    )


def downgrade() -> None:
    op.drop_index("ix_software_deployments_project_server_id", table_name="software_deployments")
    op.drop_table("software_deployments")
    op.drop_index("ix_software_configs_project_created_at", table_name="software_configs")
    op.drop_table("software_configs")

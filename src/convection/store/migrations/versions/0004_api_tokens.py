"""API tokens: hashed, project-scoped, optionally narrowed to a resource or server.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-30

Frozen: states the change as of revision 0004; does not import
``convection.store.schema``.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    when = sa.DateTime(timezone=True)
    op.create_table(
        "api_tokens",
        sa.Column("id", sa.String(), nullable=False),
        sa.Column("secret_hash", sa.String(), nullable=False),
        sa.Column("project", sa.String(), nullable=False),
        sa.Column("role", sa.String(), nullable=False),
        sa.Column("description", sa.String(), nullable=True),
        sa.Column("stack_id", sa.String(), nullable=True),
        sa.Column("resource_name", sa.String(), nullable=True),
        sa.Column("server_id", sa.String(), nullable=True),
        sa.Column("created_at", when, nullable=False),
        sa.Column("expires_at", when, nullable=True),
        sa.Column("revoked_at", when, nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_api_tokens"),
        sa.UniqueConstraint("secret_hash", name="uq_api_tokens_secret_hash"),
    )
    op.create_index("ix_api_tokens_project", "api_tokens", ["project"])
    op.create_index("ix_api_tokens_stack_id", "api_tokens", ["stack_id"])


def downgrade() -> None:
    op.drop_index("ix_api_tokens_stack_id", table_name="api_tokens")
    op.drop_index("ix_api_tokens_project", table_name="api_tokens")
    op.drop_table("api_tokens")

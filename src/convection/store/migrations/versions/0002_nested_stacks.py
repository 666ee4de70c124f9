"""Nested stacks: each stack knows its root and depth; roots count the tree.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-30

Frozen: states the change as of revision 0002; does not import
``convection.store.schema``.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_COUNTS = ("nested_depth", "resource_count", "nested_resources")


def upgrade() -> None:
    with op.batch_alter_table("stacks") as batch:
        batch.add_column(sa.Column("root_id", sa.String(), nullable=True))
        for name in _COUNTS:
            batch.add_column(sa.Column(name, sa.Integer(), nullable=False, server_default="0"))


def downgrade() -> None:
    with op.batch_alter_table("stacks") as batch:
        for name in ("root_id", *_COUNTS):
            batch.drop_column(name)

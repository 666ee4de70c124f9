"""Traversal leases: the engine running a traversal, and until when.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-30

Frozen: states the change as of revision 0003; does not import
``convection.store.schema``.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("traversals") as batch:
        batch.add_column(sa.Column("lease_owner", sa.String(), nullable=True))
        batch.add_column(sa.Column("lease_until", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("traversals") as batch:
        batch.drop_column("lease_until")
        batch.drop_column("lease_owner")

"""Resources: the type as the template wrote it.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-02

Heat shows a resource's type as written (an alias, a template resource's
own file name); the ``type`` column holds what the registry resolved it
to, which the engine runs. Rows written before this revision keep NULL and
are shown with ``type``.

Frozen: states the change as of revision 0007; does not import
``convection.store.schema``.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("resources", sa.Column("template_type", sa.String(), nullable=True))


def downgrade() -> None:
    op.drop_column("resources", "template_type")

"""Traversal nodes: partial indexes on the ready and the running nodes.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-30

The two full indexes on ``state`` were rewritten by every state change of
every node (waiting, ready, running, done), which was a fifth of the
statement time of a large create. A node is now in an index only while it
is ready (claims) or running (lease reclaim).

Frozen: states the change as of revision 0006; does not import
``convection.store.schema``.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_TABLE = "traversal_nodes"


def _partial(name: str, column: str, state: str) -> None:
    where = sa.text(f"state = '{state}'")
    op.create_index(name, _TABLE, [column], sqlite_where=where, postgresql_where=where)


def upgrade() -> None:
    op.drop_index("ix_traversal_nodes_traversal_id_state", table_name=_TABLE)
    op.drop_index("ix_traversal_nodes_state_lease_until", table_name=_TABLE)
    _partial("ix_traversal_nodes_ready", "traversal_id", "ready")
    _partial("ix_traversal_nodes_running", "lease_until", "running")


def downgrade() -> None:
    op.drop_index("ix_traversal_nodes_running", table_name=_TABLE)
    op.drop_index("ix_traversal_nodes_ready", table_name=_TABLE)
    op.create_index("ix_traversal_nodes_state_lease_until", _TABLE, ["state", "lease_until"])
    op.create_index("ix_traversal_nodes_traversal_id_state", _TABLE, ["traversal_id", "state"])

"""Running processes (engines, workers, API servers): one row each, written
by the process's own heartbeat.

Revision ID: 0010
Revises: 0009
Create Date: 2027-02-02

Frozen: states the change as of revision 0010; does not import
``convection.store.schema``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _text(name: str) -> sa.Column[Any]:
    return sa.Column(name, sa.String(), nullable=False)


def _int(name: str) -> sa.Column[Any]:
    return sa.Column(name, sa.Integer(), nullable=False)


def _json(name: str) -> sa.Column[Any]:
    return sa.Column(name, sa.JSON(), nullable=False)


def _when(name: str) -> sa.Column[Any]:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=False)


def upgrade() -> None:
    op.create_table(
        "processes",
        *(_text(c) for c in ("id", "kind", "host")),
        _int("pid"),
        _json("queues"),
        _int("concurrency"),
        _int("running"),
        _json("stats"),
        _when("started_at"),
        _when("heartbeat_at"),
        sa.PrimaryKeyConstraint("id", name="pk_processes"),
    )


def downgrade() -> None:
    op.drop_table("processes")

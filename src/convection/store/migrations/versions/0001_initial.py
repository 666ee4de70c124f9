"""Initial schema: stacks, templates, resources, traversals, timers, events, signals.

Revision ID: 0001
Revises:
Create Date: 2026-11-30

Frozen: this file states the schema as of revision 0001 and must not import
``convection.store.schema``, which moves on with later revisions.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _text(name: str, nullable: bool = False) -> sa.Column[Any]:
    return sa.Column(name, sa.String(), nullable=nullable)


def _when(name: str, nullable: bool = True) -> sa.Column[Any]:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def _json(name: str) -> sa.Column[Any]:
    return sa.Column(name, sa.JSON(), nullable=False)


def _fk(column: str, table: str, target: str, cascade: bool = True) -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint(
        [column],
        [target],
        name=op.f(f"fk_{table}_{column}_{target.split('.')[0]}"),
        ondelete="CASCADE" if cascade else None,
    )


def _serial_table(name: str, *items: sa.schema.SchemaItem) -> None:
    """A table with an integer id never reused (SQLite AUTOINCREMENT)."""
    op.create_table(
        name,
        sa.Column("id", sa.Integer(), nullable=False),
        *items,
        sa.PrimaryKeyConstraint("id", name=op.f(f"pk_{name}")),
        sqlite_autoincrement=True,
    )


def _index(table: str, *columns: str) -> None:
    op.create_index(op.f(f"ix_{table}_{'_'.join(columns)}"), table, list(columns))


def _stacks() -> None:
    op.create_table(
        "stacks",
        *(_text(c) for c in ("id", "project", "name", "action", "status")),
        sa.Column("status_reason", sa.Text(), nullable=False),
        sa.Column("template_id", sa.Integer(), nullable=True),
        sa.Column("prev_template_id", sa.Integer(), nullable=True),
        _text("traversal_id", nullable=True),
        _json("parameters"),
        sa.Column("disable_rollback", sa.Boolean(), nullable=False),
        sa.Column("timeout_mins", sa.Integer(), nullable=True),
        _json("outputs"),
        _text("parent_id", nullable=True),
        _text("parent_resource", nullable=True),
        _json("tags"),
        _when("created_at", nullable=False),
        _when("updated_at"),
        _when("deleted_at"),
        _fk("parent_id", "stacks", "stacks.id"),
        _fk("prev_template_id", "stacks", "raw_templates.id", cascade=False),
        _fk("template_id", "stacks", "raw_templates.id", cascade=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_stacks")),
    )
    live = sa.text("deleted_at IS NULL")
    op.create_index(
        "uq_stacks_live_name",
        "stacks",
        ["project", "name"],
        unique=True,
        sqlite_where=live,
        postgresql_where=live,
    )
    _index("stacks", "parent_id")
    _index("stacks", "project", "created_at")


def _resources() -> None:
    _serial_table(
        "resources",
        _text("stack_id"),
        *(_text(c) for c in ("name", "type", "action", "status")),
        sa.Column("status_reason", sa.Text(), nullable=False),
        _text("physical_id", nullable=True),
        _text("reference_id", nullable=True),
        *(_json(c) for c in ("properties", "attributes", "data")),
        _text("definition_hash"),
        _json("requires"),
        sa.Column("current", sa.Boolean(), nullable=False),
        sa.Column("replaces", sa.Integer(), nullable=True),
        sa.Column("replaced_by", sa.Integer(), nullable=True),
        _text("deletion_policy"),
        _text("external_id", nullable=True),
        sa.Column("unhealthy", sa.Boolean(), nullable=False),
        _when("created_at", nullable=False),
        _when("updated_at"),
        _fk("stack_id", "resources", "stacks.id"),
    )
    _index("resources", "stack_id", "current")


def _traversals() -> None:
    op.create_table(
        "traversals",
        *(_text(c) for c in ("id", "stack_id", "action", "status")),
        sa.Column("rollback_enabled", sa.Boolean(), nullable=False),
        _when("deadline"),
        _when("started_at", nullable=False),
        _when("finished_at"),
        _fk("stack_id", "traversals", "stacks.id"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_traversals")),
    )
    _index("traversals", "stack_id")
    _index("traversals", "status")
    op.create_table(
        "traversal_nodes",
        *(_text(c) for c in ("traversal_id", "key", "kind", "resource_name")),
        sa.Column("resource_id", sa.Integer(), nullable=True),
        sa.Column("pending", sa.Integer(), nullable=False),
        _text("state"),
        _json("successors"),
        _json("payload"),
        _text("lease_owner", nullable=True),
        _when("lease_until"),
        sa.Column("attempt", sa.Integer(), nullable=False),
        _fk("traversal_id", "traversal_nodes", "traversals.id"),
        sa.PrimaryKeyConstraint("traversal_id", "key", name=op.f("pk_traversal_nodes")),
    )
    _index("traversal_nodes", "traversal_id", "state")
    _index("traversal_nodes", "state", "lease_until")
    _serial_table(
        "timers",
        _text("traversal_id"),
        _text("node_key"),
        _when("due_at", nullable=False),
        _text("purpose"),
        _fk("traversal_id", "timers", "traversals.id"),
    )
    _index("timers", "due_at")
    _index("timers", "traversal_id", "node_key")


def _events_and_signals() -> None:
    _serial_table(
        "events",
        *(_text(c) for c in ("stack_id", "resource_name", "resource_type")),
        _text("physical_resource_id", nullable=True),
        _text("action"),
        _text("status"),
        sa.Column("reason", sa.Text(), nullable=False),
        _when("timestamp", nullable=False),
        _text("uuid"),
        _fk("stack_id", "events", "stacks.id"),
    )
    _index("events", "stack_id", "id")
    _index("events", "stack_id", "resource_name", "id")
    _serial_table(
        "signals",
        _text("stack_id"),
        _text("resource_name"),
        _json("data"),
        _when("created_at", nullable=False),
        sa.Column("consumed", sa.Boolean(), nullable=False),
        _fk("stack_id", "signals", "stacks.id"),
    )
    _index("signals", "stack_id", "resource_name", "consumed")


def upgrade() -> None:
    _serial_table(
        "raw_templates",
        *(_json(c) for c in ("template", "environment", "files")),
        _when("created_at", nullable=False),
    )
    _stacks()
    _resources()
    _traversals()
    _events_and_signals()


def downgrade() -> None:
    for table in (
        "signals",
        "events",
        "timers",
        "traversal_nodes",
        "traversals",
        "resources",
        "stacks",
        "raw_templates",
    ):
        op.drop_table(table)

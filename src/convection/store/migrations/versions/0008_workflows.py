"""Workflows: definitions, executions, tasks, action executions; traversals of
two kinds.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-03

A traversal is owned by a stack (kind ``stack``, every existing row: the
server default) or by a workflow execution (kind ``workflow``):
``stack_id`` becomes nullable, ``execution_id`` is added, and a CHECK holds
exactly the owner its kind says. On SQLite the traversals table is copied
(batch mode), which ``Database.migrate`` runs with foreign keys off so the
copy's drop of the old table does not cascade to nodes and timers.

The downgrade deletes workflow traversals (their nodes and timers first,
explicitly: SQLite's foreign keys are off meanwhile) and the workflow
tables; stack rows are untouched either way.

Frozen: states the change as of revision 0008; does not import
``convection.store.schema``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_OWNER = (
    "(kind = 'stack' AND stack_id IS NOT NULL AND execution_id IS NULL)"
    " OR (kind = 'workflow' AND execution_id IS NOT NULL AND stack_id IS NULL)"
)
_EXECUTION_FK = "fk_traversals_execution_id_workflow_executions"


def _text(name: str, *, nullable: bool = False) -> sa.Column[Any]:
    return sa.Column(name, sa.String(), nullable=nullable)


def _long(name: str, *, nullable: bool = False) -> sa.Column[Any]:
    return sa.Column(name, sa.Text(), nullable=nullable)


def _json(name: str) -> sa.Column[Any]:
    return sa.Column(name, sa.JSON(), nullable=False)


def _when(name: str, *, nullable: bool = True) -> sa.Column[Any]:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def _flag(name: str) -> sa.Column[Any]:
    return sa.Column(name, sa.Boolean(), nullable=False)


def _index(table: str, *columns: str) -> None:
    op.create_index(f"ix_{table}_{'_'.join(columns)}", table, list(columns))


def _definition(name: str, *extra: sa.Column[Any]) -> None:
    op.create_table(
        name,
        *(_text(c) for c in ("id", "project", "name", "namespace", "scope")),
        _long("definition"),
        *extra,
        _json("tags"),
        _when("created_at", nullable=False),
        _when("updated_at"),
        sa.PrimaryKeyConstraint("id", name=f"pk_{name}"),
        sa.UniqueConstraint(
            "name", "namespace", "project", name=f"uq_{name}_name_namespace_project"
        ),
    )


def upgrade() -> None:
    _definition("workflow_definitions", _long("input"), _json("interface"))
    _index("workflow_definitions", "project", "created_at")
    _definition("workbooks")
    _index("workbooks", "project", "created_at")
    _definition("action_definitions", _long("input"), _long("description"))
    _index("action_definitions", "project", "name")
    op.create_table(
        "workflow_executions",
        *(_text(c) for c in ("id", "project", "workflow_id", "workflow_name")),
        _text("workflow_namespace"),
        _long("description"),
        _text("state"),
        _long("state_info", nullable=True),
        _long("definition"),
        *(_json(c) for c in ("input", "params", "output", "context")),
        *(_text(c, nullable=True) for c in ("task_execution_id", "root_execution_id")),
        _text("traversal_id", nullable=True),
        _json("tags"),
        _when("created_at", nullable=False),
        _when("updated_at"),
        sa.PrimaryKeyConstraint("id", name="pk_workflow_executions"),
    )
    _index("workflow_executions", "project", "created_at")
    _index("workflow_executions", "task_execution_id")
    _index("workflow_executions", "root_execution_id")
    op.create_table(
        "task_executions",
        _text("id"),
        _text("execution_id"),
        _text("project"),
        _text("name"),
        _text("node_key", nullable=True),
        _text("state"),
        _long("state_info", nullable=True),
        _text("type"),
        *(_json(c) for c in ("published", "predecessors", "runtime_context")),
        _flag("processed"),
        _flag("error_handled"),
        _when("created_at", nullable=False),
        *(_when(c) for c in ("updated_at", "started_at", "finished_at")),
        sa.ForeignKeyConstraint(
            ["execution_id"],
            ["workflow_executions.id"],
            name="fk_task_executions_execution_id_workflow_executions",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name="pk_task_executions"),
    )
    _index("task_executions", "execution_id", "name")
    _index("task_executions", "project", "created_at")
    op.create_table(
        "action_executions",
        *(_text(c) for c in ("id", "project", "name")),
        _text("task_execution_id", nullable=True),
        _text("state"),
        _long("state_info", nullable=True),
        _flag("accepted"),
        _json("input"),
        _json("output"),
        _flag("is_sync"),
        _when("created_at", nullable=False),
        _when("updated_at"),
        sa.ForeignKeyConstraint(
            ["task_execution_id"],
            ["task_executions.id"],
            name="fk_action_executions_task_execution_id_task_executions",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name="pk_action_executions"),
    )
    _index("action_executions", "task_execution_id")
    _index("action_executions", "project", "created_at")

    with op.batch_alter_table("traversals") as batch:
        batch.alter_column("stack_id", existing_type=sa.String(), nullable=True)
        batch.add_column(sa.Column("kind", sa.String(), nullable=False, server_default="stack"))
        batch.add_column(sa.Column("execution_id", sa.String(), nullable=True))
        batch.create_foreign_key(
            _EXECUTION_FK, "workflow_executions", ["execution_id"], ["id"], ondelete="CASCADE"
        )
        batch.create_check_constraint("ck_traversals_owner", _OWNER)
        batch.create_index("ix_traversals_execution_id", ["execution_id"])


def downgrade() -> None:
    owned = sa.text("SELECT id FROM traversals WHERE kind = 'workflow'")
    for table, column in (("timers", "traversal_id"), ("traversal_nodes", "traversal_id")):
        op.execute(sa.text(f"DELETE FROM {table} WHERE {column} IN ({owned.text})"))
    op.execute(sa.text("DELETE FROM traversals WHERE kind = 'workflow'"))
    with op.batch_alter_table("traversals") as batch:
        batch.drop_index("ix_traversals_execution_id")
        batch.drop_constraint("ck_traversals_owner", type_="check")
        batch.drop_constraint(_EXECUTION_FK, type_="foreignkey")
        batch.drop_column("execution_id")
        batch.drop_column("kind")
        batch.alter_column("stack_id", existing_type=sa.String(), nullable=False)
    for table in ("action_executions", "task_executions", "workflow_executions"):
        op.drop_table(table)
    for table in ("action_definitions", "workbooks", "workflow_definitions"):
        op.drop_table(table)

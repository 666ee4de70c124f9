"""The store's tables, as SQLAlchemy Core (no ORM).

Why Core: the store speaks in short, explicit statements (one UPDATE per
change kind per batch), and records are frozen dataclasses built from rows;
an identity map would only add cost and hidden state.

Choices worth knowing:

* JSON columns use the generic ``JSON`` type, never PostgreSQL ``JSONB``:
  JSONB reorders keys, and templates must round-trip with their key order
  (graph order is insertion order, so a reloaded template must equal the
  original).
* Datetimes go through :class:`UTCDateTime`: aware UTC in and out on every
  backend. SQLite keeps them as fixed-width text, so comparisons in SQL
  (``due_at <= :now``) stay correct.
* Tables that lose rows (resources, timers, events, signals, templates) use
  SQLite ``AUTOINCREMENT`` so an id is never reused: a stale ``replaces``
  pointer or event cursor must not land on a newer row.
* ``stacks.traversal_id`` and ``resources.replaces/replaced_by`` are plain
  columns, not foreign keys: they are pointers that may outlive their target
  (a cleanup deletes the replaced row; traversals reference stacks already).

This module must match ``migrations/versions`` at head; a test compares them.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Dialect

metadata = sa.MetaData(
    naming_convention={
        "ix": "ix_%(table_name)s_%(column_0_N_name)s",
        "uq": "uq_%(table_name)s_%(column_0_N_name)s",
        "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
        "pk": "pk_%(table_name)s",
    }
)


class UTCDateTime(sa.types.TypeDecorator[datetime]):
    """Aware UTC datetimes on every backend.

    SQLite has no timezone support and would silently drop ``tzinfo``; a naive
    value is refused on the way in so that local time never sneaks into the
    journal, and every value comes back with ``tzinfo=UTC``.
    """

    impl = sa.DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None or value.utcoffset() is None:
            raise ValueError(f"naive datetime {value!r}: the store takes aware UTC datetimes")
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        assert isinstance(value, datetime)
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)


def _text(name: str, *, nullable: bool = False) -> sa.Column[str]:
    return sa.Column(name, sa.String(), nullable=nullable)


def _when(name: str, *, nullable: bool = True) -> sa.Column[datetime]:
    return sa.Column(name, UTCDateTime(), nullable=nullable)


def _json(name: str) -> sa.Column[Any]:
    return sa.Column(name, sa.JSON(), nullable=False)


def _cascade(target: str) -> sa.ForeignKey:
    return sa.ForeignKey(target, ondelete="CASCADE")


raw_templates = sa.Table(
    "raw_templates",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    _json("template"),
    _json("environment"),
    _json("files"),
    _when("created_at", nullable=False),
    sqlite_autoincrement=True,
)

stacks = sa.Table(
    "stacks",
    metadata,
    _text("id"),
    _text("project"),
    _text("name"),
    _text("action"),
    _text("status"),
    sa.Column("status_reason", sa.Text(), nullable=False),
    sa.Column("template_id", sa.Integer, sa.ForeignKey("raw_templates.id")),
    sa.Column("prev_template_id", sa.Integer, sa.ForeignKey("raw_templates.id")),
    _text("traversal_id", nullable=True),
    _json("parameters"),
    sa.Column("disable_rollback", sa.Boolean(), nullable=False),
    sa.Column("timeout_mins", sa.Integer),
    _json("outputs"),
    sa.Column("parent_id", sa.String(), _cascade("stacks.id")),
    _text("parent_resource", nullable=True),
    # Nested stacks (revision 0002): the tree's root, the depth, and the
    # running resource count of the tree kept on the root.
    _text("root_id", nullable=True),
    sa.Column("nested_depth", sa.Integer, nullable=False, server_default="0"),
    sa.Column("resource_count", sa.Integer, nullable=False, server_default="0"),
    sa.Column("nested_resources", sa.Integer, nullable=False, server_default="0"),
    _json("tags"),
    _when("created_at", nullable=False),
    _when("updated_at"),
    _when("deleted_at"),
    sa.PrimaryKeyConstraint("id"),
)
# A live stack's name is unique in its project; a deleted one frees the name.
sa.Index(
    "uq_stacks_live_name",
    stacks.c.project,
    stacks.c.name,
    unique=True,
    sqlite_where=stacks.c.deleted_at.is_(None),
    postgresql_where=stacks.c.deleted_at.is_(None),
)
sa.Index(None, stacks.c.project, stacks.c.created_at)
sa.Index(None, stacks.c.parent_id)

resources = sa.Table(
    "resources",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("stack_id", sa.String(), _cascade("stacks.id"), nullable=False),
    _text("name"),
    _text("type"),
    _text("action"),
    _text("status"),
    sa.Column("status_reason", sa.Text(), nullable=False),
    _text("physical_id", nullable=True),
    _text("reference_id", nullable=True),
    _json("properties"),
    _json("attributes"),
    _json("data"),
    _text("definition_hash"),
    _json("requires"),
    sa.Column("current", sa.Boolean(), nullable=False),
    sa.Column("replaces", sa.Integer),
    sa.Column("replaced_by", sa.Integer),
    _text("deletion_policy"),
    _text("external_id", nullable=True),
    _text("template_type", nullable=True),
    sa.Column("unhealthy", sa.Boolean(), nullable=False),
    _when("created_at", nullable=False),
    _when("updated_at"),
    sqlite_autoincrement=True,
)
sa.Index(None, resources.c.stack_id, resources.c.current)

traversals = sa.Table(
    "traversals",
    metadata,
    _text("id"),
    # Its owner (revision 0008): a stack, or a workflow execution; exactly
    # one, as its kind says (the CHECK below).
    sa.Column("stack_id", sa.String(), _cascade("stacks.id"), nullable=True),
    _text("action"),
    _text("status"),
    sa.Column("rollback_enabled", sa.Boolean(), nullable=False),
    _when("deadline"),
    _when("started_at", nullable=False),
    _when("finished_at"),
    # The engine running it (take_traversal); revision 0003.
    _text("lease_owner", nullable=True),
    _when("lease_until"),
    sa.Column("kind", sa.String(), nullable=False, server_default="stack"),
    sa.Column("execution_id", sa.String(), _cascade("workflow_executions.id"), nullable=True),
    sa.PrimaryKeyConstraint("id"),
    sa.CheckConstraint(
        "(kind = 'stack' AND stack_id IS NOT NULL AND execution_id IS NULL)"
        " OR (kind = 'workflow' AND execution_id IS NOT NULL AND stack_id IS NULL)",
        name="ck_traversals_owner",
    ),
)
sa.Index(None, traversals.c.stack_id)
sa.Index(None, traversals.c.status)
sa.Index(None, traversals.c.execution_id)

traversal_nodes = sa.Table(
    "traversal_nodes",
    metadata,
    sa.Column("traversal_id", sa.String(), _cascade("traversals.id"), nullable=False),
    _text("key"),
    _text("kind"),
    _text("resource_name"),
    sa.Column("resource_id", sa.Integer),
    sa.Column("pending", sa.Integer, nullable=False),
    _text("state"),
    _json("successors"),
    _json("payload"),
    _text("lease_owner", nullable=True),
    _when("lease_until"),
    sa.Column("attempt", sa.Integer, nullable=False),
    sa.PrimaryKeyConstraint("traversal_id", "key"),
)
# Partial indexes: a node is in each only while it is ready / running, so
# the other state changes of its life (waiting, done; tens of thousands in a
# large stack's traversal) touch neither. Queries must name the state as a
# literal, not a bind, for the planners to use them (_sql_statements).
_READY = sa.text("state = 'ready'")
_RUNNING = sa.text("state = 'running'")
# claim_ready: the ready nodes of one traversal.
sa.Index(
    "ix_traversal_nodes_ready",
    traversal_nodes.c.traversal_id,
    sqlite_where=_READY,
    postgresql_where=_READY,
)
# reclaim_expired: running nodes by lease deadline, across traversals.
sa.Index(
    "ix_traversal_nodes_running",
    traversal_nodes.c.lease_until,
    sqlite_where=_RUNNING,
    postgresql_where=_RUNNING,
)

timers = sa.Table(
    "timers",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("traversal_id", sa.String(), _cascade("traversals.id"), nullable=False),
    _text("node_key"),
    _when("due_at", nullable=False),
    _text("purpose"),
    sqlite_autoincrement=True,
)
sa.Index(None, timers.c.due_at)
sa.Index(None, timers.c.traversal_id, timers.c.node_key)

events = sa.Table(
    "events",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("stack_id", sa.String(), _cascade("stacks.id"), nullable=False),
    _text("resource_name"),
    _text("resource_type"),
    _text("physical_resource_id", nullable=True),
    _text("action"),
    _text("status"),
    sa.Column("reason", sa.Text(), nullable=False),
    _when("timestamp", nullable=False),
    _text("uuid"),
    sqlite_autoincrement=True,
)
sa.Index(None, events.c.stack_id, events.c.id)
sa.Index(None, events.c.stack_id, events.c.resource_name, events.c.id)

signals = sa.Table(
    "signals",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("stack_id", sa.String(), _cascade("stacks.id"), nullable=False),
    _text("resource_name"),
    _json("data"),
    _when("created_at", nullable=False),
    sa.Column("consumed", sa.Boolean(), nullable=False),
    sqlite_autoincrement=True,
)
sa.Index(None, signals.c.stack_id, signals.c.resource_name, signals.c.consumed)

# API tokens (revision 0004). Only a SHA-256 of the secret is kept: the
# secrets are 256 random bits, so a slow hash would add nothing but latency
# to every request. A token may be narrowed to one resource of one stack
# (signal URLs) or to one server's deployments (the pull agent); such a
# scope is part of the row, so revoking or expiring works the same for all.
api_tokens = sa.Table(
    "api_tokens",
    metadata,
    _text("id"),
    _text("secret_hash"),
    _text("project"),
    _text("role"),
    _text("description", nullable=True),
    _text("stack_id", nullable=True),
    _text("resource_name", nullable=True),
    _text("server_id", nullable=True),
    _when("created_at", nullable=False),
    _when("expires_at"),
    _when("revoked_at"),
    sa.PrimaryKeyConstraint("id"),
    sa.UniqueConstraint("secret_hash"),
)
sa.Index(None, api_tokens.c.project)
sa.Index(None, api_tokens.c.stack_id)

# Heat's software configs and deployments (revision 0005), the rows its
# software_configs / software_deployments API serves. A row made by a stack's
# resource names it (stack_id, resource_name) so deleting the resource deletes
# it; rows made through the API have neither. No foreign key to stacks:
# stacks are soft-deleted, and API-made rows have no stack.
software_configs = sa.Table(
    "software_configs",
    metadata,
    _text("id"),
    _text("project"),
    _text("name"),
    _text("group"),
    # {"config", "inputs", "outputs", "options"}, as Heat keeps it.
    _json("config"),
    # Input names whose values are secret: masked in the API's show.
    _json("secret_inputs"),
    _text("stack_id", nullable=True),
    _text("resource_name", nullable=True),
    _when("created_at", nullable=False),
    sa.PrimaryKeyConstraint("id"),
)
sa.Index(None, software_configs.c.project, software_configs.c.created_at)

software_deployments = sa.Table(
    "software_deployments",
    metadata,
    _text("id"),
    _text("project"),
    _text("server_id"),
    _text("config_id"),
    _json("input_values"),
    _json("output_values"),
    _text("action"),
    _text("status"),
    sa.Column("status_reason", sa.Text(), nullable=False),
    _text("stack_id", nullable=True),
    _text("resource_name", nullable=True),
    _when("created_at", nullable=False),
    _when("updated_at"),
    sa.PrimaryKeyConstraint("id"),
)
sa.Index(None, software_deployments.c.project, software_deployments.c.server_id)

# Workflows (revision 0008): Mistral's definitions and executions
# (store/workflows.py says what each row is). Definitions are unique per
# (name, namespace, project). An execution points at its current traversal
# as a stack does (a plain column: traversals reference executions
# already); ``task_execution_id`` and ``root_execution_id`` are plain
# columns too (a parent's task is another execution's row, and a foreign
# key cycle would buy nothing: deletes follow the tree in code).


def _definition(name: str, *extra: sa.Column[Any]) -> sa.Table:
    return sa.Table(
        name,
        metadata,
        _text("id"),
        _text("project"),
        _text("name"),
        _text("namespace"),
        _text("scope"),
        sa.Column("definition", sa.Text(), nullable=False),
        *extra,
        _json("tags"),
        _when("created_at", nullable=False),
        _when("updated_at"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("name", "namespace", "project"),
    )


workflow_definitions = _definition(
    "workflow_definitions", sa.Column("input", sa.Text(), nullable=False), _json("interface")
)
sa.Index(None, workflow_definitions.c.project, workflow_definitions.c.created_at)
workbooks = _definition("workbooks")
sa.Index(None, workbooks.c.project, workbooks.c.created_at)
action_definitions = _definition(
    "action_definitions",
    sa.Column("input", sa.Text(), nullable=False),
    sa.Column("description", sa.Text(), nullable=False),
)
sa.Index(None, action_definitions.c.project, action_definitions.c.name)

workflow_executions = sa.Table(
    "workflow_executions",
    metadata,
    _text("id"),
    _text("project"),
    _text("workflow_id"),
    _text("workflow_name"),
    _text("workflow_namespace"),
    sa.Column("description", sa.Text(), nullable=False),
    _text("state"),
    sa.Column("state_info", sa.Text(), nullable=True),
    sa.Column("definition", sa.Text(), nullable=False),
    _json("input"),
    _json("params"),
    _json("output"),
    _json("context"),
    _text("task_execution_id", nullable=True),
    _text("root_execution_id", nullable=True),
    _text("traversal_id", nullable=True),
    _json("tags"),
    _when("created_at", nullable=False),
    _when("updated_at"),
    sa.PrimaryKeyConstraint("id"),
)
sa.Index(None, workflow_executions.c.project, workflow_executions.c.created_at)
sa.Index(None, workflow_executions.c.task_execution_id)
sa.Index(None, workflow_executions.c.root_execution_id)

task_executions = sa.Table(
    "task_executions",
    metadata,
    _text("id"),
    sa.Column("execution_id", sa.String(), _cascade("workflow_executions.id"), nullable=False),
    _text("project"),
    _text("name"),
    _text("node_key", nullable=True),
    _text("state"),
    sa.Column("state_info", sa.Text(), nullable=True),
    _text("type"),
    _json("published"),
    _json("predecessors"),
    _json("runtime_context"),
    sa.Column("processed", sa.Boolean(), nullable=False),
    sa.Column("error_handled", sa.Boolean(), nullable=False),
    _when("created_at", nullable=False),
    _when("updated_at"),
    _when("started_at"),
    _when("finished_at"),
    sa.PrimaryKeyConstraint("id"),
)
sa.Index(None, task_executions.c.execution_id, task_executions.c.name)
sa.Index(None, task_executions.c.project, task_executions.c.created_at)

action_executions = sa.Table(
    "action_executions",
    metadata,
    _text("id"),
    _text("project"),
    _text("name"),
    sa.Column("task_execution_id", sa.String(), _cascade("task_executions.id"), nullable=True),
    _text("state"),
    sa.Column("state_info", sa.Text(), nullable=True),
    sa.Column("accepted", sa.Boolean(), nullable=False),
    _json("input"),
    _json("output"),
    sa.Column("is_sync", sa.Boolean(), nullable=False),
    _when("created_at", nullable=False),
    _when("updated_at"),
    sa.PrimaryKeyConstraint("id"),
)
sa.Index(None, action_executions.c.task_execution_id)
sa.Index(None, action_executions.c.project, action_executions.c.created_at)

# Stored environments and cron triggers (revision 0009; store/scheduling.py),
# unique per (name, project) as Mistral's. Due triggers are found through
# the index on next_execution_time, so an engine's check costs what is due.
# A trigger names its workflow by id as a plain column: Mistral refuses to
# delete a workflow with triggers, and a trigger whose workflow is gone
# only fails to start.
environments = sa.Table(
    "environments",
    metadata,
    _text("id"),
    _text("project"),
    _text("name"),
    sa.Column("description", sa.Text(), nullable=True),
    _json("variables"),
    _text("scope"),
    _when("created_at", nullable=False),
    _when("updated_at"),
    sa.PrimaryKeyConstraint("id"),
    sa.UniqueConstraint("name", "project"),
)
sa.Index(None, environments.c.project, environments.c.created_at)

cron_triggers = sa.Table(
    "cron_triggers",
    metadata,
    _text("id"),
    _text("project"),
    _text("name"),
    _text("pattern", nullable=True),
    _when("first_execution_time"),
    _when("next_execution_time", nullable=False),
    sa.Column("remaining_executions", sa.Integer(), nullable=True),
    _text("workflow_name"),
    _text("workflow_id"),
    _text("workflow_namespace"),
    _json("workflow_input"),
    _json("workflow_params"),
    _text("scope"),
    _when("created_at", nullable=False),
    _when("updated_at"),
    sa.PrimaryKeyConstraint("id"),
    sa.UniqueConstraint("name", "project"),
)
sa.Index(None, cron_triggers.c.next_execution_time)
sa.Index(None, cron_triggers.c.project, cron_triggers.c.created_at)
sa.Index(None, cron_triggers.c.workflow_id)

# Running engines, workers and API servers (revision 0010): one row per
# process, upserted by its own beat (store/processes.py). No foreign keys:
# a row outlives nothing and nothing points at it.
processes = sa.Table(
    "processes",
    metadata,
    _text("id"),
    _text("kind"),
    _text("host"),
    sa.Column("pid", sa.Integer, nullable=False),
    _json("queues"),
    sa.Column("concurrency", sa.Integer, nullable=False),
    sa.Column("running", sa.Integer, nullable=False),
    _json("stats"),
    _when("started_at", nullable=False),
    _when("heartbeat_at", nullable=False),
    sa.PrimaryKeyConstraint("id"),
)

#: Every table, parents first (the order to create, and reversed to empty).
ALL_TABLES = (
    raw_templates,
    stacks,
    resources,
    workflow_executions,
    traversals,
    traversal_nodes,
    timers,
    events,
    signals,
    api_tokens,
    software_configs,
    software_deployments,
    workflow_definitions,
    workbooks,
    action_definitions,
    task_executions,
    action_executions,
    environments,
    cron_triggers,
    processes,
)

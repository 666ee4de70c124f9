"""Statements built once, with named parameters.

Building a ``select()`` per call, and deriving its cache key, cost more than
running it on SQLite; a module-level statement with ``bindparam`` is built
once and its cache key is memoized.
"""

from __future__ import annotations

import sqlalchemy as sa

from convection.store.schema import (
    events,
    raw_templates,
    resources,
    signals,
    stacks,
    timers,
    traversal_nodes,
    traversals,
    workflow_executions,
)

n = traversal_nodes
_P = sa.bindparam

STACK_BY_ID = sa.select(stacks).where(stacks.c.id == _P("id"))
STACK_OF_PROJECT = STACK_BY_ID.where(stacks.c.project == _P("project"))
LIVE_STACK_BY_NAME = sa.select(stacks).where(
    stacks.c.project == _P("project"), stacks.c.name == _P("name"), stacks.c.deleted_at.is_(None)
)
TEMPLATE_BY_ID = sa.select(raw_templates).where(raw_templates.c.id == _P("id"))
INSERT_TEMPLATE = raw_templates.insert().returning(raw_templates.c.id)

RESOURCE_BY_ID = sa.select(resources).where(resources.c.id == _P("id"))
RESOURCES_OF_STACK = (
    sa.select(resources).where(resources.c.stack_id == _P("stack_id")).order_by(resources.c.id)
)
CURRENT_RESOURCES_OF_STACK = RESOURCES_OF_STACK.where(resources.c.current.is_(True))
RESOURCES_NAMED = RESOURCES_OF_STACK.where(resources.c.name.in_(_P("names", expanding=True)))
CURRENT_RESOURCES_NAMED = RESOURCES_NAMED.where(resources.c.current.is_(True))
INSERT_RESOURCES = resources.insert().inline()
INSERT_RESOURCE_RETURNING = resources.insert().returning(resources.c.id)
NEXT_RESOURCE_IDS = sa.select(
    sa.func.nextval(sa.func.pg_get_serial_sequence("resources", "id"))
).select_from(sa.func.generate_series(1, _P("n", type_=sa.Integer())))
MAX_RESOURCE_ID = sa.select(sa.func.max(resources.c.id))
RESOURCE_IDS_AFTER = (
    sa.select(resources.c.id).where(resources.c.id > _P("after")).order_by(resources.c.id)
)

TRAVERSAL_BY_ID = sa.select(traversals).where(traversals.c.id == _P("id"))
NODE_BY_KEY = sa.select(n).where(n.c.traversal_id == _P("traversal_id"), n.c.key == _P("key"))
UNFINISHED = (
    sa.select(sa.func.count())
    .select_from(n)
    .where(
        n.c.traversal_id == _P("traversal_id"),
        n.c.state.not_in(("done", "failed", "skipped")),
    )
)
NODES_BY_KEYS = sa.select(n).where(
    n.c.traversal_id == _P("traversal_id"), n.c.key.in_(_P("keys", expanding=True))
)
NODES_OF_TRAVERSAL = sa.select(n).where(n.c.traversal_id == _P("traversal_id")).order_by(n.c.key)
INSERT_NODES = n.insert().inline()

_POINTER = (
    sa.select(stacks.c.traversal_id)
    .select_from(traversals.join(stacks, stacks.c.id == traversals.c.stack_id))
    .where(traversals.c.id == _P("traversal_id"))
)
#: The stack's traversal pointer, unlocked / FOR SHARE / FOR NO KEY UPDATE
#: (see ``_sql_queries.is_current`` for why each).
POINTER = {
    None: _POINTER,
    "share": _POINTER.with_for_update(read=True, of=stacks),
    "update": _POINTER.with_for_update(key_share=True, of=stacks),
}
_e = workflow_executions
_EXECUTION_POINTER = (
    sa.select(_e.c.traversal_id)
    .select_from(traversals.join(_e, _e.c.id == traversals.c.execution_id))
    .where(traversals.c.id == _P("traversal_id"))
)
#: The same of a workflow traversal: its execution's pointer, locked alike.
#: (Asked only when a traversal has no stack: a stack's batches never pay it.)
EXECUTION_POINTER = {
    None: _EXECUTION_POINTER,
    "share": _EXECUTION_POINTER.with_for_update(read=True, of=_e),
    "update": _EXECUTION_POINTER.with_for_update(key_share=True, of=_e),
}

# Parameters of UPDATE statements may not be named after columns, hence b_.
# A materialized CTE, not ``key IN (subquery)``: PostgreSQL may re-run an IN
# subquery per row, and each run skips the rows this very statement just
# updated, so LIMIT would not limit.
#: Literals, as the partial indexes' predicates are (schema.py).
_IS_READY = n.c.state == sa.literal_column("'ready'")
_IS_RUNNING = n.c.state == sa.literal_column("'running'")
_PICKED = (
    sa.select(n.c.key)
    .where(n.c.traversal_id == _P("b_traversal_id"), _IS_READY)
    .limit(_P("b_limit", type_=sa.Integer()))
    .with_for_update(skip_locked=True)
    .cte("picked")
    .prefix_with("MATERIALIZED", dialect="postgresql")
)
CLAIM = (
    n.update()
    .where(n.c.traversal_id == _P("b_traversal_id"), n.c.key == _PICKED.c.key, _IS_READY)
    .values(
        state="running",
        lease_owner=_P("b_owner"),
        lease_until=_P("b_lease_until", type_=n.c.lease_until.type),
        attempt=n.c.attempt + 1,
    )
    .returning(*n.c)
)
# Traversal leases (Store.take_traversal): one conditional UPDATE each, so
# of two engines racing for one traversal exactly one sees its row updated.
_t = traversals
_UNTIL = _t.c.lease_until.type
TAKE_TRAVERSAL = (
    _t.update()
    .where(
        _t.c.id == _P("b_id"),
        _t.c.status == "IN_PROGRESS",
        sa.or_(
            _t.c.lease_owner.is_(None),
            _t.c.lease_owner == _P("b_owner"),
            _t.c.lease_until.is_(None),
            _t.c.lease_until < _P("b_now", type_=_UNTIL),
        ),
    )
    .values(lease_owner=_P("b_owner"), lease_until=_P("b_until", type_=_UNTIL))
)
RENEW_TRAVERSALS = (
    _t.update()
    .where(_t.c.id.in_(_P("b_ids", expanding=True)), _t.c.lease_owner == _P("b_owner"))
    .values(lease_until=_P("b_until", type_=_UNTIL))
    .returning(_t.c.id)
)
RELEASE_TRAVERSALS = (
    _t.update()
    .where(_t.c.id.in_(_P("b_ids", expanding=True)), _t.c.lease_owner == _P("b_owner"))
    .values(lease_until=None)
)

RECLAIM = (
    n.update()
    .where(_IS_RUNNING, n.c.lease_until < _P("now", type_=n.c.lease_until.type))
    .values(state="ready", lease_owner=None, lease_until=None)
)

DUE_TIMERS = (
    sa.select(timers)
    .where(timers.c.due_at <= _P("now", type_=timers.c.due_at.type))
    .order_by(timers.c.due_at, timers.c.id)
    .limit(_P("limit", type_=sa.Integer()))
)
NEXT_DUE = sa.select(sa.func.min(timers.c.due_at))
NEXT_DUE_OF_TRAVERSAL = NEXT_DUE.where(timers.c.traversal_id == _P("traversal_id"))

EVENTS_OF_STACK = sa.select(events).where(events.c.stack_id == _P("stack_id"))
INSERT_SIGNAL = signals.insert().returning(signals.c.id)
PENDING_SIGNALS = (
    sa.select(signals)
    .where(signals.c.stack_id == _P("stack_id"), signals.c.resource_name == _P("resource_name"))
    .where(signals.c.consumed.is_(False))
    .order_by(signals.c.id)
)

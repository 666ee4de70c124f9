"""Execute a journal batch inside the caller's transaction.

:mod:`convection.store._batch` cuts the batch into phases; each phase runs
one ``executemany`` per statement group, so 1,000 changes cost a handful of
round trips. Within a group, parameters are sorted by row key: two batches
touching the same rows then lock them in the same order, which keeps
PostgreSQL deadlocks (and their retries) rare.

A statement that matches fewer rows than it has parameter sets means some
change names a missing row; the batch raises and the transaction rolls back.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Sequence
from datetime import datetime
from functools import lru_cache
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from convection.common import NotFound
from convection.store import schema
from convection.store._batch import GroupKey, plan
from convection.store._fields import check_added
from convection.store._sql_fast import executemany, executemany_columns
from convection.store._sql_rows import record_columns, record_values
from convection.store._sql_statements import INSERT_NODES
from convection.store.api import (
    AddNodes,
    AddTimer,
    AppendEvent,
    Change,
    ConsumeSignal,
    DeleteResource,
    DeleteTimers,
    JSONDict,
    ReleaseSuccessors,
    TakeTimer,
    UpdateNode,
    UpdateResource,
    UpdateStack,
    UpdateTraversal,
)
from convection.store.workflows import INSERTS, UPDATES

_Runner = Callable[[Connection, GroupKey, list[Any], datetime], None]

# Per update kind: table, key columns, record kind (for NotFound), key of a change.
_UPDATES: dict[str, tuple[sa.Table, tuple[str, ...], str, Callable[[Any], tuple[Any, ...]]]] = {
    "UpdateStack": (schema.stacks, ("id",), "stack", lambda c: (c.stack_id,)),
    "UpdateResource": (schema.resources, ("id",), "resource", lambda c: (c.resource_id,)),
    "UpdateNode": (
        schema.traversal_nodes,
        ("traversal_id", "key"),
        "traversal node",
        lambda c: (c.traversal_id, c.key),
    ),
    "UpdateTraversal": (schema.traversals, ("id",), "traversal", lambda c: (c.traversal_id,)),
    "ConsumeSignal": (schema.signals, ("id",), "signal", lambda c: (c.signal_id,)),
}


def _key_by(attr: str) -> Callable[[Any], tuple[Any, ...]]:
    def key(change: Any) -> tuple[Any, ...]:
        return (getattr(change, attr),)

    return key


# The workflow rows' updates: by id, named by the change's own field.
for _kind, (_table, _attr) in UPDATES.items():
    _UPDATES[_kind.__name__] = (
        schema.metadata.tables[_table.name],
        ("id",),
        _table.what,
        _key_by(_attr),
    )
_STAMPED = frozenset({"UpdateStack", "UpdateResource", *(k.__name__ for k in UPDATES)})
_DELETE_RESOURCE = schema.resources.delete().where(schema.resources.c.id == sa.bindparam("k_id"))
_DELETE_TIMERS = schema.timers.delete().where(
    schema.timers.c.traversal_id == sa.bindparam("k_t"),
    schema.timers.c.node_key == sa.bindparam("k_k"),
)
_TAKE_TIMER = schema.timers.delete().where(schema.timers.c.id == sa.bindparam("k_id"))
_INSERTS = {name: schema.metadata.tables[name].insert().inline() for name in ("events", "timers")}


def apply_batch(conn: Connection, changes: Sequence[Change], now: datetime) -> None:
    """Apply ``changes`` (already checked) with the meaning of their order."""
    for phase in plan(changes):
        for group, items in phase.items():
            _RUNNERS[group[0]](conn, group, items, now)


@lru_cache(maxsize=512)
def _update_stmt(table: sa.Table, keys: tuple[str, ...], columns: tuple[str, ...]) -> sa.Update:
    where = [table.c[k] == sa.bindparam(f"k_{k}", type_=table.c[k].type) for k in keys]
    values = {c: sa.bindparam(f"v_{c}", type_=table.c[c].type) for c in columns}
    return table.update().where(*where).values(values)


def _update(conn: Connection, group: GroupKey, items: list[Any], now: datetime) -> None:
    kind, fields = group
    table, keys, what, key_of = _UPDATES[kind]
    items = sorted(items, key=key_of)
    wanted = [key_of(c) for c in items]
    n = len(items)
    columns: dict[str, list[Any]] = {f"k_{k}": [w[j] for w in wanted] for j, k in enumerate(keys)}
    for field in fields:
        columns[f"v_{field}"] = [c.fields[field] for c in items]
    if kind == "ConsumeSignal":
        columns["v_consumed"] = [True] * n
    if kind in _STAMPED and "updated_at" not in fields:
        columns["v_updated_at"] = [now] * n
    values = tuple(sorted(name[2:] for name in columns if name.startswith("v_")))
    matched = executemany_columns(conn, _update_stmt(table, keys, values), columns, n)
    if matched != n:
        _raise_missing(conn, table, keys, what, wanted)
        raise AssertionError(f"{what}: {matched} rows matched {n} existing keys")


def _raise_missing(
    conn: Connection,
    table: sa.Table,
    keys: tuple[str, ...],
    what: str,
    wanted: list[tuple[Any, ...]],
) -> None:
    """Raise NotFound for the first row of ``wanted`` that does not exist;
    return when they all do (the caller then knows what else went wrong)."""
    cols = [table.c[k] for k in keys]
    found = {tuple(r) for r in conn.execute(sa.select(*cols).where(sa.tuple_(*cols).in_(wanted)))}
    for key in wanted:
        if key not in found:
            raise NotFound(what, "/".join(str(k) for k in key))


@lru_cache(maxsize=1)
def _release_stmt() -> sa.Update:
    n = schema.traversal_nodes
    by = sa.bindparam("b_n", type_=sa.Integer())
    reaches_zero = sa.and_(n.c.pending == by, n.c.state == "waiting")
    return (
        n.update()
        .where(n.c.traversal_id == sa.bindparam("k_t"), n.c.key == sa.bindparam("k_k"))
        .where(n.c.pending >= by)
        .values(pending=n.c.pending - by, state=sa.case((reaches_zero, "ready"), else_=n.c.state))
    )


def _release(conn: Connection, _group: GroupKey, items: list[Any], _now: datetime) -> None:
    """Decrement ``pending`` in SQL; one parameter set per node however many
    releases name it, and the flip to ready happens in the same statement."""
    counts = Counter((c.traversal_id, key) for c in items for key in c.keys)
    params = [{"k_t": t, "k_k": k, "b_n": n} for (t, k), n in sorted(counts.items())]
    if not params:
        return
    matched = executemany(conn, _release_stmt(), params)
    if matched == len(params):
        return
    n = schema.traversal_nodes
    _raise_missing(conn, n, ("traversal_id", "key"), "traversal node", sorted(counts))
    raise ValueError(
        "ReleaseSuccessors would take pending below zero (a node released twice?): "
        + ", ".join(f"{t}/{k}" for t, k in sorted(counts))
    )


def _delete_resources(conn: Connection, _g: GroupKey, items: list[Any], _now: datetime) -> None:
    executemany(
        conn, _DELETE_RESOURCE, [{"k_id": c.resource_id} for c in sorted(items, key=_resource_id)]
    )


def _resource_id(change: DeleteResource) -> int:
    return change.resource_id


def _delete_timers(conn: Connection, _g: GroupKey, items: list[Any], _now: datetime) -> None:
    keys = sorted({(c.traversal_id, c.node_key) for c in items})
    executemany(conn, _DELETE_TIMERS, [{"k_t": tid, "k_k": key} for tid, key in keys])


def _take_timers(conn: Connection, _g: GroupKey, items: list[Any], _now: datetime) -> None:
    """Delete timers by id; one already gone means another engine fired it
    (PostgreSQL's row lock makes the second delete wait and match nothing;
    SQLite serialises writers), so the batch rolls back."""
    ids = sorted({c.timer_id for c in items})
    matched = executemany(conn, _TAKE_TIMER, [{"k_id": i} for i in ids])
    if matched != len(ids):
        _raise_missing(conn, schema.timers, ("id",), "timer", [(i,) for i in ids])
        raise NotFound("timer", ", ".join(map(str, ids)))


def _insert_checked(conn: Connection, table: sa.Table, rows: list[JSONDict], column: str) -> None:
    """Insert ``rows``; a missing parent (foreign key) becomes NotFound.

    The parent is not looked up first (a round trip per group) nor after the
    failure (PostgreSQL has aborted the transaction by then), so the error
    names every parent id of the group when there are several."""
    try:
        executemany(conn, _INSERTS[table.name], rows, tuple(rows[0]))
    except sa.exc.IntegrityError as exc:
        if getattr(exc.orig, "sqlstate", None) != "23503" and "FOREIGN KEY" not in str(exc.orig):
            raise
        what = "stack" if column == "stack_id" else "traversal"
        raise NotFound(what, ", ".join(sorted({row[column] for row in rows}))) from exc


#: A random hex digit -> the RFC 4122 variant digit with its two low bits.
_VARIANT = {f"{d:x}": f"{(d & 3) | 8:x}" for d in range(16)}


def uuid4_texts(n: int) -> list[str]:
    """``n`` random (version 4) UUIDs as text, from one urandom call.

    What ``str(uuid.UUID(bytes=..., version=4))`` gives, formatted straight
    from the hex digits at a third of the cost: building UUID objects cost
    over half as much as the INSERT of the event row itself, for 20,000
    events in a 10,000-resource create."""
    raw = os.urandom(16 * n).hex()
    out = []
    for i in range(0, 32 * n, 32):
        h = raw[i : i + 32]
        out.append(f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{_VARIANT[h[16]]}{h[17:20]}-{h[20:32]}")
    return out


def _append_events(conn: Connection, _g: GroupKey, items: list[Any], now: datetime) -> None:
    uuids = uuid4_texts(len(items))
    rows = [
        {
            "stack_id": c.stack_id,
            "resource_name": c.resource_name,
            "resource_type": c.resource_type,
            "physical_resource_id": c.physical_resource_id,
            "action": c.action,
            "status": c.status,
            "reason": c.reason,
            "timestamp": now,
            "uuid": u,
        }
        for c, u in zip(items, uuids, strict=True)
    ]
    _insert_checked(conn, schema.events, rows, "stack_id")


def _add_timers(conn: Connection, _g: GroupKey, items: list[Any], _now: datetime) -> None:
    rows = [
        {
            "traversal_id": c.traversal_id,
            "node_key": c.node_key,
            "due_at": c.due_at,
            "purpose": c.purpose,
        }
        for c in items
    ]
    _insert_checked(conn, schema.timers, rows, "traversal_id")


def _add_nodes(conn: Connection, _g: GroupKey, items: list[Any], now: datetime) -> None:
    """Nodes added to running traversals, one ``executemany``; a missing
    traversal is NotFound, a taken key the IntegrityError ``apply`` explains."""
    nodes = [n for c in items for n in c.nodes]
    for change in items:
        check_added(change)
    if not nodes:
        return
    columns = record_columns(nodes, now)
    try:
        executemany_columns(conn, INSERT_NODES, columns, len(nodes), tuple(columns))
    except sa.exc.IntegrityError as exc:
        if getattr(exc.orig, "sqlstate", None) != "23503" and "FOREIGN KEY" not in str(exc.orig):
            raise
        raise NotFound("traversal", ", ".join(sorted({c.traversal_id for c in items}))) from exc


def _insert_rows(conn: Connection, group: GroupKey, items: list[Any], now: datetime) -> None:
    """Task and action executions, one ``executemany`` per kind. A missing
    parent (execution, task) is NotFound; a taken id is the IntegrityError
    ``SQLStore.apply`` explains."""
    kind = _BY_NAME[group[0]]
    table, attr = INSERTS[kind]
    records = [getattr(c, attr) for c in items]
    rows = [record_values(r, now) for r in records]
    try:
        executemany(conn, _ROW_INSERTS[table.name], rows, tuple(rows[0]))
    except sa.exc.IntegrityError as exc:
        if getattr(exc.orig, "sqlstate", None) != "23503" and "FOREIGN KEY" not in str(exc.orig):
            raise
        parent = "execution_id" if "execution_id" in rows[0] else "task_execution_id"
        what = "workflow execution" if parent == "execution_id" else "task execution"
        raise NotFound(what, ", ".join(sorted({str(r[parent]) for r in rows}))) from exc


_BY_NAME = {k.__name__: k for k in INSERTS}
#: One statement object per table, so the compiled form is cached (a new
#: ``insert()`` per batch compiled again every time).
_ROW_INSERTS = {
    t.name: schema.metadata.tables[t.name].insert().inline() for t, _ in INSERTS.values()
}


_RUNNERS: dict[str, _Runner] = {
    UpdateStack.__name__: _update,
    UpdateResource.__name__: _update,
    UpdateNode.__name__: _update,
    UpdateTraversal.__name__: _update,
    ConsumeSignal.__name__: _update,
    ReleaseSuccessors.__name__: _release,
    DeleteResource.__name__: _delete_resources,
    DeleteTimers.__name__: _delete_timers,
    TakeTimer.__name__: _take_timers,
    AppendEvent.__name__: _append_events,
    AddTimer.__name__: _add_timers,
    AddNodes.__name__: _add_nodes,
    **{k.__name__: _update for k in UPDATES},
    **{k.__name__: _insert_rows for k in INSERTS},
}

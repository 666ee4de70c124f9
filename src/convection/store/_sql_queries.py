"""The statements with more to them than a primary-key lookup.

Each function runs inside the transaction :class:`~convection.store.sql.SQLStore`
opened, so several of them compose into one atomic operation.
"""

from __future__ import annotations

import functools
from collections.abc import Collection, Sequence
from datetime import datetime
from typing import Any, Literal

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from convection.common import NotFound
from convection.store import _sql_remote as remote
from convection.store import _sql_rows as rows
from convection.store import _sql_statements as q
from convection.store._paging import sort_columns
from convection.store._sql_fast import executemany_columns
from convection.store._sql_read import fetch_records
from convection.store.api import STACK, TRAVERSAL_KINDS, NodeRecord, StackRecord, TraversalRecord
from convection.store.schema import raw_templates, stacks, traversals, workflow_executions

Lock = Literal["share", "update"] | None


def is_current(conn: Connection, traversal_id: str, lock: Lock = None) -> bool:
    """Does the traversal's stack still point at it?

    On PostgreSQL, ``share`` holds the stack row until commit, so a
    concurrent ``start_traversal`` (which updates that row) cannot supersede
    the traversal between this check and the batch's commit. ``update`` is
    for batches that also update the stack, so that two of them do not
    deadlock upgrading their share locks. SQLite ignores both: BEGIN
    IMMEDIATE already serialized us.
    """
    params = {"traversal_id": traversal_id}
    found = conn.execute(q.POINTER[lock], params).scalar()
    if found is None:  # no stack: a workflow traversal (or none), asked of its execution
        found = conn.execute(q.EXECUTION_POINTER[lock], params).scalar()
    return bool(found == traversal_id)


def claim(
    conn: Connection, traversal_id: str, owner: str, limit: int, lease_until: datetime
) -> list[NodeRecord]:
    """Ready → running in one statement.

    ``SKIP LOCKED`` lets several PostgreSQL engines claim from one traversal
    at once without waiting on or double-taking each other's rows; the outer
    ``state = 'ready'`` is re-checked on the locked row. SQLite has neither
    row locks nor the need: the write lock is held for the whole statement.
    """
    if limit <= 0 or not is_current(conn, traversal_id):
        return []
    params = {
        "b_traversal_id": traversal_id,
        "b_limit": limit,
        "b_owner": owner,
        "b_lease_until": lease_until,
    }
    return fetch_records(conn, q.CLAIM, params, NodeRecord)


def insert_resources(conn: Connection, columns: dict[str, list[Any]], n: int) -> list[int]:
    """Insert ``n`` resource rows given column by column; their ids in order.

    One ``executemany`` either way. PostgreSQL: the ids are drawn from the
    column's sequence first and inserted explicitly. SQLite: the new ids are
    those above the previous maximum, which is exact because the write lock
    is ours for the whole transaction and AUTOINCREMENT ids only grow."""
    if n == 1:
        row = {name: values[0] for name, values in columns.items()}
        return [int(conn.execute(q.INSERT_RESOURCE_RETURNING, row).scalar_one())]
    if conn.dialect.name == "postgresql":
        drawn = conn.execute(q.NEXT_RESOURCE_IDS, {"n": n}).scalars()
        ids = sorted(int(i) for i in drawn)
        with_ids = {**columns, "id": ids}
        executemany_columns(conn, q.INSERT_RESOURCES, with_ids, n, tuple(with_ids))
        return ids
    before = conn.execute(q.MAX_RESOURCE_ID).scalar() or 0
    executemany_columns(conn, q.INSERT_RESOURCES, columns, n, tuple(columns))
    ids = [int(i) for i in conn.execute(q.RESOURCE_IDS_AFTER, {"after": before}).scalars()]
    assert len(ids) == n, "resource ids were not all ours"
    return ids


def start_traversal(
    conn: Connection,
    traversal: TraversalRecord,
    nodes: Sequence[NodeRecord],
    stack_fields: dict[str, Any],
    now: datetime,
) -> None:
    """Point the owner first (the stack, or a workflow traversal's
    execution): its row lock serializes two racing starts, so the second
    one's supersede sees (and supersedes) the first."""
    if traversal.kind == STACK:
        owner, column, what, oid = stacks, traversals.c.stack_id, "stack", traversal.stack_id
    else:
        owner, column = workflow_executions, traversals.c.execution_id
        what, oid = "workflow execution", traversal.execution_id
    values = {**stack_fields, "traversal_id": traversal.id}
    values.setdefault("updated_at", now)
    if conn.execute(owner.update().where(owner.c.id == oid).values(values)).rowcount != 1:
        raise NotFound(what, oid)
    conn.execute(
        traversals.update()
        .where(column == oid, traversals.c.status == "IN_PROGRESS")
        .values(status="SUPERSEDED", finished_at=now)
    )
    record = {k: v[0] for k, v in rows.traversal_columns([traversal], now).items()}
    if record["started_at"] is None:
        record["started_at"] = now
    conn.execute(traversals.insert().values(record))
    remote.send(conn, [remote.WORK_NOTICE])
    if nodes:
        columns = rows.record_columns(nodes, now)
        executemany_columns(conn, q.INSERT_NODES, columns, len(nodes), tuple(columns))


def active_traversals(conn: Connection) -> list[TraversalRecord]:
    """In progress and still pointed at: what a starting engine resumes."""
    return scan_active(conn, None)[1]


def _owned(kind: str) -> tuple[sa.Join, sa.ColumnElement[bool]]:
    """Traversals of ``kind`` joined to their owners, and "still pointed at"."""
    t = traversals
    if kind == STACK:
        s = stacks
        return t.join(s, s.c.id == t.c.stack_id), s.c.traversal_id == t.c.id
    e = workflow_executions
    return t.join(e, e.c.id == t.c.execution_id), e.c.traversal_id == t.c.id


@functools.lru_cache(maxsize=16)
def _scan_statements(
    kinds: tuple[str, ...], with_owner: bool
) -> tuple[sa.Executable | None, sa.Executable]:
    """(ids the owner leases, records of the others) of active traversals
    of ``kinds``: per kind, traversals joined to their owners (one join, as
    when there were only stacks); several kinds are a UNION ALL. Without
    ``with_owner`` every active traversal is in the second."""
    t = traversals
    owner: sa.BindParameter[str] = sa.bindparam("owner")
    mine: list[sa.Select[Any]] = []
    others: list[sa.Select[Any]] = []
    for kind in kinds:
        joined, pointed = _owned(kind)
        active = sa.and_(t.c.status == "IN_PROGRESS", pointed)
        mine.append(sa.select(t.c.id).select_from(joined).where(active, t.c.lease_owner == owner))
        rest = sa.select(t).select_from(joined).where(active)
        if with_owner:
            rest = rest.where(sa.or_(t.c.lease_owner.is_(None), t.c.lease_owner != owner))
        others.append(rest)
    if len(kinds) == 1:
        return (mine[0] if with_owner else None), others[0].order_by(t.c.started_at, t.c.id)
    union = sa.union_all(*others).subquery()
    ordered = sa.select(union).order_by(union.c.started_at, union.c.id)
    return (sa.union_all(*mine) if with_owner else None), ordered


def scan_active(
    conn: Connection, owner: str | None, kinds: Collection[str] | None = None
) -> tuple[list[str], list[TraversalRecord]]:
    """``Store.scan_active``: ids only for the owner's, records for the rest
    (``owner`` None: all records)."""
    wanted = TRAVERSAL_KINDS if kinds is None else tuple(k for k in TRAVERSAL_KINDS if k in kinds)
    if not wanted:
        return [], []
    mine, others = _scan_statements(wanted, owner is not None)
    params = {"owner": owner}
    ids = [] if mine is None else [str(i) for i in conn.execute(mine, params).scalars()]
    return ids, [rows.traversal(r) for r in conn.execute(others, params).mappings()]


def _sort_expr(key: str, collate: bool) -> sa.ColumnElement[Any]:
    """``updated_at`` falls back to ``created_at`` so the key is never NULL
    (NULLs sort differently on SQLite and PostgreSQL, and break keyset
    paging). Strings sort by code point everywhere: SQLite's BINARY order,
    PostgreSQL's "C" collation."""
    if key == "updated_at":
        return sa.func.coalesce(
            stacks.c.updated_at, stacks.c.created_at, type_=stacks.c.created_at.type
        )
    col = stacks.c[key]
    return col.collate("C") if collate and key != "created_at" else col


def _marker_value(record: StackRecord, key: str) -> Any:
    if key == "updated_at":
        return record.updated_at or record.created_at
    return getattr(record, key)


def list_stacks(
    conn: Connection,
    project: str | None,
    where: list[sa.ColumnElement[bool]],
    sort_keys: Sequence[str],
    sort_dir: str,
    limit: int | None,
    marker: str | None,
) -> list[StackRecord]:
    """Keyset paging: rows strictly after the marker in sort order."""
    keys = sort_columns(sort_keys)
    collate = conn.dialect.name == "postgresql"
    exprs = [_sort_expr(k, collate) for k in keys]
    query = sa.select(stacks).where(*where)
    if project is not None:
        query = query.where(stacks.c.project == project)
    if marker is not None:
        found = conn.execute(sa.select(stacks).where(stacks.c.id == marker)).mappings().first()
        if found is None:
            raise NotFound("stack", marker)
        record = rows.stack(found)
        bound = [sa.bindparam(None, _marker_value(record, k), type_=stacks.c[k].type) for k in keys]
        left, right = sa.tuple_(*exprs), sa.tuple_(*bound)
        query = query.where(left > right if sort_dir == "asc" else left < right)
    order = [e.asc() if sort_dir == "asc" else e.desc() for e in exprs]
    query = query.order_by(*order)
    if limit is not None:
        query = query.limit(limit)
    return [rows.stack(r) for r in conn.execute(query).mappings()]


def stack_filters(
    *,
    include_deleted: bool,
    parent_id: str | None,
    show_nested: bool,
    filters: dict[str, list[str]],
) -> list[sa.ColumnElement[bool]]:
    where: list[sa.ColumnElement[bool]] = []
    if not include_deleted:
        where.append(stacks.c.deleted_at.is_(None))
    if parent_id is not None:
        where.append(stacks.c.parent_id == parent_id)
    if not show_nested:
        where.append(stacks.c.parent_id.is_(None))
    where.extend(stacks.c[key].in_(values) for key, values in filters.items())
    return where


def purge(conn: Connection, stack_id: str) -> None:
    """Delete the stack tree; foreign keys cascade to everything it owns.
    Templates have no owner column, so the ones left unused go explicitly."""
    ids, frontier = [stack_id], [stack_id]
    while frontier:
        frontier = list(
            conn.execute(sa.select(stacks.c.id).where(stacks.c.parent_id.in_(frontier))).scalars()
        )
        ids.extend(frontier)
    used = conn.execute(
        sa.select(stacks.c.template_id, stacks.c.prev_template_id).where(stacks.c.id.in_(ids))
    ).all()
    conn.execute(stacks.delete().where(stacks.c.id.in_(ids)))
    template_ids = {t for pair in used for t in pair if t is not None}
    if template_ids:
        _delete_unused_templates(conn, template_ids)


def _delete_unused_templates(conn: Connection, template_ids: set[int]) -> None:
    rt = raw_templates
    referenced = sa.exists().where(
        sa.or_(stacks.c.template_id == rt.c.id, stacks.c.prev_template_id == rt.c.id)
    )
    conn.execute(rt.delete().where(rt.c.id.in_(template_ids), ~referenced))

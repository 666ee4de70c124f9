"""Many stacks at once: a group's members, in one transaction per kind of work.

``start_stacks`` creates and starts new children, ``start_traversals``
starts traversals of existing ones (deletes), ``claim_many`` claims from
many traversals and ``current_among`` checks many traversals' currency in
one statement (``SQLStore.apply_many`` uses it too).

A group's members are child stacks, hundreds started in one engine turn.
One at a time, each cost a template insert, a stack insert, the resource
rows, the traversal and its nodes, an event and the root's running
resource count: ten transactions and some thirty statements. Here every
kind of row is one ``executemany`` for all of them, so a batch of members
costs about as much as one.

The ids of the new templates and resources are needed before the rows
that point at them are written; they are drawn the way
``_sql_queries.insert_resources`` draws resource ids (PostgreSQL: from the
sequence; SQLite: those above the previous maximum, exact under the write
lock).
"""

from __future__ import annotations

import dataclasses
import functools
from collections import Counter
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from convection.common import NotFound
from convection.store import _sql_remote as remote
from convection.store import _sql_rows as rows
from convection.store import _sql_statements as q
from convection.store._sql_apply import apply_batch
from convection.store._sql_fast import executemany_columns
from convection.store._sql_queries import Lock, insert_resources
from convection.store._sql_read import fetch_records
from convection.store.api import (
    NewStack,
    NodeRecord,
    StackRecord,
    StartedStack,
    TraversalRecord,
    TraversalStart,
)
from convection.store.schema import raw_templates, stacks, traversals, workflow_executions

_P = sa.bindparam
_INSERT_TEMPLATES = raw_templates.insert().inline()
_INSERT_STACKS = stacks.insert().inline()
_INSERT_TRAVERSALS = traversals.insert().inline()
_NEXT_TEMPLATE_IDS = sa.select(
    sa.func.nextval(sa.func.pg_get_serial_sequence("raw_templates", "id"))
).select_from(sa.func.generate_series(1, _P("n", type_=sa.Integer())))
_MAX_TEMPLATE_ID = sa.select(sa.func.max(raw_templates.c.id))
_TEMPLATE_IDS_AFTER = (
    sa.select(raw_templates.c.id)
    .where(raw_templates.c.id > _P("after"))
    .order_by(raw_templates.c.id)
)


_POINTERS = (
    sa.select(traversals.c.id)
    .select_from(traversals.join(stacks, stacks.c.id == traversals.c.stack_id))
    .where(traversals.c.id.in_(_P("ids", expanding=True)), stacks.c.traversal_id == traversals.c.id)
)
#: Current traversals among many, unlocked / FOR SHARE / FOR NO KEY UPDATE
#: of their stacks (``_sql_queries.is_current`` for one, and why).
CURRENT_AMONG = {
    None: _POINTERS,
    "share": _POINTERS.with_for_update(read=True, of=stacks),
    "update": _POINTERS.with_for_update(key_share=True, of=stacks),
}


_e = workflow_executions
_EXECUTION_POINTERS = (
    sa.select(traversals.c.id)
    .select_from(traversals.join(_e, _e.c.id == traversals.c.execution_id))
    .where(traversals.c.id.in_(_P("ids", expanding=True)), _e.c.traversal_id == traversals.c.id)
)
#: The same for workflow traversals, of their executions.
EXECUTIONS_CURRENT_AMONG = {
    None: _EXECUTION_POINTERS,
    "share": _EXECUTION_POINTERS.with_for_update(read=True, of=_e),
    "update": _EXECUTION_POINTERS.with_for_update(key_share=True, of=_e),
}


def current_among(conn: Connection, ids: Sequence[str], lock: Lock = None) -> set[str]:
    """Which of ``ids`` their owners still point at: one statement per 500,
    where ``is_current`` per traversal was most of a busy engine turn's
    statements when a group's members run. Stacks first; only the ids no
    stack answered for (workflow traversals, or superseded ones) are asked
    of the executions."""
    unique = list(dict.fromkeys(ids))
    found = _among(conn, CURRENT_AMONG[lock], unique)
    if len(found) < len(unique):
        found |= _among(conn, EXECUTIONS_CURRENT_AMONG[lock], [i for i in unique if i not in found])
    return found


def _among(conn: Connection, stmt: sa.Select[Any], ids: list[str]) -> set[str]:
    found: set[str] = set()
    for i in range(0, len(ids), 500):
        chunk = ids[i : i + 500]
        found.update(str(t) for t in conn.execute(stmt, {"ids": chunk}).scalars())
    return found


def claim_many(
    conn: Connection, wanted: Sequence[tuple[str, int]], owner: str, lease_until: datetime
) -> dict[str, list[NodeRecord]]:
    """``Store.claim_many``: the currency of all checked at once, then one
    claim statement per current traversal."""
    current = current_among(conn, [tid for tid, n in wanted if n > 0])
    claimed: dict[str, list[NodeRecord]] = {}
    for tid, limit in wanted:
        if tid not in current or limit <= 0:
            continue
        params = {
            "b_traversal_id": tid,
            "b_limit": limit,
            "b_owner": owner,
            "b_lease_until": lease_until,
        }
        claimed[tid] = fetch_records(conn, q.CLAIM, params, NodeRecord)
    return claimed


_SUPERSEDE = (
    traversals.update()
    .where(traversals.c.stack_id == _P("b_stack_id"), traversals.c.status == "IN_PROGRESS")
    .values(status="SUPERSEDED", finished_at=_P("b_now", type_=traversals.c.finished_at.type))
)


def start_traversals(conn: Connection, starts: Sequence[TraversalStart], now: datetime) -> None:
    """``Store.start_traversals``: ``_sql_queries.start_traversal`` for each,
    each kind of statement once for all (the stacks pointed first, as
    there: their row locks serialize racing starts)."""
    by_fields: dict[tuple[str, ...], list[TraversalStart]] = {}
    for start in starts:
        by_fields.setdefault(tuple(sorted(start.stack_fields)), []).append(start)
    for names, group in by_fields.items():
        _point_stacks(conn, names, group, now)
    stack_ids = [s.traversal.stack_id for s in starts]
    executemany_columns(
        conn, _SUPERSEDE, {"b_stack_id": stack_ids, "b_now": [now] * len(starts)}, len(starts)
    )
    nodes = [n for s in starts for n in s.nodes]
    _insert_traversals(conn, [s.traversal for s in starts], nodes, now)
    apply_batch(conn, [e for s in starts for e in s.events], now)


@functools.lru_cache(maxsize=64)
def _point_stmt(fields: tuple[str, ...]) -> sa.Update:
    """The stack UPDATE of a start, per set of fields (built once each)."""
    values = {f: _P(f"v_{f}", type_=stacks.c[f].type) for f in fields}
    return stacks.update().where(stacks.c.id == _P("b_id")).values(values)


def _point_stacks(
    conn: Connection, names: tuple[str, ...], starts: list[TraversalStart], now: datetime
) -> None:
    stmt = _point_stmt(
        (*names, "traversal_id", *(() if "updated_at" in names else ("updated_at",)))
    )
    columns: dict[str, list[Any]] = {"b_id": [s.traversal.stack_id for s in starts]}
    for f in names:
        columns[f"v_{f}"] = [s.stack_fields[f] for s in starts]
    columns["v_traversal_id"] = [s.traversal.id for s in starts]
    if "updated_at" not in names:
        columns["v_updated_at"] = [now] * len(starts)
    if executemany_columns(conn, stmt, columns, len(starts)) != len(starts):
        raise NotFound("stack", ", ".join(s.traversal.stack_id for s in starts))


class NoRoom(Exception):
    """A root's tree would pass the resource limit: roll back, write nothing."""


def start_stacks(
    conn: Connection, new: Sequence[NewStack], limit: int, now: datetime
) -> list[StartedStack]:
    """Write every stack of ``new`` (see ``Store.start_stacks``)."""
    _reserve(conn, new, limit)
    template_ids = _insert_templates(conn, new, now)
    _insert_stacks(conn, new, template_ids, now)
    resource_ids = _insert_resources(conn, new, now)
    nodes = [node for n, ids in zip(new, resource_ids, strict=True) for node in _with_ids(n, ids)]
    _insert_traversals(conn, [n.traversal for n in new], nodes, now)
    apply_batch(conn, [e for n in new for e in n.events], now)
    return [StartedStack(tid, ids) for tid, ids in zip(template_ids, resource_ids, strict=True)]


def _reserve(conn: Connection, new: Sequence[NewStack], limit: int) -> None:
    """One conditional UPDATE per root (``SQLStore.reserve_resources``)."""
    wanted: Counter[str] = Counter()
    for n in new:
        if n.stack.root_id is not None and n.stack.resource_count:
            wanted[n.stack.root_id] += n.stack.resource_count
    for root_id, delta in sorted(wanted.items()):
        total = stacks.c.nested_resources + delta
        stmt = stacks.update().where(stacks.c.id == root_id)
        if limit >= 0:
            stmt = stmt.where(stacks.c.resource_count + total <= limit)
        if conn.execute(stmt.values(nested_resources=total)).rowcount != 1:
            raise NoRoom(root_id)


def _insert_templates(conn: Connection, new: Sequence[NewStack], now: datetime) -> list[int]:
    columns: dict[str, list[Any]] = {
        "template": [n.template for n in new],
        "environment": [n.environment for n in new],
        "files": [n.files for n in new],
        "created_at": [now] * len(new),
    }
    count = len(new)
    if conn.dialect.name == "postgresql":
        drawn = conn.execute(_NEXT_TEMPLATE_IDS, {"n": count}).scalars()
        ids = sorted(int(i) for i in drawn)
        columns["id"] = list(ids)
        executemany_columns(conn, _INSERT_TEMPLATES, columns, count, tuple(columns))
        return ids
    before = conn.execute(_MAX_TEMPLATE_ID).scalar() or 0
    executemany_columns(conn, _INSERT_TEMPLATES, columns, count, tuple(columns))
    ids = [int(i) for i in conn.execute(_TEMPLATE_IDS_AFTER, {"after": before}).scalars()]
    assert len(ids) == count, "template ids were not all ours"
    return ids


def _insert_stacks(
    conn: Connection, new: Sequence[NewStack], template_ids: list[int], now: datetime
) -> None:
    records: list[StackRecord] = [n.stack for n in new]
    columns = rows.record_columns(records, now)
    columns["template_id"] = list(template_ids)
    columns["updated_at"] = [now] * len(records)
    executemany_columns(conn, _INSERT_STACKS, columns, len(records), tuple(columns))


def _insert_resources(conn: Connection, new: Sequence[NewStack], now: datetime) -> list[list[int]]:
    every = [r for n in new for r in n.resources]
    if not every:
        return [[] for _ in new]
    ids = iter(insert_resources(conn, rows.record_columns(every, now, drop=("id",)), len(every)))
    return [[next(ids) for _ in n.resources] for n in new]


def _insert_traversals(
    conn: Connection,
    records: Sequence[TraversalRecord],
    nodes: Sequence[NodeRecord],
    now: datetime,
) -> None:
    """The traversal rows and their nodes' rows, one statement each for all
    (shared by a start on existing stacks and the start of new ones)."""
    columns = rows.traversal_columns(records, now)
    columns["started_at"] = [t.started_at or now for t in records]
    executemany_columns(conn, _INSERT_TRAVERSALS, columns, len(records), tuple(columns))
    remote.send(conn, [remote.WORK_NOTICE])
    if nodes:
        node_columns = rows.record_columns(nodes, now)
        executemany_columns(conn, q.INSERT_NODES, node_columns, len(nodes), tuple(node_columns))


def _with_ids(new: NewStack, ids: list[int]) -> list[NodeRecord]:
    """The stack's nodes, each new resource's node given its row's id."""
    by_name = {r.name: i for r, i in zip(new.resources, ids, strict=True)}
    return [
        n
        if n.resource_id is not None or n.resource_name not in by_name
        else _node_with(n, by_name[n.resource_name])
        for n in new.nodes
    ]


def _node_with(node: NodeRecord, resource_id: int) -> NodeRecord:
    return dataclasses.replace(node, resource_id=resource_id)

"""What jobs run in other processes need of the SQL store.

* fences: a worker's write commits only while its node is still running at
  its attempt under its lease (``FenceNode``), checked in the write's own
  transaction with the row locked, so a re-run cannot be written over;
* notices: ``NOTIFY`` sent when a batch commits (``Notice``), so engines and
  workers wake on PostgreSQL without polling;
* a worker taking over the lease of the node its job runs, and renewing
  every node lease it holds in one statement.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from convection.store._sql_rows import node
from convection.store.api import (
    WORK_CHANNEL,
    AddTimer,
    Change,
    FenceNode,
    FenceTraversal,
    LostLease,
    NodeRecord,
    Notice,
    StaleNode,
)
from convection.store.schema import traversal_nodes as n
from convection.store.schema import traversals as t

WORK_NOTICE = Notice(WORK_CHANNEL)

_P = sa.bindparam
_RUNNING = n.c.state == sa.literal_column("'running'")

_FENCE = (
    sa.select(n.c.key)
    .where(
        n.c.traversal_id == _P("traversal_id"),
        n.c.key == _P("key"),
        _RUNNING,
        n.c.attempt == _P("attempt"),
        n.c.lease_owner == _P("owner"),
    )
    .with_for_update()
)

_FENCE_TRAVERSAL = (
    sa.select(t.c.id)
    .where(t.c.id == _P("traversal_id"), t.c.lease_owner == _P("owner"))
    .with_for_update()
)

_TAKE = (
    n.update()
    .where(
        n.c.traversal_id == _P("b_traversal_id"),
        n.c.key == _P("b_key"),
        _RUNNING,
        n.c.attempt == _P("b_attempt"),
    )
    .values(lease_owner=_P("b_owner"), lease_until=_P("b_until", type_=n.c.lease_until.type))
    .returning(*n.c)
)

_TAKE_CLAIMED = _TAKE.where(n.c.lease_owner == _P("b_claimed_by"))

_RENEW = (
    n.update()
    .where(n.c.lease_owner == _P("b_owner"), _RUNNING)
    .values(lease_until=_P("b_until", type_=n.c.lease_until.type))
    .returning(n.c.traversal_id, n.c.key)
)


Fence = FenceNode | FenceTraversal


def split(
    changes: Sequence[Change], now: datetime
) -> tuple[list[Fence], list[Notice], Sequence[Change]]:
    """(fences, notices, the changes to apply): fences and notices are not
    rows, so the batch planner never sees them. A timer due now (a signal's
    wake, a resumed task; not a poll's next look) adds a notice for the engines."""
    fences: list[Fence] = []
    notices: list[Notice] = []
    plain = True
    for c in changes:
        if isinstance(c, FenceNode | FenceTraversal | Notice):
            plain = False
        elif isinstance(c, AddTimer) and c.due_at <= now and not notices:
            notices.append(WORK_NOTICE)
    if plain:
        return fences, notices, changes
    fences = [c for c in changes if isinstance(c, FenceNode | FenceTraversal)]
    notices += [c for c in changes if isinstance(c, Notice)]
    rest = [c for c in changes if not isinstance(c, FenceNode | FenceTraversal | Notice)]
    return fences, notices, rest


def check_fences(conn: Connection, fences: Sequence[Fence]) -> None:
    for f in dict.fromkeys(fences):
        if isinstance(f, FenceTraversal):
            found = conn.execute(
                _FENCE_TRAVERSAL, {"traversal_id": f.traversal_id, "owner": f.owner}
            )
            if found.first() is None:
                raise LostLease(f.traversal_id, f.owner)
            continue
        params = {"traversal_id": f.traversal_id, "key": f.key, "attempt": f.attempt}
        if conn.execute(_FENCE, {**params, "owner": f.owner}).first() is None:
            raise StaleNode(f.traversal_id, f.key, f.attempt)


def send(conn: Connection, notices: Sequence[Notice]) -> None:
    """Queue the notices in this transaction: PostgreSQL delivers them at
    commit, and drops them with a rollback."""
    if conn.dialect.name != "postgresql":
        return
    for notice in dict.fromkeys(notices):
        conn.execute(sa.select(sa.func.pg_notify(notice.channel, notice.payload)))


def take(
    conn: Connection,
    traversal_id: str,
    key: str,
    attempt: int,
    owner: str,
    until: datetime,
    claimed_by: str | None,
) -> NodeRecord | None:
    params = {"b_traversal_id": traversal_id, "b_key": key, "b_attempt": attempt}
    stmt = _TAKE if claimed_by is None else _TAKE_CLAIMED
    values = {**params, "b_owner": owner, "b_until": until, "b_claimed_by": claimed_by}
    row = conn.execute(stmt, values).mappings().first()
    return None if row is None else node(row)


def renew(conn: Connection, owner: str, until: datetime) -> set[tuple[str, str]]:
    return {(r[0], r[1]) for r in conn.execute(_RENEW, {"b_owner": owner, "b_until": until})}

"""The ``processes`` table and the counts operators look at, over SQL.

A beat is one upsert (``INSERT ... ON CONFLICT (id) DO UPDATE``, which both
SQLite and PostgreSQL speak) stamped with this store's clock. The counts
are ``GROUP BY`` reads: leases held per owner (the running-node count goes
through the partial index on running nodes), traversals by kind and
status, executions by state, and, on PostgreSQL, procrastinate's job
table by queue and status when that table is there.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection, RowMapping

from convection.store._sql_db import Database
from convection.store._time import aware, utcnow
from convection.store.processes import ProcessRecord
from convection.store.schema import processes, traversal_nodes, traversals, workflow_executions

#: The job statuses ``queue_depths`` counts: waiting, and being run.
QUEUE_STATUSES = ("todo", "doing")

_LIST = sa.select(processes).order_by(processes.c.kind, processes.c.host, processes.c.id)

_TRAVERSAL_LEASES = (
    sa.select(traversals.c.lease_owner, sa.func.count())
    .where(traversals.c.lease_owner.is_not(None), traversals.c.lease_until >= sa.bindparam("now"))
    .group_by(traversals.c.lease_owner)
)
_NODE_LEASES = (
    sa.select(traversal_nodes.c.lease_owner, sa.func.count())
    .where(
        # A literal, not a bind: the partial index on running nodes applies.
        traversal_nodes.c.state == sa.literal_column("'running'"),
        traversal_nodes.c.lease_owner.is_not(None),
    )
    .group_by(traversal_nodes.c.lease_owner)
)
_TRAVERSALS_BY_STATE = sa.select(traversals.c.kind, traversals.c.status, sa.func.count()).group_by(
    traversals.c.kind, traversals.c.status
)
_EXECUTIONS_BY_STATE = sa.select(workflow_executions.c.state, sa.func.count()).group_by(
    workflow_executions.c.state
)
#: procrastinate's own table, not ours: named in text. Its ``status`` is an
#: enum; the literals compare with it, and it is read back as text.
_JOBS_TABLE = sa.text("SELECT to_regclass('procrastinate_jobs') IS NOT NULL")
_QUEUE_DEPTHS = sa.text(
    "SELECT queue_name, status::text AS status, count(*) AS n FROM procrastinate_jobs "
    "WHERE status IN ('todo', 'doing') GROUP BY queue_name, status"
)


def _record(row: RowMapping) -> ProcessRecord:
    values = dict(row)
    values["queues"] = tuple(values["queues"])
    values["stats"] = {str(k): float(v) for k, v in values["stats"].items()}
    return ProcessRecord(**values)


def beat(db: Database, record: ProcessRecord) -> None:
    values: dict[str, Any] = {
        "id": record.id,
        "kind": record.kind,
        "host": record.host,
        "pid": record.pid,
        "queues": list(record.queues),
        "concurrency": record.concurrency,
        "running": record.running,
        "stats": dict(record.stats),
        "started_at": aware(record.started_at, "ProcessRecord.started_at"),
        "heartbeat_at": utcnow(),
    }
    dialect = sqlite if db.is_sqlite else postgresql
    insert = dialect.insert(processes).values(values)
    changed = {k: v for k, v in values.items() if k != "id"}
    statement = insert.on_conflict_do_update(index_elements=[processes.c.id], set_=changed)
    db.write(lambda conn: conn.execute(statement))


def list_processes(db: Database) -> list[ProcessRecord]:
    return db.read(lambda conn: [_record(r) for r in conn.execute(_LIST).mappings()])


def forget_process(db: Database, process_id: str) -> None:
    statement = processes.delete().where(processes.c.id == process_id)
    db.write(lambda conn: conn.execute(statement))


def leases_held(db: Database) -> dict[str, tuple[int, int]]:
    now = utcnow()

    def run(conn: Connection) -> dict[str, tuple[int, int]]:
        held = {str(o): int(n) for o, n in conn.execute(_TRAVERSAL_LEASES, {"now": now})}
        nodes = {str(o): int(n) for o, n in conn.execute(_NODE_LEASES)}
        return {o: (held.get(o, 0), nodes.get(o, 0)) for o in sorted({*held, *nodes})}

    return db.read(run)


def count_by_state(db: Database) -> dict[str, dict[str, int]]:
    def run(conn: Connection) -> dict[str, dict[str, int]]:
        counts: dict[str, dict[str, int]] = {"traversal:stack": {}, "traversal:workflow": {}}
        for kind, status, n in conn.execute(_TRAVERSALS_BY_STATE):
            counts.setdefault(f"traversal:{kind}", {})[str(status)] = int(n)
        counts["execution"] = {str(s): int(n) for s, n in conn.execute(_EXECUTIONS_BY_STATE)}
        return counts

    return db.read(run)


def queue_depths(db: Database) -> dict[str, dict[str, int]]:
    if db.is_sqlite:
        return {}

    def run(conn: Connection) -> dict[str, dict[str, int]]:
        if not conn.execute(_JOBS_TABLE).scalar():
            return {}
        depths: dict[str, dict[str, int]] = {}
        for queue, status, n in conn.execute(_QUEUE_DEPTHS):
            depths.setdefault(str(queue), dict.fromkeys(QUEUE_STATUSES, 0))[str(status)] = int(n)
        return dict(sorted(depths.items()))

    return db.read(run)

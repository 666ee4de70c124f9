"""``store.schedules`` over SQL: CRUD through the workflow rows' statements,
and a cron trigger's firing as one transaction.

The firing's compare-and-set is one conditional UPDATE (or DELETE, for a
trigger's last run) on ``(id, next_execution_time)``: under PostgreSQL's
READ COMMITTED a second engine's statement waits for the first to commit,
then re-reads the row, no longer matches and changes nothing; SQLite
serialises writers. Only the statement that changed the row goes on to
insert the execution, in the same transaction.
"""

from __future__ import annotations

from datetime import datetime

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from convection.store._fields import check_traversal
from convection.store._sql_db import Database
from convection.store._sql_workflows import SQLWorkflowRows, insert_execution
from convection.store._time import utcnow
from convection.store.scheduling import CronFire, CronTriggerRecord, NamedSchedules
from convection.store.schema import cron_triggers


class SQLCron:
    """``scheduling.CronRows`` of one SQL database."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def due(self, now: datetime, limit: int) -> list[CronTriggerRecord]:
        t = cron_triggers
        query = (
            sa.select(t)
            .where(t.c.next_execution_time <= now)
            .order_by(t.c.next_execution_time, t.c.id)
            .limit(limit)
        )
        rows = self._db.read(lambda conn: list(conn.execute(query).mappings()))
        return [CronTriggerRecord(**row) for row in rows]

    def fire(self, fire: CronFire) -> bool:
        if fire.traversal is not None:
            check_traversal(fire.traversal, fire.nodes, {})
        t = cron_triggers
        match = sa.and_(t.c.id == fire.trigger_id, t.c.next_execution_time == fire.due)
        now = utcnow()
        change: sa.Delete | sa.Update
        if fire.next_time is None:
            change = t.delete().where(match)
        else:
            change = (
                t.update()
                .where(match)
                .values(
                    next_execution_time=fire.next_time,
                    remaining_executions=fire.remaining,
                    updated_at=now,
                )
            )

        def run(conn: Connection) -> bool:
            if not conn.execute(change).rowcount:
                return False  # another engine fired it, or it was deleted
            if fire.execution is not None:
                insert_execution(conn, fire.execution, fire.traversal, fire.nodes, now)
            return True

        try:
            return bool(self._db.write(run))
        except sa.exc.IntegrityError as exc:
            eid = fire.execution.id if fire.execution is not None else "?"
            raise ValueError(f"workflow execution {eid}: already exists") from exc


class SQLSchedules(NamedSchedules):
    """``store.schedules`` of an SQL store."""

    def __init__(self, db: Database) -> None:
        super().__init__(SQLWorkflowRows(db), SQLCron(db))

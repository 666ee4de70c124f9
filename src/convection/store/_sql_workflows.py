""":class:`~convection.store.workflows.WorkflowStore` over SQL (SQLite and
PostgreSQL), one transaction per method, on the store's :class:`Database`.

One set of statements serves every table of workflow rows
(``workflows.TABLES`` says what each is); listings page by keyset as
``list_stacks`` does. The engine's writes of executions, tasks and action
executions are journal changes (``_sql_apply``), not these methods.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, RowMapping

from convection.common import NotFound
from convection.store._fields import check_traversal
from convection.store._filters import Where
from convection.store._sql_children import _insert_traversals
from convection.store._sql_db import Database
from convection.store._sql_rows import record_values
from convection.store._time import utcnow
from convection.store.api import NodeRecord, TraversalRecord
from convection.store.schema import metadata, task_executions, workflow_executions
from convection.store.workflows import (
    EXECUTIONS,
    NamedRows,
    Query,
    Rec,
    Table,
    exists_error,
)

#: Sort keys that may be NULL: they sort as ``created_at`` then (NULLs
#: order differently on SQLite and PostgreSQL, and break keyset paging).
_NULLABLE_TIMES = frozenset({"updated_at", "started_at"})


def _sql(table: Table[Any]) -> sa.Table:
    return metadata.tables[table.name]


def _unique_violation(exc: sa.exc.IntegrityError) -> bool:
    return getattr(exc.orig, "sqlstate", None) == "23505" or "UNIQUE constraint" in str(exc.orig)


class SQLWorkflowRows:
    """The primitives (``workflows.WorkflowRows``) of one SQL database."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def _record(self, table: Table[Rec], row: RowMapping) -> Rec:
        return table.record(**row)

    def _clash(self, table: Table[Any], record: Any, exc: sa.exc.IntegrityError) -> Exception:
        if table.unique and _unique_violation(exc):
            return exists_error(table, record)
        return ValueError(f"{table.what} {record.id}: already exists")

    def insert(self, table: Table[Rec], record: Rec) -> None:
        values = record_values(record, utcnow())
        statement = _sql(table).insert().values(values)
        try:
            self._db.write(lambda conn: conn.execute(statement))
        except sa.exc.IntegrityError as exc:
            if "FOREIGN KEY" in str(exc.orig) or getattr(exc.orig, "sqlstate", None) == "23503":
                raise NotFound("task execution", str(values.get("task_execution_id"))) from exc
            raise self._clash(table, record, exc) from exc

    def get(self, table: Table[Rec], row_id: str) -> Rec | None:
        t = _sql(table)
        query = sa.select(t).where(t.c.id == row_id)
        row = self._db.read(lambda conn: conn.execute(query).mappings().first())
        return None if row is None else self._record(table, row)

    def state(self, table: Table[Any], row_id: str) -> tuple[str, str | None] | None:
        t = _sql(table)
        query = sa.select(t.c.state, t.c.state_info).where(t.c.id == row_id)
        row = self._db.read(lambda conn: conn.execute(query).first())
        return None if row is None else (str(row[0]), row[1])

    def find(self, table: Table[Rec], project: str, name_or_id: str, namespace: str) -> Rec | None:
        """By id (the project's, or a public one), else by name in the
        namespace: the project's own first, then a public one."""
        t = _sql(table)
        own = t.c.project == project
        public = t.c.scope == "public"
        by_name = sa.and_(t.c.name == name_or_id, t.c.namespace == namespace)

        def run(conn: Connection) -> RowMapping | None:
            for where in (
                sa.and_(t.c.id == name_or_id, sa.or_(own, public)),
                sa.and_(by_name, own),
                sa.and_(by_name, public),
            ):
                row = conn.execute(sa.select(t).where(where).limit(1)).mappings().first()
                if row is not None:
                    return row
            return None

        row = self._db.read(run)
        return None if row is None else self._record(table, row)

    def rows(self, table: Table[Rec], q: Query) -> list[Rec]:
        t, keys = _sql(table), q.keys

        def run(conn: Connection) -> list[Rec]:
            dialect = conn.dialect.name
            exprs = [_sort_expr(t, k, dialect == "postgresql") for k in keys]
            wheres = [_condition(t, k, w, dialect) for k, w in q.filters.items()]
            query = sa.select(t).where(*wheres)
            if q.project is not None:
                query = query.where(t.c.project == q.project)
            if q.marker is not None:
                found = conn.execute(sa.select(t).where(t.c.id == q.marker)).mappings().first()
                if found is None:
                    raise NotFound(table.what, q.marker)
                bound = [
                    sa.bindparam(None, _marker_value(found, k), type_=t.c[k].type) for k in keys
                ]
                query = query.where(_after(exprs, bound, q.dirs))
            query = query.order_by(
                *(e.asc() if d == "asc" else e.desc() for e, d in zip(exprs, q.dirs, strict=True))
            )
            if q.limit is not None:
                query = query.limit(q.limit)
            return [self._record(table, r) for r in conn.execute(query).mappings()]

        return self._db.read(run)

    def update(self, table: Table[Rec], row_id: str, fields: Mapping[str, Any]) -> Rec | None:
        t = _sql(table)
        values = dict(fields)
        values.setdefault("updated_at", utcnow())

        def run(conn: Connection) -> RowMapping | None:
            conn.execute(t.update().where(t.c.id == row_id).values(values))
            return conn.execute(sa.select(t).where(t.c.id == row_id)).mappings().first()

        try:
            row = self._db.write(run)
        except sa.exc.IntegrityError as exc:
            old = self.get(table, row_id)
            if old is None or not table.unique:
                raise
            new = table.record(**{**{f: getattr(old, f) for f in table.fields()}, **fields})
            raise self._clash(table, new, exc) from exc
        return None if row is None else self._record(table, row)

    def delete(self, table: Table[Any], row_id: str) -> bool:
        t = _sql(table)
        statement = t.delete().where(t.c.id == row_id)
        return bool(self._db.write(lambda conn: conn.execute(statement).rowcount))

    def start_execution(
        self,
        execution: Any,
        traversal: TraversalRecord | None,
        nodes: Sequence[NodeRecord],
    ) -> None:
        if traversal is not None:
            check_traversal(traversal, nodes, {})
        now = utcnow()
        try:
            self._db.write(lambda conn: insert_execution(conn, execution, traversal, nodes, now))
        except sa.exc.IntegrityError as exc:
            raise ValueError(f"{EXECUTIONS.what} {execution.id}: already exists") from exc

    def delete_execution(self, execution_id: str) -> bool:
        """The tree below it goes too: its sub-workflows are the executions
        of its tasks. Foreign keys cascade to tasks, action executions,
        traversals, nodes and timers."""
        e, k = workflow_executions, task_executions

        def run(conn: Connection) -> int:
            ids, frontier = [execution_id], [execution_id]
            while frontier:
                tasks = sa.select(k.c.id).where(k.c.execution_id.in_(frontier))
                frontier = list(
                    conn.execute(sa.select(e.c.id).where(e.c.task_execution_id.in_(tasks)))
                    .scalars()
                    .all()
                )
                ids.extend(frontier)
            return int(conn.execute(e.delete().where(e.c.id.in_(ids))).rowcount)

        return bool(self._db.write(run))


def insert_execution(
    conn: Connection,
    execution: Any,
    traversal: TraversalRecord | None,
    nodes: Sequence[NodeRecord],
    now: Any,
) -> None:
    """An execution's row, pointed at its traversal, with the traversal and
    its nodes: the statements of a start, in the caller's transaction (a
    cron trigger's firing writes them with the trigger's own change)."""
    values = record_values(execution, now)
    if traversal is not None:
        values["traversal_id"] = traversal.id
    conn.execute(workflow_executions.insert().values(values))
    if traversal is not None:
        _insert_traversals(conn, [traversal], nodes, now)


def _after(
    exprs: Sequence[sa.ColumnElement[Any]], bound: Sequence[Any], dirs: Sequence[str]
) -> sa.ColumnElement[bool]:
    """Rows after the marker's sort values: one row-value comparison when
    every key goes one way (an index range), else oslo.db's expansion for
    mixed directions: the first key that differs decides, in its own
    direction ``(k1 > m1) OR (k1 = m1 AND k2 < m2) OR ...``."""
    if len(set(dirs)) == 1:
        left, right = sa.tuple_(*exprs), sa.tuple_(*bound)
        return left > right if dirs[0] == "asc" else left < right
    terms = []
    for i, (expr, mark, direction) in enumerate(zip(exprs, bound, dirs, strict=True)):
        ties = [exprs[j] == bound[j] for j in range(i)]
        terms.append(sa.and_(*ties, expr > mark if direction == "asc" else expr < mark))
    return sa.or_(*terms)


def _condition(t: sa.Table, key: str, where: Where, dialect: str) -> sa.ColumnElement[bool]:
    """A checked filter (``_filters.Where``) as SQL, as Mistral's
    ``filters.py`` has it; ``has`` is a case-sensitive substring on both
    databases (SQLite's LIKE would ignore case)."""
    col, op, value = t.c[key], where.op, where.value
    if op == "has":
        find = sa.func.strpos(col, value) if dialect == "postgresql" else sa.func.instr(col, value)
        return find > 0
    conditions: dict[str, Any] = {
        "eq": lambda: col == value,
        "neq": lambda: col != value,
        "in": lambda: col.in_(value),
        "nin": lambda: col.not_in(value),
        "gt": lambda: col > value,
        "gte": lambda: col >= value,
        "lt": lambda: col < value,
        "lte": lambda: col <= value,
    }
    made: sa.ColumnElement[bool] = conditions[op]()
    return made


def _sort_expr(t: sa.Table, key: str, collate: bool) -> sa.ColumnElement[Any]:
    if key in _NULLABLE_TIMES:
        return sa.func.coalesce(t.c[key], t.c.created_at, type_=t.c.created_at.type)
    col = t.c[key]
    text = isinstance(col.type, sa.String)
    return col.collate("C") if collate and text else col


def _marker_value(row: RowMapping, key: str) -> Any:
    if key in _NULLABLE_TIMES:
        return row[key] or row["created_at"]
    return row[key]


class SQLWorkflows(NamedRows):
    """``store.workflows`` of an SQL store."""

    def __init__(self, db: Database) -> None:
        super().__init__(SQLWorkflowRows(db))

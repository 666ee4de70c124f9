"""Many rows straight from the driver into records: the bulk read path.

``conn.execute(select).mappings()`` then ``Record(**row)`` cost about 25 µs
a row for a resource: SQLAlchemy builds a mapping per row and runs every
column's result processor, and a frozen dataclass's ``__init__`` sets each
field through ``object.__setattr__``. Planning a 10,000-resource update read
10,000 rows that way, and each claim of 64 nodes paid it too. Here the
statement is compiled once (:func:`convection.store._sql_fast.prepare`),
the result processors are looked up once per column, values that repeat
(a batch stamps its rows with one ``updated_at``) are converted once, and a
record is filled through its slots. The values are exactly those the
general path gives: the same processors run, only fewer times.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Dialect

from convection.common import collector_paused
from convection.store._fields import TUPLE_FIELDS, json_loads
from convection.store._sql_fast import prepare

R = TypeVar("R")
_Processor = Callable[[Any], Any]


@dataclass(frozen=True, slots=True)
class _Columns:
    """Per selected column: its name, and how to convert a raw value."""

    names: tuple[str, ...]
    #: (column index, processor, whether equal raw values may share one
    #: converted value: true for scalars, never for JSON, which is mutable).
    processors: tuple[tuple[int, _Processor, bool], ...]
    #: Text columns the driver hands over as they are: equal values are
    #: made one object (a stack id, a type, a state repeat on every row).
    texts: tuple[int, ...] = ()


_COLUMNS: dict[tuple[sa.ClauseElement, str], _Columns] = {}

#: Text columns whose values repeat from row to row of one read (a stack's
#: resources, a traversal's nodes); names, keys and ids do not.
_REPEATING = frozenset(
    {"stack_id", "type", "action", "status", "status_reason", "deletion_policy"}
    | {"traversal_id", "kind", "state", "lease_owner"}
)


def _columns(stmt: sa.Select[Any] | sa.UpdateBase, dialect: Dialect) -> _Columns:
    key = (stmt, dialect.name)
    found = _COLUMNS.get(key)
    if found is not None:
        return found
    columns = list(stmt.exported_columns)
    processors: list[tuple[int, _Processor, bool]] = []
    texts: list[int] = []
    for i, column in enumerate(columns):
        is_json = isinstance(column.type, sa.JSON)
        if is_json and dialect.name == "sqlite":
            # What SQLite's JSON result processor does for the text it
            # stores, without its wrappers (the engine's json_deserializer).
            proc: _Processor | None = json_loads
        else:
            proc = column.type.dialect_impl(dialect).result_processor(dialect, None)
        if column.name in TUPLE_FIELDS:
            proc = _as_tuple(proc)
        if proc is not None:
            processors.append((i, proc, not is_json))
        elif column.name in _REPEATING:
            texts.append(i)
    names = tuple(c.name for c in columns)
    found = _COLUMNS[key] = _Columns(names, tuple(processors), tuple(texts))
    return found


def _as_tuple(proc: _Processor | None) -> _Processor:
    if proc is None:
        return tuple
    return lambda value: tuple(proc(value))


def fetch(
    conn: Connection, stmt: sa.Select[Any] | sa.UpdateBase, params: Mapping[str, Any]
) -> tuple[tuple[str, ...], list[list[Any]]]:
    """Column names and converted rows of ``stmt`` run once with ``params``."""
    prepared = prepare(stmt, conn.dialect)
    columns = _columns(stmt, conn.dialect)
    raw = conn.exec_driver_sql(prepared.sql, prepared.rows([params])[0]).fetchall()
    rows = [list(r) for r in raw]
    for i, proc, shared in columns.processors:
        memo: dict[Any, Any] = {}
        for row in rows:
            value = row[i]
            if value is None:
                continue
            if not shared:
                row[i] = proc(value)
                continue
            converted = memo.get(value, memo)
            if converted is memo:
                converted = memo[value] = proc(value)
            row[i] = converted
    for i in columns.texts:
        _share(rows, i)
    return columns.names, rows


def _share(rows: list[list[Any]], i: int) -> None:
    """Make equal strings of column ``i`` one object. The driver makes a
    new string per row, and a stack's 10,000 records kept 10,000 copies of
    its id, type and states each: megabytes of a traversal's view."""
    one = {v: v for v in [row[i] for row in rows]}
    for row in rows:
        row[i] = one[row[i]]


def builder(record: type[R], names: Sequence[str]) -> Callable[[Sequence[Any]], R]:
    """A constructor of ``record`` from values in ``names`` order.

    It fills the slots directly: the frozen dataclass's ``__init__`` costs
    three times as much, and the values are already checked (they come
    from the store's own columns). ``names`` must be every field."""
    setters = tuple(getattr(record, name).__set__ for name in names)
    slots = getattr(record, "__slots__", ())
    if sorted(names) != sorted(slots):
        raise ValueError(f"{record.__name__}: columns {names} are not its fields {slots}")
    new = object.__new__

    def build(values: Sequence[Any]) -> R:
        obj = new(record)
        for put, value in zip(setters, values, strict=True):
            put(obj, value)
        return obj

    return build


_BUILDERS: dict[tuple[type[Any], tuple[str, ...]], Callable[[Sequence[Any]], Any]] = {}


def fetch_records(
    conn: Connection,
    stmt: sa.Select[Any] | sa.UpdateBase,
    params: Mapping[str, Any],
    record: type[R],
) -> list[R]:
    """Every row of ``stmt`` as a ``record`` (its columns are the record's fields).

    The cyclic collector is paused meanwhile: 10,000 rows are 50,000 new
    containers, enough to set off full collections that walk the whole
    heap, and nothing here makes a cycle (see ``convection.common.gc``)."""
    with collector_paused():
        names, rows = fetch(conn, stmt, params)
        build = _BUILDERS.get((record, names))
        if build is None:
            build = _BUILDERS[(record, names)] = builder(record, names)
        return [build(row) for row in rows]

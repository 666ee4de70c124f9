"""Compile once, execute many: the bulk path for journal batches and nodes.

SQLAlchemy's ``execute(stmt, [params...])`` re-derives a cache key and
builds every parameter set through its general machinery, which cost more
than SQLite itself on a 1,000-change batch. Here a Core statement is
compiled once per dialect, its bind processors (JSON encoding, UTC
datetimes, booleans) are looked up once, and each row becomes a plain tuple
or dict handed to the driver's ``executemany``. The SQL is still generated
by SQLAlchemy Core from :mod:`convection.store.schema`; only the per-row
work is ours.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Dialect
from sqlalchemy.sql.compiler import SQLCompiler

_Processor = Callable[[Any], Any]
Columns = Mapping[str, Sequence[Any]]


@dataclass(frozen=True, slots=True)
class Prepared:
    """A compiled statement and how to turn parameter values into driver rows."""

    sql: str
    #: Bind names in the order the driver wants them (named style: any order).
    names: tuple[str, ...]
    #: Per bind: the key in the caller's values, or None for a literal of the
    #: statement ('ready' in a CASE), whose value is then in ``fixed``.
    keys: tuple[str | None, ...]
    fixed: tuple[Any, ...]
    #: Per bind: its processor, if its type converts values, and whether the
    #: processor is JSON encoding (which is never memoized: dicts are not
    #: hashable, and equal lists may hold different tuples).
    processors: tuple[tuple[_Processor, bool] | None, ...]
    positional: bool

    def rows(self, params: Sequence[Mapping[str, Any]]) -> list[Any]:
        """Driver rows for ``params``, one dict of values per row."""
        if not params:
            return []
        wanted = {k for k in self.keys if k is not None}
        return self.from_columns({k: [p[k] for p in params] for k in wanted}, len(params))

    def from_columns(self, columns: Columns, n: int) -> list[Any]:
        """Driver rows for ``n`` rows of values given column by column.

        Columns, not rows: each bind's values are converted in one pass,
        and a value that repeats (a batch stamps every row with one ``now``)
        is converted once."""
        cols: list[Sequence[Any]] = []
        for key, value, proc in zip(self.keys, self.fixed, self.processors, strict=True):
            col: Sequence[Any] = [value] * n if key is None else columns[key]
            if proc is not None:
                col = _convert(col, *proc)
            cols.append(col)
        rows = zip(*cols, strict=True)
        if self.positional:
            return list(rows)
        return [dict(zip(self.names, row, strict=True)) for row in rows]


def _convert(col: Sequence[Any], proc: _Processor, is_json: bool) -> list[Any]:
    if is_json:
        return [None if v is None else proc(v) for v in col]
    memo: dict[Any, Any] = {None: None}
    out = []
    for v in col:
        try:
            found = memo.get(v, memo)
        except TypeError:  # unhashable: convert it on its own
            found = proc(v)
        else:
            if found is memo:
                found = memo[v] = proc(v)
        out.append(found)
    return out


def _json_encoder(dialect: Dialect) -> _Processor:
    """SQLite's JSON bind processor is the engine's ``json_serializer``
    behind two wrappers; called directly, with the empty containers most
    columns hold answered without encoding."""
    dumps = cast(_Processor, getattr(dialect, "_json_serializer", None) or json.dumps)

    def encode(value: Any) -> Any:
        if not value and isinstance(value, dict | list | tuple):
            return "{}" if isinstance(value, dict) else "[]"
        return dumps(value)

    return encode


_CACHE: dict[tuple[sa.ClauseElement, str, tuple[str, ...]], Prepared] = {}


def prepare(stmt: sa.Executable, dialect: Dialect, column_keys: tuple[str, ...] = ()) -> Prepared:
    """Compile ``stmt`` for ``dialect`` (memoized; statements are module-level).

    ``column_keys`` names the columns of an INSERT without explicit values."""
    assert isinstance(stmt, sa.ClauseElement)
    key = (stmt, dialect.name, column_keys)
    found = _CACHE.get(key)
    if found is not None:
        return found
    compiled = cast(
        SQLCompiler, stmt.compile(dialect=dialect, column_keys=list(column_keys) or None)
    )
    if compiled.positional:
        names = list(compiled.positiontup or ())
    else:  # named style: each bind once, under the name the SQL uses
        names = list(dict.fromkeys(compiled.bind_names.values()))
    keys: list[str | None] = []
    fixed: list[Any] = []
    processors: list[tuple[_Processor, bool] | None] = []
    for name in names:
        bind = compiled.binds[name]
        # A bindparam() without a value comes from the caller's dict; any
        # other bind is a literal of the statement.
        keys.append(bind.key if bind.required else None)
        fixed.append(None if bind.required else bind.effective_value)
        is_json = isinstance(bind.type, sa.JSON)
        proc: _Processor | None = bind.type.dialect_impl(dialect).bind_processor(dialect)
        if is_json and dialect.name == "sqlite":
            proc = _json_encoder(dialect)
        processors.append(None if proc is None else (proc, is_json))
    prepared = Prepared(
        compiled.string,
        tuple(names),
        tuple(keys),
        tuple(fixed),
        tuple(processors),
        bool(compiled.positional),
    )
    if len(_CACHE) > 1024:  # statements are few; this only guards a leak
        _CACHE.clear()
    _CACHE[key] = prepared
    return prepared


def executemany(
    conn: Connection,
    stmt: sa.Executable,
    params: Sequence[Mapping[str, Any]],
    column_keys: tuple[str, ...] = (),
) -> int:
    """Run ``stmt`` once per parameter set in one driver call; rows matched."""
    prepared = prepare(stmt, conn.dialect, column_keys)
    return _execute(conn, prepared, prepared.rows(params))


def executemany_columns(
    conn: Connection,
    stmt: sa.Executable,
    columns: Columns,
    n: int,
    column_keys: tuple[str, ...] = (),
) -> int:
    """:func:`executemany` with the values given column by column."""
    prepared = prepare(stmt, conn.dialect, column_keys)
    return _execute(conn, prepared, prepared.from_columns(columns, n))


def _execute(conn: Connection, prepared: Prepared, rows: list[Any]) -> int:
    if not rows:
        return 0
    return int(conn.exec_driver_sql(prepared.sql, rows).rowcount)

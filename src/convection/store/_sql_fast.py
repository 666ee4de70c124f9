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

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import Any, cast

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Dialect
from sqlalchemy.sql.compiler import SQLCompiler

_Processor = Callable[[Any], Any]
_MISSING = object()


@dataclass(frozen=True, slots=True)
class Prepared:
    """A compiled statement and how to turn parameter dicts into driver rows."""

    sql: str
    #: Bind names in the order the driver wants them (named style: any order).
    names: tuple[str, ...]
    #: Per bind: the key in the caller's dict, or None for a literal of the
    #: statement ('ready' in a CASE), whose value is then in ``fixed``.
    keys: tuple[str | None, ...]
    fixed: tuple[Any, ...]
    #: (bind index, processor) for the binds whose type converts values.
    processors: tuple[tuple[int, _Processor], ...]
    positional: bool

    def rows(self, params: Sequence[Mapping[str, Any]]) -> list[Any]:
        """Driver rows for ``params``.

        Hashable values (datetimes, booleans) are converted once per call: a
        batch stamps every row with the same ``now``."""
        wanted = [i for i, k in enumerate(self.keys) if k is not None]
        get = itemgetter(*(self.keys[i] for i in wanted)) if wanted else None
        memo: dict[tuple[int, Any], Any] = {}
        out: list[Any] = []
        for p in params:
            row = list(self.fixed)
            if get is not None:
                got = get(p)
                if len(wanted) == 1:
                    got = (got,)
                for i, value in zip(wanted, got, strict=True):
                    row[i] = value
            for i, proc in self.processors:
                value = row[i]
                if value is None:
                    continue
                if isinstance(value, dict | list):
                    row[i] = proc(value)
                    continue
                try:
                    cached = memo.get((i, value), _MISSING)
                except TypeError:  # unhashable: a tuple holding a dict
                    row[i] = proc(value)
                    continue
                if cached is _MISSING:
                    cached = memo[(i, value)] = proc(value)
                row[i] = cached
            out.append(tuple(row) if self.positional else dict(zip(self.names, row, strict=True)))
        return out


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
    processors: list[tuple[int, _Processor]] = []
    for i, name in enumerate(names):
        bind = compiled.binds[name]
        # A bindparam() without a value comes from the caller's dict; any
        # other bind is a literal of the statement.
        keys.append(bind.key if bind.required else None)
        fixed.append(None if bind.required else bind.effective_value)
        proc = bind.type.dialect_impl(dialect).bind_processor(dialect)
        if proc is not None:
            processors.append((i, proc))
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
    rows = prepared.rows(params)
    if not rows:
        return 0
    result = conn.exec_driver_sql(prepared.sql, rows)
    return int(result.rowcount)

"""Rows to records and back: the only place that knows both shapes.

Column names equal record field names, so the mapping is mechanical; the
exceptions are tuple fields, which are JSON lists in SQL.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy.engine import RowMapping

from convection.store._time import aware
from convection.store.api import (
    EventRecord,
    JSONDict,
    NodeRecord,
    ResourceRecord,
    SignalRecord,
    StackRecord,
    TemplateRecord,
    TimerRecord,
    TokenRecord,
    TraversalRecord,
)

_FIELD_NAMES: dict[type[Any], tuple[str, ...]] = {}


def _field_names(record_type: type[Any]) -> tuple[str, ...]:
    names = _FIELD_NAMES.get(record_type)
    if names is None:
        names = _FIELD_NAMES[record_type] = tuple(f.name for f in dataclasses.fields(record_type))
    return names


def stack(row: RowMapping) -> StackRecord:
    return StackRecord(**row)


def template(row: RowMapping) -> TemplateRecord:
    return TemplateRecord(
        id=row["id"], template=row["template"], environment=row["environment"], files=row["files"]
    )


def resource(row: RowMapping) -> ResourceRecord:
    values = dict(row)
    values["requires"] = tuple(values["requires"])
    return ResourceRecord(**values)


#: A traversal's owner fields: '' in the record, NULL in SQL (api.TraversalRecord).
_OWNERS = ("stack_id", "execution_id")


def traversal(row: RowMapping) -> TraversalRecord:
    values = dict(row)
    for name in _OWNERS:
        if values[name] is None:
            values[name] = ""
    return TraversalRecord(**values)


def traversal_columns(records: Sequence[TraversalRecord], now: datetime) -> dict[str, list[Any]]:
    """:func:`record_columns` of traversals, the absent owner as NULL."""
    columns = record_columns(records, now)
    for name in _OWNERS:
        columns[name] = [v or None for v in columns[name]]
    return columns


def node(row: RowMapping) -> NodeRecord:
    values = dict(row)
    values["successors"] = tuple(values["successors"])
    return NodeRecord(**values)


def timer(row: RowMapping) -> TimerRecord:
    return TimerRecord(**row)


def event(row: RowMapping) -> EventRecord:
    return EventRecord(**row)


def signal(row: RowMapping) -> SignalRecord:
    return SignalRecord(**row)


def token(row: RowMapping) -> TokenRecord:
    return TokenRecord(**row)


def record_values(record: Any, now: datetime, *, drop: Sequence[str] = ()) -> JSONDict:
    """A record as column values: ``created_at`` defaults to now, every
    datetime must be aware. Shallow on purpose: JSON columns serialize the
    nested values, and tuples serialize as lists."""
    values = {name: getattr(record, name) for name in _field_names(type(record))}
    for name in drop:
        values.pop(name, None)
    if values.get("created_at") is None and "created_at" in values:
        values["created_at"] = now
    for name, value in values.items():
        if isinstance(value, datetime):
            aware(value, f"{type(record).__name__}.{name}")
    return values


def record_columns(
    records: Sequence[Any], now: datetime, *, drop: Sequence[str] = ()
) -> dict[str, list[Any]]:
    """:func:`record_values` of many records of one type, column by column:
    a stack's 10,000 rows are inserted without a dict per row."""
    if not records:
        return {}
    what = type(records[0]).__name__
    columns: dict[str, list[Any]] = {}
    for name in _field_names(type(records[0])):
        if name in drop:
            continue
        column = [getattr(r, name) for r in records]
        if name == "created_at":
            column = [now if v is None else v for v in column]
        if any(issubclass(kind, datetime) for kind in {type(v) for v in column}):
            for value in column:
                if isinstance(value, datetime):
                    aware(value, f"{what}.{name}")
        columns[name] = column
    return columns

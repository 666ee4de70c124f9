"""The store's clock and its one rule for datetimes: aware, in UTC.

Apart from ``_fields`` so that the record modules (``api``, ``software``)
and the checks over them can all use it without importing each other.
"""

from __future__ import annotations

from datetime import UTC, datetime


def utcnow() -> datetime:
    return datetime.now(UTC)


def aware(value: datetime, what: str) -> datetime:
    """``value`` in UTC; a naive datetime is a caller bug, so it raises."""
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError(f"{what}: naive datetime {value!r}; the store takes aware UTC datetimes")
    return value.astimezone(UTC)

"""Listing filters with Mistral's operators, and sort orders with a
direction per key: what both backends of ``store.workflows`` share.

Mistral's filter values are ``[op:]value`` (``mistral/utils/filter_utils.py``)
with ``op`` one of ``eq`` (the default), ``neq``, ``in``, ``nin``, ``gt``,
``gte``, ``lt``, ``lte`` and ``has`` (a substring), which its SQL layer
turns into one condition per column (``db/v2/sqlalchemy/filters.py``). A
:class:`Where` is one such condition, checked once here (a known operator,
a list for ``in``/``nin``, a text column for ``has``, times parsed), so a
backend only translates it: SQL into a WHERE clause, memory into
:func:`matches`. As in SQL, a NULL column satisfies no condition but
``eq`` of None.

A sort is a list of (key, direction) with ``id`` last (:func:`sort_plan`),
so a marker names one place in a total order even when directions mix
(``sort_keys=name,created_at&sort_dirs=asc,desc``); :func:`after` is the
keyset rule for such an order, in Python.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final, Literal

SortDir = Literal["asc", "desc"]

OPERATORS: Final = ("eq", "neq", "in", "nin", "gt", "gte", "lt", "lte", "has")
#: Fields that hold times: a filter's text value is parsed.
TIME_FIELDS: Final = frozenset({"created_at", "updated_at", "started_at", "finished_at"})
#: Fields that hold booleans: no ``has``, no ordering operators.
BOOL_FIELDS: Final = frozenset({"processed", "accepted", "is_sync", "error_handled"})
#: At most this many values in one ``in``/``nin`` filter.
MAX_VALUES: Final = 1000


@dataclass(frozen=True, slots=True)
class Where:
    """One filter condition: ``op`` over ``value`` (a list for ``in``/``nin``)."""

    op: str
    value: Any


def checked_where(key: str, raw: Any) -> Where:
    """``raw`` (a value, a list of values (any of) or a :class:`Where`) as
    a checked condition on ``key``; ValueError names the filter."""
    if isinstance(raw, Where):
        where = raw
    elif isinstance(raw, list | tuple | set | frozenset):
        where = Where("in", list(raw))
    else:
        where = Where("eq", raw)
    if where.op not in OPERATORS:
        raise ValueError(f"Unknown filter operator {where.op!r} [{key}]; use one of {OPERATORS}")
    if where.op in ("in", "nin"):
        values = list(where.value) if isinstance(where.value, list | tuple) else [where.value]
        if len(values) > MAX_VALUES:
            raise ValueError(f"At most {MAX_VALUES} values in filter {key!r}")
        return Where(where.op, [_typed(key, v) for v in values])
    if where.op == "has" and (key in TIME_FIELDS or key in BOOL_FIELDS):
        raise ValueError(f"Filter operator 'has' takes a text field, not {key!r}")
    if where.op in ("gt", "gte", "lt", "lte") and key in BOOL_FIELDS:
        raise ValueError(f"Filter operator {where.op!r} does not apply to {key!r}")
    if where.op == "has" and not isinstance(where.value, str):
        raise ValueError(f"Filter operator 'has' takes text [{key}]")
    return Where(where.op, _typed(key, where.value))


def _typed(key: str, value: Any) -> Any:
    if key in TIME_FIELDS and isinstance(value, str):
        return parse_time(key, value)
    return value


def parse_time(key: str, text: str) -> datetime:
    """Mistral's ``YYYY-MM-DD HH:MM:SS`` (or ISO 8601), UTC when no zone."""
    try:
        when = datetime.fromisoformat(text.strip())
    except ValueError:
        raise ValueError(
            f"Invalid time {text!r} in filter {key!r}: expected YYYY-MM-DD HH:MM:SS"
        ) from None
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


def matches(value: Any, where: Where) -> bool:
    """Whether a row's ``value`` satisfies ``where``, as SQL would."""
    op, wanted = where.op, where.value
    if op == "eq":
        return value is not None and value == wanted
    if op == "in":
        return value is not None and value in wanted
    if value is None:
        return False
    if op == "neq":
        return bool(value != wanted)
    if op == "nin":
        return value not in wanted
    if op == "has":
        return isinstance(value, str) and wanted in value
    try:
        if op == "gt":
            return bool(value > wanted)
        if op == "gte":
            return bool(value >= wanted)
        if op == "lt":
            return bool(value < wanted)
        return bool(value <= wanted)
    except TypeError:
        return False


def sort_plan(
    sort_keys: Sequence[str], sort_dirs: Sequence[str] | None, sort_dir: str
) -> list[tuple[str, SortDir]]:
    """Each sort key with its direction (``sort_dirs`` padded with
    ``sort_dir``), repeated keys dropped, ``id`` last as the unique
    tie-breaker in the last key's direction (one direction for all: the
    order keyset paging had before directions could mix)."""
    keys = list(sort_keys or ("created_at",))
    dirs = list(sort_dirs or [])
    dirs += [sort_dir] * (len(keys) - len(dirs))
    plan: dict[str, SortDir] = {}
    for key, direction in zip(keys, dirs, strict=False):
        if direction not in ("asc", "desc"):
            raise ValueError(f"sort direction must be 'asc' or 'desc', not {direction!r}")
        plan.setdefault(key, "asc" if direction == "asc" else "desc")
    if "id" not in plan:
        plan["id"] = list(plan.values())[-1]
    return list(plan.items())


def after(values: Sequence[Any], mark: Sequence[Any], dirs: Sequence[SortDir]) -> bool:
    """Whether a row whose sort values are ``values`` comes after the
    marker's (``mark``) in the order of ``dirs``: the first key that
    differs decides, in its own direction."""
    for mine, theirs, direction in zip(values, mark, dirs, strict=True):
        if mine == theirs:
            continue
        return bool(mine > theirs) if direction == "asc" else bool(mine < theirs)
    return False


def ordered(rows: list[Any], values: Any, dirs: Sequence[SortDir]) -> list[Any]:
    """``rows`` sorted on ``values(row)`` (a list, one per key), each key
    in its own direction: stable sorts from the last key to the first."""
    keyed = [(values(r), r) for r in rows]
    for index in reversed(range(len(dirs))):
        keyed.sort(key=_column(index), reverse=dirs[index] == "desc")
    return [r for _, r in keyed]


def _column(index: int) -> Any:
    def key(pair: tuple[Sequence[Any], Any]) -> Any:
        return pair[0][index]

    return key


def normalized(filters: Mapping[str, Any] | None) -> dict[str, Where]:
    return {k: checked_where(k, v) for k, v in (filters or {}).items()}

"""A traversal's view of its stack's resource records.

Loaded once when an engine takes the traversal up (or handed over by the
caller that just planned it), then kept equal to the store by applying each
change this engine commits. Jobs read their dependencies from it, so a
job's reads are O(its own dependencies), never a whole-stack load; a
resumed engine rebuilds it from the store, which stays the only truth.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable, Mapping
from typing import Any

from convection.store import ResourceRecord

_SLOTS: tuple[str, ...] = ResourceRecord.__slots__
_VALUES = operator.attrgetter(*_SLOTS)
_INDEX = {name: i for i, name in enumerate(_SLOTS)}
_SETTERS = tuple(getattr(ResourceRecord, name).__set__ for name in _SLOTS)


def evolve(row: ResourceRecord, fields: Mapping[str, Any]) -> ResourceRecord:
    """``row`` with ``fields`` set, copied slot by slot: a fifth of the cost
    of ``dataclasses.replace``, which re-runs the frozen ``__init__`` and
    matters at one call per change a job commits."""
    values = list(_VALUES(row))
    for name, value in fields.items():
        values[_INDEX[name]] = tuple(value) if name == "requires" else value
    new = object.__new__(ResourceRecord)
    for put, value in zip(_SETTERS, values, strict=True):
        put(new, value)
    return new


class StackView:
    __slots__ = ("_by_id", "_current", "_named", "_replacements")

    def __init__(self, records: Iterable[ResourceRecord]) -> None:
        self._by_id: dict[int, ResourceRecord] = {}
        self._current: dict[str, int] = {}
        #: name -> ids of its versions.
        self._named: dict[str, set[int]] = {}
        #: old version id -> ids of rows made to replace it.
        self._replacements: dict[int, set[int]] = {}
        for r in sorted(records, key=lambda r: r.id):
            self.put(r)

    def put(self, row: ResourceRecord) -> None:
        old = self._by_id.get(row.id)
        self._by_id[row.id] = row
        self._named.setdefault(row.name, set()).add(row.id)
        if row.replaces is not None:
            self._replacements.setdefault(row.replaces, set()).add(row.id)
        if row.current:
            self._current[row.name] = row.id
        elif old is not None and self._current.get(row.name) == row.id:
            del self._current[row.name]

    def update(self, resource_id: int, fields: Mapping[str, Any]) -> ResourceRecord | None:
        row = self._by_id.get(resource_id)
        if row is None:
            return None
        new = evolve(row, fields)
        self.put(new)
        return new

    def remove(self, resource_id: int) -> None:
        row = self._by_id.pop(resource_id, None)
        if row is None:
            return
        self._named.get(row.name, set()).discard(resource_id)
        if self._current.get(row.name) == resource_id:
            del self._current[row.name]

    def unstarted_replacement(self, old_id: int) -> ResourceRecord | None:
        """A row made to replace ``old_id`` that nothing was ever done with
        (a crash came between inserting it and recording it): reusing it
        leaves no orphan rows behind."""
        for rid in sorted(self._replacements.get(old_id, ())):
            row = self._by_id.get(rid)
            unused = row is not None and row.action == "INIT" and row.physical_id is None
            if unused and row is not None and not row.current:
                return row
        return None

    def current(self, name: str) -> ResourceRecord | None:
        rid = self._current.get(name)
        return None if rid is None else self._by_id[rid]

    def get(self, resource_id: int) -> ResourceRecord | None:
        return self._by_id.get(resource_id)

    def rows(self) -> list[ResourceRecord]:
        return list(self._by_id.values())

    def reload(self, names: set[str], rows: Iterable[ResourceRecord]) -> None:
        """Replace every version of the resources ``names`` with ``rows``
        (read again from the store): versions gone from it go here too."""
        fresh = sorted(rows, key=lambda r: r.id)
        kept = {r.id for r in fresh}
        for name in names:
            for rid in list(self._named.get(name, ())):
                if rid not in kept:
                    self.remove(rid)
        for row in fresh:
            self.put(row)

    def current_rows(self) -> list[ResourceRecord]:
        return [self._by_id[i] for i in self._current.values()]

"""The in-memory store's tables, with an undo log for atomic batches.

Rows are frozen records. JSON-valued fields go through a JSON round trip on
the way in and on the way out, for two reasons: the memory store then
accepts and returns exactly what the SQL store would (tuples become lists,
non-string keys become strings, NaN is refused), and no caller can mutate
stored state through a dict it passed in or got back.

Every mutation records its inverse, so a batch that fails half-way is rolled
back to where it started, as a SQL transaction would be.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any, TypeVar

from convection.store import scheduling, workflows
from convection.store._fields import TUPLE_FIELDS, json_dumps, json_loads
from convection.store._time import aware
from convection.store.api import (
    EventRecord,
    NodeRecord,
    ResourceRecord,
    SignalRecord,
    StackRecord,
    TimerRecord,
    TraversalRecord,
)

R = TypeVar("R")
Undo = list[Callable[[], None]]

_JSON_FIELDS: dict[type[Any], tuple[str, ...]] = {
    StackRecord: ("parameters", "outputs", "tags"),
    ResourceRecord: ("properties", "attributes", "data", "requires"),
    NodeRecord: ("payload", "successors"),
    SignalRecord: ("data",),
    **workflows.JSON_FIELDS,
    **scheduling.JSON_FIELDS,
}


_DATETIME_FIELDS = frozenset(
    {
        "created_at",
        "updated_at",
        "deleted_at",
        "lease_until",
        "deadline",
        "started_at",
        "finished_at",
        "first_execution_time",
        "next_execution_time",
    }
)


def json_copy(value: Any) -> Any:
    """A deep copy through JSON; empty containers, the common case, skip it."""
    if not value and isinstance(value, dict | list | tuple):
        return {} if isinstance(value, dict) else []
    return json_loads(json_dumps(value))


def json_load(text: str) -> Any:
    return json_loads(text)


def _copy_field(record_type: type[Any], name: str, value: Any) -> Any:
    if name in _JSON_FIELDS.get(record_type, ()):
        copied = json_copy(value)
        return tuple(copied) if name in TUPLE_FIELDS else copied
    if isinstance(value, datetime):
        return aware(value, f"{record_type.__name__}.{name}")
    return value


def detach(record: R) -> R:
    """A copy of ``record`` whose JSON fields share nothing with the original."""
    names = _JSON_FIELDS.get(type(record), ())
    if not names:
        return record
    changes = {name: _copy_field(type(record), name, getattr(record, name)) for name in names}
    return replace(record, changes)


def stamped(record: R, now: datetime) -> R:
    """A record handed in: its own JSON values, UTC datetimes, ``created_at``
    defaulted to now."""
    kind = type(record)
    names = [*_JSON_FIELDS.get(kind, ()), *(f for f in _field_names(kind) if f in _DATETIME_FIELDS)]
    changes = {name: _copy_field(kind, name, getattr(record, name)) for name in names}
    if changes.get("created_at", 0) is None:
        changes["created_at"] = now
    return replace(record, changes)


def updated(record: R, fields: Mapping[str, Any]) -> R:
    """``record`` with ``fields`` set; only the incoming values are copied,
    since stored values are never handed out without a copy."""
    kind = type(record)
    values = {name: _copy_field(kind, name, value) for name, value in fields.items()}
    return replace(record, values)


def replace(record: R, changes: Mapping[str, Any]) -> R:
    """``dataclasses.replace`` at half the cost, which matters at one call
    per change: it re-derives the field list on every call."""
    kind = type(record)
    values = {name: getattr(record, name) for name in _field_names(kind)}
    values.update(changes)
    return kind(**values)


_FIELD_NAMES: dict[type[Any], tuple[str, ...]] = {}


def _field_names(kind: type[Any]) -> tuple[str, ...]:
    names = _FIELD_NAMES.get(kind)
    if names is None:
        names = _FIELD_NAMES[kind] = tuple(f.name for f in dataclasses.fields(kind))
    return names


class Tables:
    """Plain dicts plus the indexes the queries need, so that claiming and
    timer lookups stay proportional to their answer, not to the store."""

    def __init__(self) -> None:
        self.stacks: dict[str, StackRecord] = {}
        self.templates: dict[int, tuple[str, str, str]] = {}
        self.resources: dict[int, ResourceRecord] = {}
        self.traversals: dict[str, TraversalRecord] = {}
        self.nodes: dict[tuple[str, str], NodeRecord] = {}
        self.ready: dict[str, dict[str, None]] = {}
        self.running: dict[tuple[str, str], None] = {}
        self.timers: dict[int, TimerRecord] = {}
        self.timers_by_node: dict[tuple[str, str], dict[int, None]] = {}
        self.events: dict[str, list[EventRecord]] = {}
        self.signals: dict[int, SignalRecord] = {}
        #: Workflow rows: table name -> id -> record (``workflows.TABLES``,
        #: ``scheduling.TABLES``).
        self.workflow_rows: dict[str, dict[str, Any]] = {
            t.name: {} for t in (*workflows.TABLES, *scheduling.TABLES)
        }
        self._ids: dict[str, int] = {}

    def next_id(self, table: str) -> int:
        """Ids are never reused, as with SQLite AUTOINCREMENT."""
        self._ids[table] = self._ids.get(table, 0) + 1
        return self._ids[table]

    # -- mutations, each recording its inverse ----------------------------------
    def put_stack(self, stack: StackRecord, undo: Undo) -> None:
        old = self.stacks.get(stack.id)
        self.stacks[stack.id] = stack
        undo.append(lambda: self._restore(self.stacks, stack.id, old))

    def put_resource(self, resource: ResourceRecord, undo: Undo) -> None:
        old = self.resources.get(resource.id)
        self.resources[resource.id] = resource
        undo.append(lambda: self._restore(self.resources, resource.id, old))

    def drop_resource(self, resource_id: int, undo: Undo) -> None:
        old = self.resources.pop(resource_id, None)
        if old is not None:
            undo.append(lambda: self._restore(self.resources, resource_id, old))

    def put_traversal(self, traversal: TraversalRecord, undo: Undo) -> None:
        old = self.traversals.get(traversal.id)
        self.traversals[traversal.id] = traversal
        undo.append(lambda: self._restore(self.traversals, traversal.id, old))

    def put_node(self, node: NodeRecord, undo: Undo) -> None:
        key = (node.traversal_id, node.key)
        old = self.nodes.get(key)
        self._set_node(key, node)
        undo.append(lambda: self._set_node(key, old))

    def put_signal(self, signal: SignalRecord, undo: Undo) -> None:
        old = self.signals.get(signal.id)
        self.signals[signal.id] = signal
        undo.append(lambda: self._restore(self.signals, signal.id, old))

    def add_timer(self, timer: TimerRecord, undo: Undo) -> None:
        self._set_timer(timer.id, timer)
        undo.append(lambda: self._set_timer(timer.id, None))

    def drop_timers(self, traversal_id: str, node_key: str, undo: Undo) -> None:
        for timer_id in list(self.timers_by_node.get((traversal_id, node_key), ())):
            old = self.timers[timer_id]
            self._set_timer(timer_id, None)
            undo.append(lambda old=old: self._set_timer(old.id, old))  # type: ignore[misc]

    def drop_timer(self, timer_id: int, undo: Undo) -> None:
        old = self.timers[timer_id]
        self._set_timer(timer_id, None)
        undo.append(lambda: self._set_timer(old.id, old))

    def put_row(self, table: str, record: Any, undo: Undo) -> None:
        rows = self.workflow_rows[table]
        old = rows.get(record.id)
        rows[record.id] = record
        undo.append(lambda: self._restore(rows, record.id, old))

    def drop_executions(self, execution_ids: set[str]) -> None:
        """Executions, their tasks and action executions, and the
        traversals they own with their nodes and timers (as SQL's cascades)."""
        r = self.workflow_rows
        for eid in execution_ids:
            r["workflow_executions"].pop(eid, None)
        tasks = {k for k, t in r["task_executions"].items() if t.execution_id in execution_ids}
        for k in tasks:
            del r["task_executions"][k]
        for a in [a for a, x in r["action_executions"].items() if x.task_execution_id in tasks]:
            del r["action_executions"][a]
        gone = {t.id for t in self.traversals.values() if t.execution_id in execution_ids}
        self._drop_traversals(gone)

    def add_event(self, event: EventRecord, undo: Undo) -> None:
        log = self.events.setdefault(event.stack_id, [])
        log.append(event)
        undo.append(lambda: log.remove(event))

    # -- index upkeep ----------------------------------------------------------------
    @staticmethod
    def _restore(table: dict[Any, Any], key: Any, old: Any) -> None:
        if old is None:
            table.pop(key, None)
        else:
            table[key] = old

    def _set_node(self, key: tuple[str, str], node: NodeRecord | None) -> None:
        traversal_id, node_key = key
        ready = self.ready.setdefault(traversal_id, {})
        ready.pop(node_key, None)
        self.running.pop(key, None)
        if node is None:
            self.nodes.pop(key, None)
            return
        self.nodes[key] = node
        if node.state == "ready":
            ready[node_key] = None
        elif node.state == "running":
            self.running[key] = None

    def _set_timer(self, timer_id: int, timer: TimerRecord | None) -> None:
        old = self.timers.pop(timer_id, None)
        if old is not None:
            self.timers_by_node.get((old.traversal_id, old.node_key), {}).pop(timer_id, None)
        if timer is not None:
            self.timers[timer_id] = timer
            self.timers_by_node.setdefault((timer.traversal_id, timer.node_key), {})[timer_id] = (
                None
            )

    # -- whole-stack removal (purge) ----------------------------------------------------
    def drop_stacks(self, stack_ids: set[str]) -> None:
        for sid in stack_ids:
            self.stacks.pop(sid, None)
            self.events.pop(sid, None)
        for rid in [r.id for r in self.resources.values() if r.stack_id in stack_ids]:
            del self.resources[rid]
        for gid in [g.id for g in self.signals.values() if g.stack_id in stack_ids]:
            del self.signals[gid]
        self._drop_traversals({t.id for t in self.traversals.values() if t.stack_id in stack_ids})

    def _drop_traversals(self, gone: set[str]) -> None:
        for key in [k for k in self.nodes if k[0] in gone]:
            self._set_node(key, None)
        for timer in [t for t in self.timers.values() if t.traversal_id in gone]:
            self._set_timer(timer.id, None)
        for tid in gone:
            del self.traversals[tid]
            self.ready.pop(tid, None)

"""``store.schedules`` of a memory store: the rows live in its tables (CRUD
through its workflow-row primitives), and a cron trigger fires under its
lock, the trigger's change and the execution's start together."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from datetime import datetime
from typing import Any, Protocol

from convection.store._fields import check_traversal
from convection.store._memory_tables import Tables, detach, replace
from convection.store._time import utcnow
from convection.store.api import NodeRecord, TraversalRecord
from convection.store.scheduling import CRON_TRIGGERS, CronFire, CronTriggerRecord, NamedSchedules
from convection.store.workflows import WorkflowRows


class _Starter(WorkflowRows, Protocol):
    def start_execution_locked(
        self,
        execution: Any,
        traversal: TraversalRecord | None,
        nodes: Sequence[NodeRecord],
        now: datetime,
    ) -> None: ...


class _Owner(Protocol):
    """What of the memory store this needs (not the class: no import cycle)."""

    _lock: threading.Lock
    _t: Tables


class MemoryCron:
    """``scheduling.CronRows`` of a memory store."""

    def __init__(self, store: _Owner, rows: _Starter) -> None:
        self._store = store
        self._rows = rows

    def _triggers(self) -> dict[str, CronTriggerRecord]:
        return self._store._t.workflow_rows[CRON_TRIGGERS.name]

    def due(self, now: datetime, limit: int) -> list[CronTriggerRecord]:
        with self._store._lock:
            found = [t for t in self._triggers().values() if t.next_execution_time <= now]
        found.sort(key=lambda t: (t.next_execution_time, t.id))
        return [detach(t) for t in found[:limit]]

    def fire(self, fire: CronFire) -> bool:
        if fire.traversal is not None:
            check_traversal(fire.traversal, fire.nodes, {})
        now = utcnow()
        with self._store._lock:
            triggers = self._triggers()
            old = triggers.get(fire.trigger_id)
            if old is None or old.next_execution_time != fire.due:
                return False
            if fire.execution is not None:
                # First, so that a refused start leaves the trigger as it was.
                self._rows.start_execution_locked(fire.execution, fire.traversal, fire.nodes, now)
            if fire.next_time is None:
                del triggers[fire.trigger_id]
            else:
                triggers[fire.trigger_id] = replace(
                    old,
                    {
                        "next_execution_time": fire.next_time,
                        "remaining_executions": fire.remaining,
                        "updated_at": now,
                    },
                )
            return True


class MemorySchedules(NamedSchedules):
    """``store.schedules`` of a memory store."""

    def __init__(self, store: _Owner, rows: _Starter) -> None:
        super().__init__(rows, MemoryCron(store, rows))
